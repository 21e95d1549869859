// Indexing and scanning kernels: CUMSUM, TOPK_V2, SCATTER_ND, segment
// reductions, MATRIX_DIAG / MATRIX_SET_DIAG, BUCKETIZE, REVERSE_SEQUENCE,
// DYNAMIC_UPDATE_SLICE, as TFLite's reference kernels define them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace delegato::reference {

// Input viewed as [outer, axis, inner]; a running sum along the axis in the
// element type (float sums accumulate in order, like TFLite).
template <class T>
void Cumsum(const T* input, int64_t outer, int64_t axis, int64_t inner, bool exclusive,
            bool reverse, T* output) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      T acc = T(0);
      for (int64_t k = 0; k < axis; ++k) {
        const int64_t a = reverse ? axis - 1 - k : k;
        const int64_t idx = (o * axis + a) * inner + i;
        if (exclusive) {
          output[idx] = acc;
          acc = static_cast<T>(acc + input[idx]);
        } else {
          acc = static_cast<T>(acc + input[idx]);
          output[idx] = acc;
        }
      }
    }
  }
}

// TOPK_V2 over the last dim: the k largest values of each row, larger values
// first and, among equal values, the lower index first. `order` is scratch
// of row_size int32.
template <class T>
void TopK(const T* input, int64_t rows, int32_t row_size, int32_t k, int32_t* order,
          T* values, int32_t* indices) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = input + r * row_size;
    for (int32_t i = 0; i < row_size; ++i) order[i] = i;
    std::partial_sort(order, order + k, order + row_size, [row](int32_t a, int32_t b) {
      return row[a] > row[b] || (row[a] == row[b] && a < b);
    });
    for (int32_t i = 0; i < k; ++i) {
      values[r * k + i] = row[order[i]];
      indices[r * k + i] = order[i];
    }
  }
}

// Segment reductions: output rows start at `init`; input row i is combined
// into output row ids[i] (negative ids are skipped). Returns false when an id
// is >= num_segments.
template <class T, class Op>
bool SegmentReduce(const T* input, const int32_t* ids, int64_t num_ids, int64_t num_segments,
                   int64_t row_size, T init, Op op, T* output) {
  std::fill_n(output, num_segments * row_size, init);
  for (int64_t i = 0; i < num_ids; ++i) {
    const int32_t s = ids[i];
    if (s < 0) continue;
    if (s >= num_segments) return false;
    T* out = output + s * row_size;
    const T* in = input + i * row_size;
    for (int64_t j = 0; j < row_size; ++j) out[j] = op(out[j], in[j]);
  }
  return true;
}

// MATRIX_DIAG: [batch, n] -> [batch, n, n] with zeros off the diagonal.
template <class T>
void MatrixDiag(const T* input, int64_t batch, int64_t n, T* output) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) *output++ = i == j ? input[b * n + i] : T(0);
}

// MATRIX_SET_DIAG: [batch, rows, cols] with the diagonal replaced by
// diag[batch, min(rows, cols)].
template <class T>
void MatrixSetDiag(const T* input, const T* diag, int64_t batch, int64_t rows, int64_t cols,
                   T* output) {
  const int64_t n = std::min(rows, cols);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t idx = (b * rows + i) * cols + j;
        output[idx] = i == j ? diag[b * n + i] : input[idx];
      }
}

// BUCKETIZE: the number of boundaries <= value (std::upper_bound), compared
// in the common type of T and float.
template <class T>
void Bucketize(const T* input, int64_t count, const float* boundaries, int64_t num_boundaries,
               int32_t* output) {
  for (int64_t i = 0; i < count; ++i) {
    const T v = input[i];
    output[i] = static_cast<int32_t>(
        std::upper_bound(boundaries, boundaries + num_boundaries, v,
                         [](const T& value, float b) { return value < b; }) -
        boundaries);
  }
}

}  // namespace delegato::reference
