// Comparing two models that should compute the same thing (a model and its
// rewrite): both run on the same inputs through delegato's CPU kernels, every
// output compared. Inputs are matched by position; when an input's type
// differs (int8 vs uint8 I/O) the same real values are fed. Used by
// `delegato fix`; usable by any tool that compares a model with a variant.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "delegato/interpreter.h"
#include "model/model.h"
#include "tools/image.h"

namespace delegato::tools {

struct OutputComparison {
  std::string name;
  std::string type_a, type_b;     // "uint8", "int64", ...
  int64_t elements = 0;           // per run, times runs
  int64_t equal = 0;              // elements whose real values are equal
  double max_abs = 0;             // real units (dequantized)
  double mean_abs = 0;
  double max_steps = 0;           // in quantization steps of model A's output (raw units otherwise)
  double reference_range = 0;     // max - min of model A's output (real units)
  bool integer_output = false;    // indices / labels (int32/int64/bool): compare by agreement
  double agreement() const { return elements ? static_cast<double>(equal) / elements : 1.0; }
  // The number --tolerance bounds: 1 - agreement for integer outputs, else
  // mean |diff| relative to A's output range.
  double error() const;
};

struct RandomComparison {
  int runs = 0;
  uint64_t seed = 0;
  std::vector<OutputComparison> outputs;
};

// Runs both models `runs` times on seeded random inputs (8-bit over the full
// range, float in [-1, 1), as delegato run does).
RandomComparison CompareOnRandomInputs(std::shared_ptr<const ModelDef> a, std::shared_ptr<const ModelDef> b,
                                       uint64_t seed, int runs, int num_threads = 1);

struct ImageComparison {
  enum class Kind { kClassifier, kSegmentation, kKeypoints, kOther } kind = Kind::kOther;
  std::vector<OutputComparison> outputs;
  // kClassifier (output 0 = class scores): top-1 of each model, and the score
  // of A's top-1 class in each (dequantized).
  int top1_a = -1, top1_b = -1;
  double score_a = 0, score_b = 0;
  // kSegmentation (output 0 = integer labels per pixel).
  int64_t pixels = 0, pixels_agreeing = 0;
  double pixel_agreement() const { return pixels ? static_cast<double>(pixels_agreeing) / pixels : 1.0; }
  // kKeypoints (output 0 = [..., K, 3] float rows of y, x, score in [0, 1]):
  // how far each keypoint moved, in input pixels, and its score change.
  int keypoints = 0;
  double mean_shift_px = 0, max_shift_px = 0, max_score_change = 0;
  int moved = 0;  // keypoints that moved more than 2 input pixels
  int confident = 0;  // keypoints with score >= 0.3 in model A
  double confident_max_shift_px = 0;
};

ImageComparison CompareOnImage(std::shared_ptr<const ModelDef> a, std::shared_ptr<const ModelDef> b,
                               const RgbImage& image, int num_threads = 1);

// "max 1.2 (3 steps), mean 0.01, 99.1% equal"
std::string FormatComparison(const OutputComparison& c);

}  // namespace delegato::tools
