// BATCH_MATMUL reference kernels, bit-exact with TFLite's reference
// BatchMatMul: float, int8 and int16 (requantized with one multiplier), and
// int8 inputs with a raw int32 output.
//
// out[b][m][n] = sum over k (ascending) of lhs[b][m][k] * rhs[b][k][n], where
// adj_x / adj_y say that lhs / rhs are stored with their last two dimensions
// swapped, and batch dimensions broadcast (numpy rules, up to 3 of them after
// extending both shapes to rank 5). Float sums start at 0 and add terms in k
// order; quantized sums accumulate (lhs - lhs_zp) * (rhs - rhs_zp) in 32 bits
// (int8) or 64 bits (int16), then requantize, add the output zero point and
// clamp to the type's range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/quantization.h"
#include "kernels/reference/transpose_conv.h"

namespace delegato::reference {

struct BatchMatMulGeometry {
  // Batch dimensions of lhs, rhs and output, extended to 3 (leading 1s).
  int32_t lhs_batch[3] = {1, 1, 1}, rhs_batch[3] = {1, 1, 1}, out_batch[3] = {1, 1, 1};
  int32_t rows = 0;   // M
  int32_t cols = 0;   // N
  int32_t depth = 0;  // K
  bool adj_x = false, adj_y = false;
};

struct BatchMatMulQuantParams {
  int32_t lhs_offset = 0, rhs_offset = 0;  // -zero points
  int32_t output_offset = 0;
  int32_t multiplier = 0;
  int shift = 0;
  int32_t act_min = 0, act_max = 0;
};

// Calls fn(lhs_matrix, rhs_matrix, out_matrix) for every output batch; the
// pointers are element offsets into the three tensors.
template <class Fn>
void ForEachBatchMatrix(const BatchMatMulGeometry& g, const Fn& fn) {
  const int64_t lhs_size = static_cast<int64_t>(g.rows) * g.depth;
  const int64_t rhs_size = static_cast<int64_t>(g.depth) * g.cols;
  const int64_t out_size = static_cast<int64_t>(g.rows) * g.cols;
  int64_t out_index = 0;
  for (int32_t b0 = 0; b0 < g.out_batch[0]; ++b0) {
    const int64_t l0 = g.lhs_batch[0] == 1 ? 0 : b0;
    const int64_t r0 = g.rhs_batch[0] == 1 ? 0 : b0;
    for (int32_t b1 = 0; b1 < g.out_batch[1]; ++b1) {
      const int64_t l1 = l0 * g.lhs_batch[1] + (g.lhs_batch[1] == 1 ? 0 : b1);
      const int64_t r1 = r0 * g.rhs_batch[1] + (g.rhs_batch[1] == 1 ? 0 : b1);
      for (int32_t b2 = 0; b2 < g.out_batch[2]; ++b2) {
        const int64_t l2 = l1 * g.lhs_batch[2] + (g.lhs_batch[2] == 1 ? 0 : b2);
        const int64_t r2 = r1 * g.rhs_batch[2] + (g.rhs_batch[2] == 1 ? 0 : b2);
        fn(l2 * lhs_size, r2 * rhs_size, out_index * out_size);
        ++out_index;
      }
    }
  }
}

// Generic loop: Acc total = 0; total += term(lhs_value, rhs_value); out = finish(total).
template <class In, class Out, class Acc, class Term, class Finish>
void BatchMatMulLoop(const BatchMatMulGeometry& g, const In* lhs, const In* rhs, Out* out,
                     const Term& term, const Finish& finish) {
  // Element strides of lhs(m, k) and rhs(k, n) inside one matrix.
  const int64_t lhs_m = g.adj_x ? 1 : g.depth, lhs_k = g.adj_x ? g.rows : 1;
  const int64_t rhs_k = g.adj_y ? 1 : g.cols, rhs_n = g.adj_y ? g.depth : 1;
  ForEachBatchMatrix(g, [&](int64_t l, int64_t r, int64_t o) {
    const In* a = lhs + l;
    const In* b = rhs + r;
    Out* c = out + o;
    for (int32_t m = 0; m < g.rows; ++m) {
      for (int32_t n = 0; n < g.cols; ++n) {
        Acc total = 0;
        for (int32_t k = 0; k < g.depth; ++k)
          total += term(a[m * lhs_m + k * lhs_k], b[k * rhs_k + n * rhs_n]);
        c[static_cast<int64_t>(m) * g.cols + n] = finish(total);
      }
    }
  });
}

inline void BatchMatMulFloat(const BatchMatMulGeometry& g, const float* lhs, const float* rhs,
                             float* out) {
  BatchMatMulLoop<float, float, float>(
      g, lhs, rhs, out, [](float a, float b) { return b * a; }, [](float t) { return t; });
}

// int8 (Acc int32) and int16 (Acc int64) with a requantized output.
template <class T, class Acc>
void BatchMatMulQuantized(const BatchMatMulGeometry& g, const BatchMatMulQuantParams& q,
                          const T* lhs, const T* rhs, T* out) {
  BatchMatMulLoop<T, T, Acc>(
      g, lhs, rhs, out,
      [&](T a, T b) {
        return static_cast<Acc>(static_cast<Acc>(static_cast<Acc>(b) + q.rhs_offset) *
                                static_cast<Acc>(static_cast<Acc>(a) + q.lhs_offset));
      },
      [&](Acc total) {
        int32_t scaled;
        if constexpr (std::is_same_v<Acc, int64_t>) {
          scaled = MultiplyByQuantizedMultiplier64(total, q.multiplier, q.shift);
        } else {
          scaled = quant::MultiplyByQuantizedMultiplier(total, q.multiplier, q.shift);
        }
        scaled += q.output_offset;
        return static_cast<T>(std::min(std::max(scaled, q.act_min), q.act_max));
      });
}

// int8 inputs, raw int32 sums (zero points are not applied, as in TFLite).
inline void BatchMatMulInt8ToInt32(const BatchMatMulGeometry& g, const int8_t* lhs,
                                   const int8_t* rhs, int32_t* out) {
  BatchMatMulLoop<int8_t, int32_t, int32_t>(
      g, lhs, rhs, out,
      [](int8_t a, int8_t b) { return static_cast<int32_t>(b) * static_cast<int32_t>(a); },
      [](int32_t t) { return t; });
}

}  // namespace delegato::reference
