// Measuring what a rewrite costs: run a region of a model (one op, or the
// few nodes that replace it) and its rewritten counterpart on the same
// seeded random inputs through delegato's reference kernels, and compare the
// outputs in real (dequantized) units and in quantization steps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace delegato::passes {

// A connected part of subgraph 0: its nodes (in execution order), the
// activation tensors it reads and the tensors it produces for the comparison.
struct Region {
  const ModelDef* model = nullptr;
  std::vector<int> nodes;
  std::vector<int> inputs;   // non-constant tensors fed with random data
  std::vector<int> outputs;  // compared pairwise with the other region's outputs
  std::vector<int> nonzero;  // inputs (by position) that must not hold a real zero (divisors)
};

// A standalone model made of the region's nodes: constants copied, `inputs`
// as graph inputs, `outputs` as graph outputs.
std::shared_ptr<ModelDef> ExtractRegion(const Region& region);

struct OutputDiff {
  std::string name;
  int64_t elements = 0;
  int64_t differing = 0;      // elements whose raw values differ
  double max_abs = 0;         // real units (dequantized when quantized)
  double mean_abs = 0;
  double max_steps = 0;       // in quantization steps of the first model's output (raw units otherwise)
  double reference_range = 0; // max - min of the first model's output (real units)
};

// Runs both regions `runs` times on the same random inputs (seeded) and
// accumulates the differences per output. Inputs are matched by position;
// when their types differ the value is carried over in real units.
std::vector<OutputDiff> CompareRegions(const Region& a, const Region& b, uint64_t seed,
                                       int runs = 3);

// "identical" or "max 1 step (0.1757), 2.1% of elements differ"
std::string DescribeDiff(const OutputDiff& diff);

}  // namespace delegato::passes
