// Uncompressed BMP images (24- and 32-bit) and their conversion to a model
// input: bilinear resize to the input's height and width, then to its type.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "delegato/interpreter.h"

namespace delegato::tools {

struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // row-major, top row first, 3 bytes per pixel
};

RgbImage ReadBmp(const std::string& path);
// The same on a file's bytes; `label` names them in errors.
RgbImage ParseBmp(std::span<const uint8_t> bytes, const std::string& label);

// Fills `input` (NHWC [1,H,W,C] with C = 1 or 3, or NCHW [1,3,H,W]) from the
// image. Pixel conversion by input type:
//   UINT8: the pixel value (0..255), as Coral/TFLite image models expect;
//   INT8: pixel - 128;
//   FLOAT32: pixel / 127.5 - 1 (the [-1, 1] range of MobileNet-style models).
// C = 1 uses luminance 0.299 R + 0.587 G + 0.114 B. Throws Error otherwise.
void FillInputFromImage(const RgbImage& image, const TensorView& input);

}  // namespace delegato::tools
