// Binary element-wise arithmetic with numpy-style broadcasting: ADD, SUB, MUL,
// DIV, FLOOR_DIV (float, integer and 8/16-bit quantized), plus SQRT. The
// per-element formulas are TFLite's reference ones; the broadcast walk is our
// own (any walk that visits every output once gives the same values).
// Functions work on a flat output range [begin, end) so callers can split the
// work across threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"

namespace delegato::reference {

constexpr int kMaxBroadcastRank = 8;

// Output shape of broadcasting a against b: shapes are aligned at their last
// dimension and a dimension of 1 stretches to match the other. Returns false
// when the shapes are incompatible or deeper than kMaxBroadcastRank.
inline bool BroadcastShapes(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                            std::vector<int32_t>* out) {
  const size_t rank = std::max(a.size(), b.size());
  if (rank > static_cast<size_t>(kMaxBroadcastRank)) return false;
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      (*out)[i] = da;
    } else if (da == 1) {
      (*out)[i] = db;
    } else {
      return false;
    }
  }
  return true;
}

// How to walk two broadcast inputs along a row-major output. Dimensions of
// extent 1 are dropped and neighbours with the same broadcast pattern merged,
// so equal shapes become a single contiguous run.
struct BroadcastPlan {
  int rank = 1;
  int64_t dims[kMaxBroadcastRank] = {1};
  int64_t a_strides[kMaxBroadcastRank] = {1};  // 0 where a is broadcast
  int64_t b_strides[kMaxBroadcastRank] = {1};
  int64_t num_elements = 1;
};

// `out` must be BroadcastShapes(a, b).
inline BroadcastPlan MakeBroadcastPlan(const std::vector<int32_t>& a,
                                       const std::vector<int32_t>& b,
                                       const std::vector<int32_t>& out) {
  const size_t rank = out.size();
  int64_t dims[kMaxBroadcastRank];
  bool a_broadcast[kMaxBroadcastRank], b_broadcast[kMaxBroadcastRank];
  int merged = 0;
  int64_t total = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = out[i];
    total *= d;
    if (d == 1) continue;
    const int32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    const bool ab = da == 1, bb = db == 1;
    if (merged > 0 && a_broadcast[merged - 1] == ab && b_broadcast[merged - 1] == bb) {
      dims[merged - 1] *= d;
    } else {
      dims[merged] = d;
      a_broadcast[merged] = ab;
      b_broadcast[merged] = bb;
      ++merged;
    }
  }
  BroadcastPlan plan;
  plan.num_elements = total;
  if (merged == 0) return plan;  // a single element (or a scalar)
  plan.rank = merged;
  int64_t a_stride = 1, b_stride = 1;
  for (int i = merged - 1; i >= 0; --i) {
    plan.dims[i] = dims[i];
    plan.a_strides[i] = a_broadcast[i] ? 0 : a_stride;
    plan.b_strides[i] = b_broadcast[i] ? 0 : b_stride;
    if (!a_broadcast[i]) a_stride *= dims[i];
    if (!b_broadcast[i]) b_stride *= dims[i];
  }
  return plan;
}

// A position in a broadcast walk: the output's multi-index and each input's
// element offset there. Walks move along the innermost (merged) dimension,
// or by whole rows of it, and carry into the outer dimensions.
struct BroadcastCursor {
  const BroadcastPlan& plan;
  int64_t index[kMaxBroadcastRank];
  int64_t a_offset = 0, b_offset = 0;

  BroadcastCursor(const BroadcastPlan& p, int64_t position) : plan(p) {
    for (int d = plan.rank - 1; d >= 0; --d) {
      index[d] = position % plan.dims[d];
      position /= plan.dims[d];
      a_offset += index[d] * plan.a_strides[d];
      b_offset += index[d] * plan.b_strides[d];
    }
  }
  int last() const { return plan.rank - 1; }
  // Elements left in the current innermost row.
  int64_t RowLeft() const { return plan.dims[last()] - index[last()]; }
  // `count` elements along the innermost dimension, at most RowLeft().
  void Advance(int64_t count) { Move(last(), count); }
  // `rows` whole innermost rows from a row start (rank >= 2), at most the rows
  // left in the dimension before it.
  void AdvanceRows(int64_t rows) { Move(last() - 1, rows); }

 private:
  void Move(int dim, int64_t steps) {
    a_offset += steps * plan.a_strides[dim];
    b_offset += steps * plan.b_strides[dim];
    index[dim] += steps;
    for (int d = dim; d > 0 && index[d] == plan.dims[d]; --d) {
      a_offset -= index[d] * plan.a_strides[d];
      b_offset -= index[d] * plan.b_strides[d];
      index[d] = 0;
      ++index[d - 1];
      a_offset += plan.a_strides[d - 1];
      b_offset += plan.b_strides[d - 1];
    }
  }
};

// Walks the flat output indices [begin, end) in runs along the innermost
// (merged) dimension: run(a_offset, a_stride, b_offset, b_stride, position,
// count) covers outputs [position, position + count), input element k of the
// run at a_offset + k * a_stride (stride 0: one broadcast value).
template <class Run>
void ForEachBroadcastRun(const BroadcastPlan& plan, int64_t begin, int64_t end, Run run) {
  if (begin >= end) return;
  BroadcastCursor at(plan, begin);
  const int64_t sa = plan.a_strides[at.last()], sb = plan.b_strides[at.last()];
  for (int64_t position = begin; position < end;) {
    const int64_t count = std::min(at.RowLeft(), end - position);
    run(at.a_offset, sa, at.b_offset, sb, position, count);
    position += count;
    at.Advance(count);
  }
}

// out[i] = op(a[..], b[..]) for the flat output indices i in [begin, end).
template <class TA, class TB, class TO, class Op>
void BroadcastBinary(const BroadcastPlan& plan, const TA* a, const TB* b, TO* out, int64_t begin,
                     int64_t end, Op op) {
  ForEachBroadcastRun(plan, begin, end,
                      [&](int64_t a_offset, int64_t sa, int64_t b_offset, int64_t sb,
                          int64_t position, int64_t count) {
                        const TA* pa = a + a_offset;
                        const TB* pb = b + b_offset;
                        TO* po = out + position;
                        for (int64_t k = 0; k < count; ++k) po[k] = op(pa[k * sa], pb[k * sb]);
                      });
}

// min(max(x, lo), hi) with TFLite's argument order (a NaN x stays NaN).
template <class T>
inline T ClampWithMinMax(T x, T lo, T hi) {
  const T raised = (x < lo) ? lo : x;
  return (hi < raised) ? hi : raised;
}

// Wrapping integer arithmetic (TFLite's int32 ADD/SUB/MUL overflow this way).
template <class T>
inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class T>
inline T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <class T>
inline T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// Clamp range of an unquantized (float or integer) op.
template <class T>
struct ActivationRange {
  T min = std::numeric_limits<T>::lowest();
  T max = std::numeric_limits<T>::max();
};

// Parameters of quantized ADD/SUB: both inputs are rescaled to a common
// scale (2 * max input scale) with `left_shift` bits of headroom, added in
// int32, and the sum rescaled to the output.
struct QuantizedAddParams {
  int32_t input1_offset = 0, input2_offset = 0;  // -zero_point
  int32_t output_offset = 0;                     // +zero_point
  int left_shift = 20;
  int32_t input1_multiplier = 0, input2_multiplier = 0, output_multiplier = 0;
  int input1_shift = 0, input2_shift = 0, output_shift = 0;  // <= 0
  int32_t act_min = 0, act_max = 0;
};

template <class T>
inline T QuantizedAddSub(int32_t a, int32_t b, const QuantizedAddParams& p, bool subtract) {
  const int32_t shifted_a = (p.input1_offset + a) * (1 << p.left_shift);
  const int32_t shifted_b = (p.input2_offset + b) * (1 << p.left_shift);
  const int32_t scaled_a = quant::MultiplyByQuantizedMultiplierSmallerThanOneExp(
      shifted_a, p.input1_multiplier, p.input1_shift);
  const int32_t scaled_b = quant::MultiplyByQuantizedMultiplierSmallerThanOneExp(
      shifted_b, p.input2_multiplier, p.input2_shift);
  const int32_t raw = subtract ? scaled_a - scaled_b : scaled_a + scaled_b;
  const int32_t output = quant::MultiplyByQuantizedMultiplierSmallerThanOneExp(
                             raw, p.output_multiplier, p.output_shift) +
                         p.output_offset;
  return static_cast<T>(std::min(p.act_max, std::max(p.act_min, output)));
}

// Parameters of quantized MUL and DIV: one multiplier from the three scales.
struct QuantizedMulDivParams {
  int32_t input1_offset = 0, input2_offset = 0;  // -zero_point
  int32_t output_offset = 0;                     // +zero_point
  int32_t output_multiplier = 0;
  int output_shift = 0;
  int32_t act_min = 0, act_max = 0;
};

template <class T>
inline T QuantizedMul(int32_t a, int32_t b, const QuantizedMulDivParams& p) {
  const int32_t product = (p.input1_offset + a) * (p.input2_offset + b);
  const int32_t output =
      p.output_offset + quant::MultiplyByQuantizedMultiplier(product, p.output_multiplier,
                                                             p.output_shift);
  return static_cast<T>(std::min(p.act_max, std::max(p.act_min, output)));
}

// RoundingDivideByPOT for any exponent. Small numerators in quantized DIV
// push TFLite's exponent past 31 (and extreme scales below 0), where its
// shifts are undefined in C++; on x86 shift counts wrap (mod 64 for the
// 64-bit mask, mod 32 for the 32-bit shift), and we reproduce exactly that.
inline int32_t RoundingDivideByPOTWrappedShift(int32_t x, int exponent) {
  if (exponent >= 0 && exponent <= 31) return quant::RoundingDivideByPOT(x, exponent);
  const int32_t mask =
      static_cast<int32_t>(static_cast<uint32_t>((uint64_t{1} << (exponent & 63)) - 1));
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> (exponent & 31)) + (remainder > threshold ? 1 : 0);
}

// Quantized a / b (b != its zero point): a fixed-point reciprocal of the
// divisor, scaled by the output multiplier.
template <class T>
inline T QuantizedDiv(int32_t a, int32_t b, const QuantizedMulDivParams& p) {
  int32_t numerator = p.input1_offset + a;
  int32_t divisor = p.input2_offset + b;
  if (divisor < 0) {
    // The reciprocal must be positive to serve as a multiplier.
    numerator = -numerator;
    divisor = -divisor;
  }
  int recip_shift;
  const int32_t divisor_inverse = fixed_point::GetReciprocal(divisor, 31, &recip_shift);
  const int headroom = fixed_point::CountLeadingSignBits(numerator);
  const int32_t unscaled_quotient =
      quant::MultiplyByQuantizedMultiplierGreaterThanOne(numerator, divisor_inverse, headroom);
  const int total_shift = p.output_shift - recip_shift - headroom;
  const int32_t output =
      p.output_offset +
      RoundingDivideByPOTWrappedShift(
          quant::SaturatingRoundingDoublingHighMul(unscaled_quotient, p.output_multiplier),
          -total_shift);
  return static_cast<T>(std::min(p.act_max, std::max(p.act_min, output)));
}

// Integer division truncating toward zero; INT_MIN / -1 saturates to INT_MAX
// instead of trapping (what LiteRT's reference kernel gives). The divisor must
// not be zero.
template <class T>
inline T IntegerDivide(T a, T b) {
  if (b == -1) return a == std::numeric_limits<T>::min() ? std::numeric_limits<T>::max() : T(-a);
  return a / b;
}

// floor(a / b) computed in double, as TFLite does. Integer results outside
// the type's range give the type's minimum (the x86 conversion result).
template <class T>
inline T FloorDivide(T a, T b) {
  const double q = std::floor(static_cast<double>(a) / static_cast<double>(b));
  if constexpr (std::is_integral_v<T>) {
    if (!(q >= static_cast<double>(std::numeric_limits<T>::min()) &&
          q <= static_cast<double>(std::numeric_limits<T>::max())))
      return std::numeric_limits<T>::min();
  }
  return static_cast<T>(q);
}

// kSquaredDifference: (x - y) * (x - y), SQUARED_DIFFERENCE (no activation;
// its callers pass the widest range, which leaves every value as it is).
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kFloorDiv, kSquaredDifference };

// Unquantized float/integer binary op with a clamp (integer DIV/FLOOR_DIV
// require non-zero divisors, which the caller checks first).
template <class T>
void BinaryArithmetic(BinaryOp op, const BroadcastPlan& plan, const T* a, const T* b, T* out,
                      ActivationRange<T> act, int64_t begin, int64_t end) {
  const T lo = act.min, hi = act.max;
  switch (op) {
    case BinaryOp::kAdd:
      BroadcastBinary(plan, a, b, out, begin, end,
                      [=](T x, T y) { return ClampWithMinMax(WrapAdd(x, y), lo, hi); });
      break;
    case BinaryOp::kSub:
      BroadcastBinary(plan, a, b, out, begin, end,
                      [=](T x, T y) { return ClampWithMinMax(WrapSub(x, y), lo, hi); });
      break;
    case BinaryOp::kMul:
      BroadcastBinary(plan, a, b, out, begin, end,
                      [=](T x, T y) { return ClampWithMinMax(WrapMul(x, y), lo, hi); });
      break;
    case BinaryOp::kDiv:
      if constexpr (std::is_integral_v<T>) {
        BroadcastBinary(plan, a, b, out, begin, end,
                        [=](T x, T y) { return ClampWithMinMax(IntegerDivide(x, y), lo, hi); });
      } else {
        BroadcastBinary(plan, a, b, out, begin, end,
                        [=](T x, T y) { return ClampWithMinMax(x / y, lo, hi); });
      }
      break;
    case BinaryOp::kFloorDiv:
      BroadcastBinary(plan, a, b, out, begin, end, [](T x, T y) { return FloorDivide(x, y); });
      break;
    case BinaryOp::kSquaredDifference:
      BroadcastBinary(plan, a, b, out, begin, end, [=](T x, T y) {
        const T d = WrapSub(x, y);
        return ClampWithMinMax(WrapMul(d, d), lo, hi);
      });
      break;
  }
}

template <class T>
void QuantizedAdd(const BroadcastPlan& plan, const T* a, const T* b, T* out,
                  const QuantizedAddParams& p, bool subtract, int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end, [&p, subtract](T x, T y) {
    return QuantizedAddSub<T>(x, y, p, subtract);
  });
}

template <class T>
void QuantizedMulBroadcast(const BroadcastPlan& plan, const T* a, const T* b, T* out,
                           const QuantizedMulDivParams& p, int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end,
                  [&p](T x, T y) { return QuantizedMul<T>(x, y, p); });
}

template <class T>
void QuantizedDivBroadcast(const BroadcastPlan& plan, const T* a, const T* b, T* out,
                           const QuantizedMulDivParams& p, int64_t begin, int64_t end) {
  BroadcastBinary(plan, a, b, out, begin, end,
                  [&p](T x, T y) { return QuantizedDiv<T>(x, y, p); });
}

// True when any element equals `zero` (a divisor check).
template <class T>
bool ContainsValue(const T* data, int64_t n, T zero) {
  for (int64_t i = 0; i < n; ++i)
    if (data[i] == zero) return true;
  return false;
}

inline void Sqrt(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = std::sqrt(in[i]);
}

}  // namespace delegato::reference
