// Reading and writing tensor elements as numbers, whatever their type, for
// measurements and comparisons (not for kernels: these are slow and generic).
#pragma once

#include <cstdint>
#include <random>

#include "delegato/interpreter.h"

namespace delegato::passes {

int64_t ElementCount(const TensorView& t);
// The stored value (integers exact; floats truncated toward zero for int64 use).
double RawValue(const TensorView& t, int64_t i);
// The real value: scale * (q - zero_point) for quantized tensors, else the raw value.
double RealValue(const TensorView& t, int64_t i);
// Stores `real` (quantized with t's parameters, rounded and clamped, for quantized types).
void SetRealValue(const TensorView& t, int64_t i, double real);
// Random values: 8-bit types over their full range, float32 in [-1, 1),
// int32/int64 in [0, 10), int16 over its full range, bool 0/1.
void FillRandom(const TensorView& t, std::mt19937_64& rng);
// Copies `from` into `to`: bytes when the types and quantization match, real values otherwise.
void CopyValues(const TensorView& from, const TensorView& to);

}  // namespace delegato::passes
