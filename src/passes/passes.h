// The passes delegato ships (see docs/fix.md for what each one changes).
#pragma once

#include <memory>

#include "passes/pass.h"

namespace delegato::passes {

// int8 activations -> uint8 (zero point + 128, same scale); per-channel int8
// weights -> per-tensor uint8 (requantization error reported per layer);
// QUANTIZE/DEQUANTIZE nodes that become identities removed.
std::unique_ptr<Pass> MakeInt8ToUint8Pass();
// The reverse, for int8-only targets: uint8 activations -> int8 (zero point
// - 128); asymmetric uint8 weights -> symmetric int8 (per channel for convolutions).
std::unique_ptr<Pass> MakeUint8ToInt8Pass();
// per-channel int8 weights -> per-tensor symmetric int8.
std::unique_ptr<Pass> MakePerTensorWeightsPass();
// DEQUANTIZE -> float op -> QUANTIZE replaced by the quantized op.
std::unique_ptr<Pass> MakeFloatIslandsPass();
// ARG_MAX / ARG_MIN int64 output -> int32.
std::unique_ptr<Pass> MakeArgMaxInt32Pass();
// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR align_corners / half_pixel_centers
// to what the target accepts (exactly when the geometry allows it).
std::unique_ptr<Pass> MakeResizeFlagsPass();
// AVERAGE_POOL_2D with a window over the target's limit -> MEAN or a chain of pools.
std::unique_ptr<Pass> MakeAvgPoolSplitPass();
// Identity and back-to-back requantizations folded.
std::unique_ptr<Pass> MakeFoldRequantizePass();

// Whether subgraph 0 has DEQUANTIZE -> float op(s) -> QUANTIZE islands.
bool HasFloatIslands(const ModelDef& model);

// Shared by the passes: removes QUANTIZE nodes whose input and output have the
// same type and parameters, recording each removal in `result`.
void RemoveIdentityQuantizes(ModelDef& model, PassResult* result);

}  // namespace delegato::passes
