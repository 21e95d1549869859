#include "kernels/optimized/transpose.h"

#include <algorithm>
#include <cstring>

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

namespace delegato::optimized {

TransposePlan PlanTranspose(Isa isa, size_t element_size, int rank, const int32_t* dims,
                            const int32_t* perm) {
  TransposePlan plan;
  plan.isa = isa;
  plan.element_bytes = static_cast<int64_t>(element_size);
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 0) {  // nothing to move
      plan.element_bytes = 0;
      return plan;
    }
  }
  // in_dims: the input dims but unit ones; order: the same dims in output
  // order (indices into in_dims).
  int64_t in_dims[kMaxTransposePlanRank];
  int renumbered[kMaxTransposePlanRank];
  int kept = 0;
  for (int d = 0; d < rank; ++d) {
    renumbered[d] = dims[d] == 1 ? -1 : kept;
    if (dims[d] != 1) in_dims[kept++] = dims[d];
  }
  int order[kMaxTransposePlanRank];
  int n = 0;
  for (int d = 0; d < rank; ++d)
    if (renumbered[perm[d]] >= 0) order[n++] = renumbered[perm[d]];
  // Runs of output dims that are consecutive input dims become one dim.
  // first[g] / size[g]: group g's first input dim and merged size, groups
  // in output order.
  int first[kMaxTransposePlanRank];
  int64_t size[kMaxTransposePlanRank];
  int groups = 0;
  for (int d = 0; d < n; ++d) {
    if (d > 0 && order[d] == order[d - 1] + 1) {
      size[groups - 1] *= in_dims[order[d]];
    } else {
      first[groups] = order[d];
      size[groups] = in_dims[order[d]];
      ++groups;
    }
  }
  // The groups' input order: rank of each group's first dim among them.
  int input_position[kMaxTransposePlanRank];
  for (int g = 0; g < groups; ++g) {
    input_position[g] = 0;
    for (int h = 0; h < groups; ++h) input_position[g] += first[h] < first[g] ? 1 : 0;
  }
  int64_t merged_dims[kMaxTransposePlanRank];
  for (int g = 0; g < groups; ++g) merged_dims[input_position[g]] = size[g];
  // The input's last dim kept last joins the element.
  if (groups > 0 && input_position[groups - 1] == groups - 1) {
    plan.element_bytes *= size[groups - 1];
    --groups;
  }
  int64_t strides[kMaxTransposePlanRank];
  int64_t stride = 1;
  for (int p = groups - 1; p >= 0; --p) {
    strides[p] = stride;
    stride *= merged_dims[p];
  }
  plan.rank = groups;
  for (int g = 0; g < groups; ++g) {
    plan.dims[g] = size[g];
    plan.steps[g] = strides[input_position[g]];
  }
  return plan;
}

int64_t TransposeRows(const TransposePlan& plan) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < plan.rank; ++d) rows *= plan.dims[d];
  return rows;
}

namespace {

// A few planes interleaved (NCHW -> NHWC of an RGB image): output rows of
// kCols values, each from one of kCols input runs read in order (a constant
// row width lets the compiler vectorize the interleave).
template <int kCols, class E>
void InterleaveRuns(const E* __restrict src, E* __restrict dst, int64_t rows, int64_t col_step) {
  for (int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < kCols; ++c) dst[r * kCols + c] = src[r + c * col_step];
}

// Output rows of one 2-D tile: dst[r pitch + c] = src[r row_step + c col_step]
// for r < rows, c < cols (strides in units of E).
template <class E>
void TileRows(const E* src, E* dst, int64_t rows, int64_t cols, int64_t pitch, int64_t row_step,
              int64_t col_step) {
  if (row_step == 1 && col_step != 1) {
    if (pitch == cols) {
      switch (cols) {
        case 2:
          InterleaveRuns<2>(src, dst, rows, col_step);
          return;
        case 3:
          InterleaveRuns<3>(src, dst, rows, col_step);
          return;
        case 4:
          InterleaveRuns<4>(src, dst, rows, col_step);
          return;
        default:
          break;
      }
    }
    // The input is read along output columns: 16 output rows at a time, so
    // the stores stay within a few cache lines per input run.
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
      const int64_t r1 = std::min(rows, r0 + 16);
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[r * pitch + c] = src[r + c * col_step];
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[r * pitch + c] = src[r * row_step + c * col_step];
}

// Elements of kBytes bytes (a multiple of 16): fixed-size copies.
template <size_t kBytes>
void TileRowsOfRuns(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t cols, int64_t row_step,
                    int64_t col_step) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + (r * cols + c) * kBytes, src + (r * row_step + c * col_step) * kBytes,
                  kBytes);
}

void TileRowsOfBytes(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t cols, int64_t row_step,
                     int64_t col_step, size_t bytes) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + (r * cols + c) * bytes, src + (r * row_step + c * col_step) * bytes, bytes);
}

// After the square blocks of a 4-byte tile (row_step 1): the columns right of
// them in the block rows, then the rows below, one value at a time.
[[maybe_unused]] void BlockRemainders(const uint32_t* src, uint32_t* dst, int64_t rows,
                                      int64_t cols, int64_t col_step, int64_t block_rows,
                                      int64_t block_cols, int64_t block) {
  if (block_cols < cols)
    for (int64_t r = 0; r < block_rows; r += block)
      TileRows(src + r + block_cols * col_step, dst + r * cols + block_cols, block,
               cols - block_cols, cols, 1, col_step);
  if (block_rows < rows)
    TileRows(src + block_rows, dst + block_rows * cols, rows - block_rows, cols, cols, 1, col_step);
}

#if DELEGATO_X86
// 4-byte elements read along output columns (row_step 1), in 8x8 blocks
// transposed in registers: 8 input runs in, 8 output row pieces out.
DLG_TARGET_AVX2 void TileRows32BitAvx2(const uint32_t* src, uint32_t* dst, int64_t rows,
                                       int64_t cols, int64_t col_step) {
  const int64_t block_rows = rows & ~int64_t{7}, block_cols = cols & ~int64_t{7};
  for (int64_t r = 0; r < block_rows; r += 8) {
    for (int64_t c = 0; c < block_cols; c += 8) {
      const float* s = reinterpret_cast<const float*>(src + r + c * col_step);
      __m256 v[8];
      for (int j = 0; j < 8; ++j) v[j] = _mm256_loadu_ps(s + j * col_step);
      // Pairs, then quads within 128-bit halves, then the halves.
      __m256 a[8], b[8];
      for (int j = 0; j < 8; j += 2) {
        a[j] = _mm256_unpacklo_ps(v[j], v[j + 1]);
        a[j + 1] = _mm256_unpackhi_ps(v[j], v[j + 1]);
      }
      for (int j = 0; j < 8; j += 4) {
        b[j] = _mm256_shuffle_ps(a[j], a[j + 2], 0x44);
        b[j + 1] = _mm256_shuffle_ps(a[j], a[j + 2], 0xEE);
        b[j + 2] = _mm256_shuffle_ps(a[j + 1], a[j + 3], 0x44);
        b[j + 3] = _mm256_shuffle_ps(a[j + 1], a[j + 3], 0xEE);
      }
      float* d = reinterpret_cast<float*>(dst + r * cols + c);
      for (int j = 0; j < 4; ++j) {
        _mm256_storeu_ps(d + j * cols, _mm256_permute2f128_ps(b[j], b[j + 4], 0x20));
        _mm256_storeu_ps(d + (j + 4) * cols, _mm256_permute2f128_ps(b[j], b[j + 4], 0x31));
      }
    }
  }
  BlockRemainders(src, dst, rows, cols, col_step, block_rows, block_cols, 8);
}
#endif

#if DELEGATO_ARM
// TileRows32BitAvx2 in 4x4 blocks: 32-bit then 64-bit transposes of lane
// pairs.
void TileRows32BitNeon(const uint32_t* src, uint32_t* dst, int64_t rows, int64_t cols,
                       int64_t col_step) {
  const int64_t block_rows = rows & ~int64_t{3}, block_cols = cols & ~int64_t{3};
  for (int64_t r = 0; r < block_rows; r += 4) {
    for (int64_t c = 0; c < block_cols; c += 4) {
      const uint32_t* s = src + r + c * col_step;
      const uint32x4_t v0 = vld1q_u32(s), v1 = vld1q_u32(s + col_step),
                       v2 = vld1q_u32(s + 2 * col_step), v3 = vld1q_u32(s + 3 * col_step);
      const uint64x2_t t0 = vreinterpretq_u64_u32(vtrn1q_u32(v0, v1));
      const uint64x2_t t1 = vreinterpretq_u64_u32(vtrn2q_u32(v0, v1));
      const uint64x2_t t2 = vreinterpretq_u64_u32(vtrn1q_u32(v2, v3));
      const uint64x2_t t3 = vreinterpretq_u64_u32(vtrn2q_u32(v2, v3));
      uint32_t* d = dst + r * cols + c;
      vst1q_u32(d, vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)));
      vst1q_u32(d + cols, vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)));
      vst1q_u32(d + 2 * cols, vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)));
      vst1q_u32(d + 3 * cols, vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)));
    }
  }
  BlockRemainders(src, dst, rows, cols, col_step, block_rows, block_cols, 4);
}
#endif

// Output rows [0, rows) of a tile whose rows hold cols units of element_bytes.
void TileRowsAnySize(const TransposePlan& plan, const uint8_t* src, uint8_t* dst, int64_t rows,
                     int64_t cols, int64_t row_step, int64_t col_step) {
  switch (plan.element_bytes) {
    case 1:
      TileRows(src, dst, rows, cols, cols, row_step, col_step);
      return;
    case 2:
      TileRows(reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(dst), rows, cols,
               cols, row_step, col_step);
      return;
    case 4:
#if DELEGATO_X86
      if (row_step == 1 && cols >= 8 && (plan.isa == Isa::kAvx2 || plan.isa == Isa::kAvx512Vnni)) {
        TileRows32BitAvx2(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst),
                          rows, cols, col_step);
        return;
      }
#endif
#if DELEGATO_ARM
      if (row_step == 1 && cols >= 4 && IsArmIsa(plan.isa)) {
        TileRows32BitNeon(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst),
                          rows, cols, col_step);
        return;
      }
#endif
      TileRows(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), rows, cols,
               cols, row_step, col_step);
      return;
    case 8:
      TileRows(reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst), rows, cols,
               cols, row_step, col_step);
      return;
    case 16:
      TileRowsOfRuns<16>(src, dst, rows, cols, row_step, col_step);
      return;
    case 32:
      TileRowsOfRuns<32>(src, dst, rows, cols, row_step, col_step);
      return;
    case 64:
      TileRowsOfRuns<64>(src, dst, rows, cols, row_step, col_step);
      return;
    default:
      TileRowsOfBytes(src, dst, rows, cols, row_step, col_step,
                      static_cast<size_t>(plan.element_bytes));
  }
}

}  // namespace

void Transpose(const TransposePlan& plan, const uint8_t* input, uint8_t* output, int64_t row_begin,
               int64_t row_end) {
  if (row_begin >= row_end) return;
  if (plan.rank == 0) {
    // A tensor with no elements may have no buffer at all.
    if (plan.element_bytes > 0) std::memcpy(output, input, static_cast<size_t>(plan.element_bytes));
    return;
  }
  const int tile = plan.rank - 2;  // the tile's row dim; dims before it are outer
  const int64_t cols = plan.dims[plan.rank - 1], col_step = plan.steps[plan.rank - 1];
  const int64_t tile_rows = plan.dims[tile], row_step = plan.steps[tile];
  const int64_t bytes = plan.element_bytes;
  // The first row's outer index and input offset; then counted up tile by
  // tile.
  int64_t index[kMaxTransposePlanRank] = {};
  int64_t offset = 0;
  int64_t rest = row_begin / tile_rows;
  for (int d = tile - 1; d >= 0; --d) {
    index[d] = rest % plan.dims[d];
    offset += index[d] * plan.steps[d];
    rest /= plan.dims[d];
  }
  int64_t row = row_begin;
  int64_t r0 = row_begin % tile_rows;
  while (row < row_end) {
    const int64_t count = std::min(tile_rows - r0, row_end - row);
    TileRowsAnySize(plan, input + (offset + r0 * row_step) * bytes, output + row * cols * bytes,
                    count, cols, row_step, col_step);
    row += count;
    r0 = 0;
    for (int d = tile - 1; d >= 0; --d) {
      offset += plan.steps[d];
      if (++index[d] < plan.dims[d]) break;
      offset -= index[d] * plan.steps[d];
      index[d] = 0;
    }
  }
}

}  // namespace delegato::optimized
