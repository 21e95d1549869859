// Indexing and scanning kernels: CUMSUM, TOPK_V2, SCATTER_ND, segment
// reductions, MATRIX_DIAG / MATRIX_SET_DIAG, BUCKETIZE, REVERSE_SEQUENCE,
// DYNAMIC_UPDATE_SLICE, NON_MAX_SUPPRESSION, as TFLite's reference kernels define them.
#pragma once

#include <algorithm>
#include <cmath>
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

// NON_MAX_SUPPRESSION_V4 / V5 (V5 with Gaussian soft-NMS when sigma > 0), as
// TFLite's reference kernel: candidates above score_threshold in a max-heap
// by score (std::push_heap / std::pop_heap, so equal scores come out in the
// same order as TFLite's std::priority_queue); boxes are [y1, x1, y2, x2].
struct NmsCandidate {
  int32_t index;
  float score;
  int32_t suppress_begin_index;
  bool operator<(const NmsCandidate& other) const { return score < other.score; }
};

inline float BoxIou(const float* boxes, int32_t i, int32_t j) {
  const float* a = boxes + 4 * i;
  const float* b = boxes + 4 * j;
  const float ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
  const float ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]);
  const float by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  const float bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]);
  const float area_a = (ay1 - ay0) * (ax1 - ax0);
  const float area_b = (by1 - by0) * (bx1 - bx0);
  if (area_a <= 0.0f || area_b <= 0.0f) return 0.0f;
  const float inter = std::max(std::min(ay1, by1) - std::max(ay0, by0), 0.0f) *
                      std::max(std::min(ax1, bx1) - std::max(ax0, bx0), 0.0f);
  const float uni = area_a + area_b - inter;
  return uni == 0.0f ? 0.0f : inter / uni;
}

// heap: scratch of num_boxes candidates. Writes up to max_output_size
// indices (and scores when selected_scores is not null) and their count.
inline void NonMaxSuppression(const float* boxes, int32_t num_boxes, const float* scores,
                              int32_t max_output_size, float iou_threshold,
                              float score_threshold, float soft_nms_sigma, NmsCandidate* heap,
                              int32_t* selected_indices, float* selected_scores,
                              int32_t* num_selected) {
  int32_t heap_size = 0;
  for (int32_t i = 0; i < num_boxes; ++i) {
    if (scores[i] > score_threshold) {
      heap[heap_size++] = NmsCandidate{i, scores[i], 0};
      std::push_heap(heap, heap + heap_size);
    }
  }
  *num_selected = 0;
  const int32_t num_outputs = std::min(heap_size, max_output_size);
  if (num_outputs == 0) return;
  const float scale = soft_nms_sigma > 0.0f ? -0.5f / soft_nms_sigma : 0.0f;
  while (*num_selected < num_outputs && heap_size > 0) {
    NmsCandidate next = heap[0];
    const float original_score = next.score;
    std::pop_heap(heap, heap + heap_size);
    --heap_size;
    bool hard_suppress = false;
    for (int32_t j = *num_selected - 1; j >= next.suppress_begin_index; --j) {
      const float iou = BoxIou(boxes, next.index, selected_indices[j]);
      if (iou >= iou_threshold) {
        hard_suppress = true;
        break;
      }
      if (soft_nms_sigma > 0.0f) next.score = next.score * std::exp(scale * iou * iou);
      if (next.score <= score_threshold) break;
    }
    next.suppress_begin_index = *num_selected;
    if (hard_suppress) continue;
    if (next.score == original_score) {
      selected_indices[*num_selected] = next.index;
      if (selected_scores) selected_scores[*num_selected] = next.score;
      ++*num_selected;
    }
    if (next.score > score_threshold) {
      heap[heap_size++] = next;
      std::push_heap(heap, heap + heap_size);
    }
  }
}

}  // namespace delegato::reference
