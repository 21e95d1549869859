// Data-movement kernels for TILE, SLICE, BROADCAST_TO, REVERSE_V2,
// MIRROR_PAD, DEPTH_TO_SPACE, SPACE_TO_DEPTH (all as an index-mapped copy),
// SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, ONE_HOT, FILL and RANGE.
// Element types only matter through their size: the copies move T = uintN_t.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace delegato::reference {

// An index-mapped copy. The output is viewed with `rank` dims; along view
// dim d, coordinate i adds offsets[starts[d] + i] to the input element index,
// or, when that entry is negative, makes the element the pad value. Ops whose
// input index is a sum of per-dim terms (tile, slice, broadcast, reverse,
// mirror pad, depth/space rearrangements) reduce to this one loop.
template <class T>
void MappedCopyDim(int d, int rank, const int64_t* view_dims, const int64_t* starts,
                   const int64_t* offsets, int64_t in_offset, bool padded, T pad_value,
                   const T* input, T*& output) {
  const int64_t* table = offsets + starts[d];
  const int64_t n = view_dims[d];
  if (d == rank - 1) {
    for (int64_t i = 0; i < n; ++i) {
      const bool pad = padded || table[i] < 0;
      *output++ = pad ? pad_value : input[in_offset + table[i]];
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const bool pad = padded || table[i] < 0;
    MappedCopyDim<T>(d + 1, rank, view_dims, starts, offsets, pad ? 0 : in_offset + table[i], pad,
                     pad_value, input, output);
  }
}

template <class T>
void MappedCopy(int rank, const int64_t* view_dims, const int64_t* starts,
                const int64_t* offsets, T pad_value, const T* input, T* output) {
  if (rank == 0) {
    *output = *input;
    return;
  }
  for (int d = 0; d < rank; ++d)
    if (view_dims[d] == 0) return;
  MappedCopyDim<T>(0, rank, view_dims, starts, offsets, 0, false, pad_value, input, output);
}

// SPACE_TO_BATCH_ND on a 4-D [batch, height, width, depth] view (a 3-D input
// has width 1). Output batch ob = (shift_h * block_w + shift_w) * batch + b.
template <class T>
void SpaceToBatchNd(const int32_t* in_dims, const int32_t* out_dims, int32_t block_h,
                    int32_t block_w, int32_t pad_top, int32_t pad_left, T pad_value,
                    const T* input, T* output) {
  const int32_t in_batch = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], depth = in_dims[3];
  const int32_t out_batch = out_dims[0], out_h = out_dims[1], out_w = out_dims[2];
  for (int32_t ob = 0; ob < out_batch; ++ob) {
    const int32_t b = ob % in_batch;
    const int32_t shift = ob / in_batch;
    const int32_t shift_w = shift % block_w;
    const int32_t shift_h = shift / block_w;
    for (int32_t oh = 0; oh < out_h; ++oh) {
      const int64_t h = int64_t{oh} * block_h + shift_h - pad_top;
      for (int32_t ow = 0; ow < out_w; ++ow) {
        const int64_t w = int64_t{ow} * block_w + shift_w - pad_left;
        T* out = output + ((int64_t{ob} * out_h + oh) * out_w + ow) * depth;
        if (h < 0 || h >= in_h || w < 0 || w >= in_w) {
          std::fill(out, out + depth, pad_value);
        } else {
          const T* in = input + ((int64_t{b} * in_h + h) * in_w + w) * depth;
          std::copy(in, in + depth, out);
        }
      }
    }
  }
}

// BATCH_TO_SPACE_ND, the inverse, dropping crop_top / crop_left rows and
// columns (the bottom / right crops are implied by the output size).
template <class T>
void BatchToSpaceNd(const int32_t* in_dims, const int32_t* out_dims, int32_t block_h,
                    int32_t block_w, int32_t crop_top, int32_t crop_left, const T* input,
                    T* output) {
  const int32_t in_batch = in_dims[0], in_h = in_dims[1], in_w = in_dims[2], depth = in_dims[3];
  const int32_t out_batch = out_dims[0], out_h = out_dims[1], out_w = out_dims[2];
  for (int32_t ib = 0; ib < in_batch; ++ib) {
    const int32_t b = ib % out_batch;
    const int32_t shift = ib / out_batch;
    const int32_t shift_w = shift % block_w;
    const int32_t shift_h = shift / block_w;
    for (int32_t ih = 0; ih < in_h; ++ih) {
      const int64_t h = int64_t{ih} * block_h + shift_h - crop_top;
      if (h < 0 || h >= out_h) continue;
      for (int32_t iw = 0; iw < in_w; ++iw) {
        const int64_t w = int64_t{iw} * block_w + shift_w - crop_left;
        if (w < 0 || w >= out_w) continue;
        const T* in = input + ((int64_t{ib} * in_h + ih) * in_w + iw) * depth;
        std::copy(in, in + depth, output + ((int64_t{b} * out_h + h) * out_w + w) * depth);
      }
    }
  }
}

// ONE_HOT: output viewed as [prefix, depth, suffix] where the indices are
// [prefix, suffix]; out = on where index == d, off elsewhere.
template <class T, class Index>
void OneHot(const Index* indices, int64_t prefix, int64_t depth, int64_t suffix, T on_value,
            T off_value, T* output) {
  for (int64_t p = 0; p < prefix; ++p) {
    for (int64_t d = 0; d < depth; ++d) {
      for (int64_t s = 0; s < suffix; ++s) {
        *output++ = static_cast<int64_t>(indices[p * suffix + s]) == d ? on_value : off_value;
      }
    }
  }
}

template <class T>
void Fill(T value, int64_t count, T* output) {
  std::fill(output, output + count, value);
}

// RANGE: start, start + delta, ... accumulated in T (as TFLite does, so float
// rounding matches).
template <class T>
void Range(T start, T delta, int64_t count, T* output) {
  T value = start;
  for (int64_t i = 0; i < count; ++i) {
    output[i] = value;
    value += delta;
  }
}

// Quantized RANGE (int8 / int16 with a scale): the float value advances by
// the dequantized delta and each element is requantized with start's
// parameters.
template <class T>
void RangeQuantized(float start, float delta, float scale, int32_t zero_point, int64_t count,
                    T* output) {
  float value = start;
  for (int64_t i = 0; i < count; ++i) {
    const int32_t q = static_cast<int32_t>(std::round(value / scale)) + zero_point;
    const int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    output[i] = static_cast<T>(std::min(std::max(q, lo), hi));
    value += delta;
  }
}

}  // namespace delegato::reference
