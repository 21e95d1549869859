// Binary math and logic with broadcasting: comparisons (EQUAL, NOT_EQUAL,
// LESS, LESS_EQUAL, GREATER, GREATER_EQUAL; 8/16-bit inputs rescaled to a
// common fixed-point scale first, as TFLite does), MINIMUM, MAXIMUM,
// SQUARED_DIFFERENCE, POW, FLOOR_MOD, LOGICAL_AND/OR/NOT and SELECT /
// SELECT_V2, RIGHT_SHIFT, BITWISE_XOR, ATAN2, ADD_N. Functions work on a
// flat output range [begin, end).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/quantization.h"
#include "kernels/reference/elementwise.h"

namespace delegato::reference {

enum class CompareOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };

template <class T>
inline bool CompareValues(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::kEqual: return a == b;
    case CompareOp::kNotEqual: return a != b;
    case CompareOp::kLess: return a < b;
    case CompareOp::kLessEqual: return a <= b;
    case CompareOp::kGreater: return a > b;
    case CompareOp::kGreaterEqual: return a >= b;
  }
  return false;
}

template <class T>
void Compare(CompareOp op, const BroadcastPlan& plan, const T* a, const T* b, bool* out,
             int64_t begin, int64_t end) {
  switch (op) {
#define DLG_COMPARE_CASE(name)                                                           \
  case CompareOp::name:                                                                  \
    BroadcastBinary(plan, a, b, out, begin, end,                                         \
                    [](T x, T y) { return CompareValues(CompareOp::name, x, y); });      \
    break;
    DLG_COMPARE_CASE(kEqual)
    DLG_COMPARE_CASE(kNotEqual)
    DLG_COMPARE_CASE(kLess)
    DLG_COMPARE_CASE(kLessEqual)
    DLG_COMPARE_CASE(kGreater)
    DLG_COMPARE_CASE(kGreaterEqual)
#undef DLG_COMPARE_CASE
  }
}

// Both quantized inputs go to a common scale: (q - zp) << 8, times the input's
// own scale as a Q31 multiplier (TFLite rescales by the scale itself, so only
// scales below 1 are representable).
struct QuantizedCompareParams {
  int32_t input1_offset = 0, input2_offset = 0;  // -zero_point
  int32_t input1_multiplier = 0, input2_multiplier = 0;
  int input1_shift = 0, input2_shift = 0;  // <= 0
};

inline int32_t RescaleForCompare(int32_t q, int32_t offset, int32_t multiplier, int shift) {
  constexpr int kLeftShift = 8;
  return quant::MultiplyByQuantizedMultiplierSmallerThanOneExp((offset + q) * (1 << kLeftShift),
                                                               multiplier, shift);
}

template <class T>
void QuantizedCompare(CompareOp op, const QuantizedCompareParams& p, const BroadcastPlan& plan,
                      const T* a, const T* b, bool* out, int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [op, &p](T x, T y) {
    return CompareValues(
        op, RescaleForCompare(x, p.input1_offset, p.input1_multiplier, p.input1_shift),
        RescaleForCompare(y, p.input2_offset, p.input2_multiplier, p.input2_shift));
  });
}

// ------------------------------------------------------------ MINIMUM / MAXIMUM

template <class T>
void Maximum(const BroadcastPlan& plan, const T* a, const T* b, T* out, int64_t begin,
             int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](T x, T y) { return x > y ? x : y; });
}

template <class T>
void Minimum(const BroadcastPlan& plan, const T* a, const T* b, T* out, int64_t begin,
             int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](T x, T y) { return x < y ? x : y; });
}

// ------------------------------------------------------------ SQUARED_DIFFERENCE

template <class T>
void SquaredDifference(const BroadcastPlan& plan, const T* a, const T* b, T* out, int64_t begin,
                       int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](T x, T y) {
    const T d = WrapSub(x, y);
    return WrapMul(d, d);
  });
}

// int8: inputs rescaled to 2 * max(input scale) with 7 bits of headroom, the
// difference squared in int32 and rescaled to the output.
struct QuantizedSquaredDifferenceParams {
  int32_t input1_offset = 0, input2_offset = 0;  // -zero_point
  int32_t output_offset = 0;
  int32_t input1_multiplier = 0, input2_multiplier = 0, output_multiplier = 0;
  int input1_shift = 0, input2_shift = 0, output_shift = 0;
};

// One input's rescale: (x - zero_point) << 7 times its below-one multiplier.
inline int32_t SquaredDifferenceRescale(int8_t x, int32_t offset, int32_t multiplier, int shift) {
  constexpr int kLeftShift = 7;
  return quant::MultiplyByQuantizedMultiplierSmallerThanOneExp((offset + x) * (1 << kLeftShift),
                                                               multiplier, shift);
}

// The output from the difference of the two rescaled inputs.
inline int8_t SquaredDifferenceOutput(const QuantizedSquaredDifferenceParams& p, int32_t diff) {
  const int32_t result = quant::MultiplyByQuantizedMultiplierSmallerThanOneExp(
                             diff * diff, p.output_multiplier, p.output_shift) +
                         p.output_offset;
  return static_cast<int8_t>(std::clamp<int32_t>(result, -128, 127));
}

inline void QuantizedSquaredDifference(const QuantizedSquaredDifferenceParams& p,
                                       const BroadcastPlan& plan, const int8_t* a,
                                       const int8_t* b, int8_t* out, int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [&p](int8_t x, int8_t y) {
    return SquaredDifferenceOutput(
        p, SquaredDifferenceRescale(x, p.input1_offset, p.input1_multiplier, p.input1_shift) -
               SquaredDifferenceRescale(y, p.input2_offset, p.input2_multiplier, p.input2_shift));
  });
}

// ------------------------------------------------------------ POW, FLOOR_MOD

// Integer power by repeated squaring (the exponent must be >= 0), wrapping.
inline int32_t IntegerPower(int32_t base, int32_t exponent) {
  int32_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    exponent >>= 1;
  }
  return result;
}

inline void PowFloat(const BroadcastPlan& plan, const float* a, const float* b, float* out,
                     int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](float x, float y) { return std::pow(x, y); });
}

inline void PowInt32(const BroadcastPlan& plan, const int32_t* a, const int32_t* b, int32_t* out,
                     int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, IntegerPower);
}

// The remainder with the divisor's sign (Python's %). Integer divisors must
// not be zero.
template <class T>
inline T FloorMod(T x, T y) {
  T mod;
  if constexpr (std::is_integral_v<T>) {
    if (y == -1) return 0;  // also avoids INT_MIN % -1
    mod = static_cast<T>(x % y);
  } else {
    mod = std::fmod(x, y);
  }
  if (mod != 0 && ((y < 0) != (mod < 0))) mod = static_cast<T>(mod + y);
  return mod;
}

template <class T>
void FloorModBroadcast(const BroadcastPlan& plan, const T* a, const T* b, T* out, int64_t begin,
                       int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](T x, T y) { return FloorMod(x, y); });
}

// ------------------------------------------------------------ bitwise, ATAN2, ADD_N

// x >> y with the shift clamped to [0, bits - 1]; arithmetic for signed types.
template <class T>
inline T RightShift(T x, T y) {
  constexpr int kMaxShift = static_cast<int>(sizeof(T) * 8 - 1);
  int shift = 0;
  if constexpr (std::is_signed_v<T>) {
    shift = y < 0 ? 0 : (y > kMaxShift ? kMaxShift : static_cast<int>(y));
  } else {
    shift = y > static_cast<T>(kMaxShift) ? kMaxShift : static_cast<int>(y);
  }
  return static_cast<T>(x >> shift);
}

template <class T>
void RightShiftBroadcast(const BroadcastPlan& plan, const T* a, const T* b, T* out, int64_t begin,
                         int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](T x, T y) { return RightShift(x, y); });
}

template <class T>
void BitwiseXor(const BroadcastPlan& plan, const T* a, const T* b, T* out, int64_t begin,
                int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](T x, T y) { return static_cast<T>(x ^ y); });
}

inline void Atan2(const float* y, const float* x, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = std::atan2(y[i], x[i]);
}

// out[i] = sum of inputs[k][i], summed in input order from 0.
template <class T>
void AddN(const T* const* inputs, int count, T* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    T sum = 0;
    for (int k = 0; k < count; ++k) sum = WrapAdd(sum, inputs[k][i]);
    out[i] = sum;
  }
}

// ------------------------------------------------------------ logic

inline void LogicalAnd(const BroadcastPlan& plan, const bool* a, const bool* b, bool* out,
                       int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](bool x, bool y) { return x && y; });
}
inline void LogicalOr(const BroadcastPlan& plan, const bool* a, const bool* b, bool* out,
                      int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [](bool x, bool y) { return x || y; });
}
inline void LogicalNot(const bool* in, bool* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = !in[i];
}

// ------------------------------------------------------------ SELECT

// Strides of three inputs broadcast to one output shape (0 where broadcast).
struct Broadcast3Plan {
  int rank = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t strides[3][kMaxBroadcastRank] = {};
  int64_t num_elements = 1;
};

inline Broadcast3Plan MakeBroadcast3Plan(const std::vector<int32_t>* inputs[3],
                                         const std::vector<int32_t>& out) {
  Broadcast3Plan plan;
  plan.rank = static_cast<int>(out.size());
  for (int d = 0; d < plan.rank; ++d) {
    plan.dims[d] = out[d];
    plan.num_elements *= out[d];
  }
  for (int k = 0; k < 3; ++k) {
    const std::vector<int32_t>& dims = *inputs[k];
    const int offset = plan.rank - static_cast<int>(dims.size());
    int64_t stride = 1;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const int64_t extent = d < offset ? 1 : dims[d - offset];
      plan.strides[k][d] = extent == 1 ? 0 : stride;
      stride *= extent;
    }
  }
  return plan;
}

// out[i] = cond ? x : y over a three-way broadcast.
template <class T>
void Select(const Broadcast3Plan& plan, const bool* cond, const T* x, const T* y, T* out,
            int64_t begin, int64_t end) {
  if (plan.rank == 0) {
    if (begin < end) out[0] = cond[0] ? x[0] : y[0];
    return;
  }
  int64_t index[kMaxBroadcastRank];
  int64_t rest = begin;
  for (int d = plan.rank - 1; d >= 0; --d) {
    index[d] = rest % plan.dims[d];
    rest /= plan.dims[d];
  }
  for (int64_t i = begin; i < end; ++i) {
    int64_t oc = 0, ox = 0, oy = 0;
    for (int d = 0; d < plan.rank; ++d) {
      oc += index[d] * plan.strides[0][d];
      ox += index[d] * plan.strides[1][d];
      oy += index[d] * plan.strides[2][d];
    }
    out[i] = cond[oc] ? x[ox] : y[oy];
    for (int d = plan.rank - 1; d >= 0; --d) {
      if (++index[d] < plan.dims[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace delegato::reference
