// Data-movement kernels: concatenation / split (and so pack / unpack),
// TFLite's uint8 requantizing concatenation, transpose, pad and strided slice.
// They work on raw bytes with an element size wherever the arithmetic does
// not depend on the type, so one function serves every dtype.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/fixed_point.h"

namespace delegato::reference {

// Shapes are viewed as [outer, axis, inner]. Input i contributes
// block_bytes[i] = dims_i[axis] * inner * element_size bytes per outer index.
inline void ConcatenateBytes(int num_inputs, const uint8_t* const* inputs,
                             const int64_t* block_bytes, int64_t outer, uint8_t* output) {
  for (int64_t k = 0; k < outer; ++k) {
    for (int i = 0; i < num_inputs; ++i) {
      const size_t n = static_cast<size_t>(block_bytes[i]);
      if (n != 0) std::memcpy(output, inputs[i] + k * block_bytes[i], n);
      output += n;
    }
  }
}

// The inverse of ConcatenateBytes.
inline void SplitBytes(const uint8_t* input, int64_t outer, int num_outputs,
                       uint8_t* const* outputs, const int64_t* block_bytes) {
  for (int64_t k = 0; k < outer; ++k) {
    for (int i = 0; i < num_outputs; ++i) {
      const size_t n = static_cast<size_t>(block_bytes[i]);
      if (n != 0) std::memcpy(outputs[i] + k * block_bytes[i], input, n);
      input += n;
    }
  }
}

// uint8 concatenation whose inputs may carry other quantization parameters
// than the output (TFLite's ConcatenationWithScaling): single-precision
// x * scale + bias, rounded half away from zero. Inputs with the output's
// parameters are copied unchanged. block_elems as block_bytes above.
inline void ConcatenateRequantizeUInt8(int num_inputs, const uint8_t* const* inputs,
                                       const int64_t* block_elems, const float* input_scales,
                                       const int32_t* input_zero_points, int64_t outer,
                                       float output_scale, int32_t output_zero_point,
                                       uint8_t* output) {
  const float inverse_output_scale = 1.0f / output_scale;
  for (int64_t k = 0; k < outer; ++k) {
    for (int i = 0; i < num_inputs; ++i) {
      const int64_t n = block_elems[i];
      const uint8_t* in = inputs[i] + k * n;
      if (input_zero_points[i] == output_zero_point && input_scales[i] == output_scale) {
        if (n != 0) std::memcpy(output, in, static_cast<size_t>(n));
      } else {
        const float scale = input_scales[i] * inverse_output_scale;
        const float bias = static_cast<float>(-input_zero_points[i]) * scale;
        for (int64_t j = 0; j < n; ++j) {
          // Separate statements: the product must round before the add.
          const float scaled = static_cast<float>(in[j]) * scale;
          // Out-of-range and NaN conversions and the add follow x86, as in
          // TFLite's build there (absurd scales from hostile files).
          const int32_t value = fixed_point::WrappingAdd(
              fixed_point::TruncateToInt32(std::round(scaled + bias)), output_zero_point);
          output[j] = static_cast<uint8_t>(std::clamp<int32_t>(value, 0, 255));
        }
      }
      output += n;
    }
  }
}

namespace detail {

template <size_t kSize>
struct Element {
  uint8_t bytes[kSize];
};

// Calls fn with a trivially copyable type of exactly element_size bytes, so
// the per-element copy compiles to a plain load/store.
template <class Fn>
void WithElementType(size_t element_size, Fn&& fn) {
  switch (element_size) {
    case 1: fn(uint8_t{}); break;
    case 2: fn(uint16_t{}); break;
    case 4: fn(uint32_t{}); break;
    case 8: fn(uint64_t{}); break;
    case 16: fn(Element<16>{}); break;
    default: break;  // callers only pass sizes of supported types
  }
}

}  // namespace detail

constexpr int kMaxTransposeRank = 6;

// output[i0..i(r-1)] = input[index with dims permuted]: output dim d is input
// dim perm[d]. rank in [1, kMaxTransposeRank]. The output is walked as
// "rows" (one index of every output dim but the last two) of 2-D tiles, the
// tile in the order that reads the input contiguously when one of its dims
// does (NCHW -> NHWC reads each channel plane in order). [row_begin, row_end)
// of TransposeRowCount() rows are written, so threads can split by rows.
inline int64_t TransposeRowCount(int rank, const int32_t* input_dims, const int32_t* perm) {
  int64_t rows = 1;
  for (int d = 0; d + 2 < rank; ++d) rows *= input_dims[perm[d]];
  return rows;
}

inline void Transpose(size_t element_size, int rank, const int32_t* input_dims,
                      const int32_t* perm, const uint8_t* input, uint8_t* output,
                      int64_t row_begin, int64_t row_end) {
  int64_t input_strides[kMaxTransposeRank];
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    input_strides[d] = stride;
    stride *= input_dims[d];
  }
  if (stride == 0) return;
  // Output dims and their input strides, with a leading unit dim for rank 1.
  int32_t out_dims[kMaxTransposeRank + 1];
  int64_t step[kMaxTransposeRank + 1];
  const int lead = rank == 1 ? 1 : 0;
  if (lead) {
    out_dims[0] = 1;
    step[0] = 0;
  }
  for (int d = 0; d < rank; ++d) {
    out_dims[d + lead] = input_dims[perm[d]];
    step[d + lead] = input_strides[perm[d]];
  }
  const int outer = rank + lead - 2;  // dims before the tile
  const int64_t tile_rows = out_dims[outer], tile_cols = out_dims[outer + 1];
  const int64_t row_step = step[outer], col_step = step[outer + 1];
  detail::WithElementType(element_size, [&](auto tag) {
    using E = decltype(tag);
    const E* in = reinterpret_cast<const E*>(input);
    E* out = reinterpret_cast<E*>(output) + row_begin * tile_rows * tile_cols;
    // The row's index in the outer dims, divided out once and then counted
    // up row by row (a division per dim per row costs more than a small tile).
    int64_t index[kMaxTransposeRank + 1] = {};
    int64_t in_offset = 0;
    int64_t rest = row_begin;
    for (int d = outer - 1; d >= 0; --d) {
      index[d] = rest % out_dims[d];
      in_offset += index[d] * step[d];
      rest /= out_dims[d];
    }
    for (int64_t row = row_begin; row < row_end; ++row) {
      if (row > row_begin) {
        for (int d = outer - 1; d >= 0; --d) {
          in_offset += step[d];
          if (++index[d] < out_dims[d]) break;
          in_offset -= index[d] * step[d];
          index[d] = 0;
        }
      }
      const E* src = in + in_offset;
      if (row_step == 1 && col_step != 1 && tile_cols == 3) {
        // NCHW -> NHWC of an RGB image: three planes read in order, pixels
        // written whole (a fixed count lets the compiler interleave them).
        const E* p0 = src;
        const E* p1 = src + col_step;
        const E* p2 = src + 2 * col_step;
        for (int64_t r = 0; r < tile_rows; ++r) {
          out[3 * r] = p0[r];
          out[3 * r + 1] = p1[r];
          out[3 * r + 2] = p2[r];
        }
      } else if (row_step == 1 && col_step != 1) {
        for (int64_t c = 0; c < tile_cols; ++c)
          for (int64_t r = 0; r < tile_rows; ++r) out[r * tile_cols + c] = src[r + c * col_step];
      } else if (col_step == 1 && tile_cols * sizeof(E) % 16 == 0) {
        // Each tile row is a run of the input ([1, S, H, D] -> [1, H, S, D]
        // of an attention layer): copied in 16-byte pieces the compiler
        // inlines (a run is often 32 bytes; a library call would cost more).
        const size_t run_bytes = static_cast<size_t>(tile_cols) * sizeof(E);
        for (int64_t r = 0; r < tile_rows; ++r) {
          const auto* from = reinterpret_cast<const uint8_t*>(src + r * row_step);
          auto* to = reinterpret_cast<uint8_t*>(out + r * tile_cols);
          for (size_t b = 0; b < run_bytes; b += 16) std::memcpy(to + b, from + b, 16);
        }
      } else {
        for (int64_t r = 0; r < tile_rows; ++r)
          for (int64_t c = 0; c < tile_cols; ++c)
            out[r * tile_cols + c] = src[r * row_step + c * col_step];
      }
      out += tile_rows * tile_cols;
    }
  });
}

inline void Transpose(size_t element_size, int rank, const int32_t* input_dims,
                      const int32_t* perm, const uint8_t* input, uint8_t* output) {
  Transpose(element_size, rank, input_dims, perm, input, output, 0,
            TransposeRowCount(rank, input_dims, perm));
}

constexpr int kMaxPadRank = 5;

// Pads a rank-`rank` tensor (rank <= kMaxPadRank); before/after are the
// per-dim padding amounts (non-negative). pad_value points to one element.
// Output "rows" are the innermost dim's runs; [row_begin, row_end) of the
// PadRowCount() rows are written, so threads can split a pad by rows.
inline int64_t PadRowCount(int rank, const int32_t* input_dims, const int32_t* before,
                           const int32_t* after) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d)
    rows *= static_cast<int64_t>(input_dims[d]) + before[d] + after[d];
  return rows;
}

inline void Pad(size_t element_size, int rank, const int32_t* input_dims, const int32_t* before,
                const int32_t* after, const uint8_t* input, const uint8_t* pad_value,
                uint8_t* output, int64_t row_begin, int64_t row_end) {
  // Extend to kMaxPadRank with leading unit dims.
  int32_t in_dims[kMaxPadRank], lo[kMaxPadRank], hi[kMaxPadRank], out_dims[kMaxPadRank];
  const int lead = kMaxPadRank - rank;
  for (int d = 0; d < kMaxPadRank; ++d) {
    const bool real = d >= lead;
    in_dims[d] = real ? input_dims[d - lead] : 1;
    lo[d] = real ? before[d - lead] : 0;
    hi[d] = real ? after[d - lead] : 0;
    out_dims[d] = in_dims[d] + lo[d] + hi[d];
  }
  detail::WithElementType(element_size, [&](auto tag) {
    using E = decltype(tag);
    const E* in = reinterpret_cast<const E*>(input);
    E* out = reinterpret_cast<E*>(output) + row_begin * out_dims[4];
    E value;
    std::memcpy(&value, pad_value, sizeof(E));
    // The first row's output index, then an odometer over dims 0..3.
    int32_t idx[4];
    int64_t rest = row_begin;
    for (int d = 3; d >= 0; --d) {
      idx[d] = static_cast<int32_t>(rest % out_dims[d]);
      rest /= out_dims[d];
    }
    for (int64_t row = row_begin; row < row_end; ++row) {
      bool inside = true;
      for (int d = 0; d < 4; ++d) inside = inside && idx[d] >= lo[d] && idx[d] < lo[d] + in_dims[d];
      if (!inside) {
        out = std::fill_n(out, out_dims[4], value);
      } else {
        const int64_t in_row =
            (((static_cast<int64_t>(idx[0] - lo[0]) * in_dims[1] + (idx[1] - lo[1])) * in_dims[2] +
              (idx[2] - lo[2])) * in_dims[3] + (idx[3] - lo[3])) * in_dims[4];
        out = std::fill_n(out, lo[4], value);
        out = std::copy_n(in + in_row, in_dims[4], out);
        out = std::fill_n(out, hi[4], value);
      }
      for (int d = 3; d >= 0; --d) {
        if (++idx[d] < out_dims[d]) break;
        idx[d] = 0;
      }
    }
  });
}

inline void Pad(size_t element_size, int rank, const int32_t* input_dims, const int32_t* before,
                const int32_t* after, const uint8_t* input, const uint8_t* pad_value,
                uint8_t* output) {
  Pad(element_size, rank, input_dims, before, after, input, pad_value, output, 0,
      PadRowCount(rank, input_dims, before, after));
}

constexpr int kMaxStridedSliceRank = 5;

// Resolved strided slice: for each dim, start, element count and stride
// (counts come from the shape computation; start + i * stride stays in range).
inline void StridedSlice(size_t element_size, int rank, const int32_t* input_dims,
                         const int32_t* start, const int32_t* count, const int32_t* stride,
                         const uint8_t* input, uint8_t* output) {
  int32_t dims[kMaxStridedSliceRank], st[kMaxStridedSliceRank], cnt[kMaxStridedSliceRank],
      step[kMaxStridedSliceRank];
  const int lead = kMaxStridedSliceRank - rank;
  for (int d = 0; d < kMaxStridedSliceRank; ++d) {
    const bool real = d >= lead;
    dims[d] = real ? input_dims[d - lead] : 1;
    st[d] = real ? start[d - lead] : 0;
    cnt[d] = real ? count[d - lead] : 1;
    step[d] = real ? stride[d - lead] : 1;
  }
  int64_t strides[kMaxStridedSliceRank];
  int64_t s = 1;
  for (int d = kMaxStridedSliceRank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= dims[d];
  }
  detail::WithElementType(element_size, [&](auto tag) {
    using E = decltype(tag);
    const E* in = reinterpret_cast<const E*>(input);
    E* out = reinterpret_cast<E*>(output);
    for (int32_t i0 = 0; i0 < cnt[0]; ++i0) {
      const int64_t o0 = (st[0] + static_cast<int64_t>(i0) * step[0]) * strides[0];
      for (int32_t i1 = 0; i1 < cnt[1]; ++i1) {
        const int64_t o1 = o0 + (st[1] + static_cast<int64_t>(i1) * step[1]) * strides[1];
        for (int32_t i2 = 0; i2 < cnt[2]; ++i2) {
          const int64_t o2 = o1 + (st[2] + static_cast<int64_t>(i2) * step[2]) * strides[2];
          for (int32_t i3 = 0; i3 < cnt[3]; ++i3) {
            const int64_t o3 = o2 + (st[3] + static_cast<int64_t>(i3) * step[3]) * strides[3];
            for (int32_t i4 = 0; i4 < cnt[4]; ++i4)
              *out++ = in[o3 + st[4] + static_cast<int64_t>(i4) * step[4]];
          }
        }
      }
    }
  });
}

}  // namespace delegato::reference
