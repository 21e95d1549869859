#include "kernels/optimized/quant_binary.h"

#include <algorithm>
#include <cstring>

#include "kernels/optimized/requantize.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif

// GCC 12 reports false "may be used uninitialized" warnings from inside its
// own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace delegato::optimized {
namespace {

using Kind = QuantBinary::Kind;

inline int32_t Load8(const uint8_t* p, bool is_uint8) {
  return is_uint8 ? int32_t{*p} : int32_t{static_cast<int8_t>(*p)};
}

// The reference arithmetic of one element.
inline uint8_t ScalarElement(const QuantBinary& k, int32_t a, int32_t b) {
  if (k.kind() == Kind::kMul) {
    return k.is_uint8() ? static_cast<uint8_t>(reference::QuantizedMul<uint8_t>(a, b, k.mul()))
                        : static_cast<uint8_t>(reference::QuantizedMul<int8_t>(a, b, k.mul()));
  }
  const bool sub = k.kind() == Kind::kSub;
  return k.is_uint8() ? static_cast<uint8_t>(reference::QuantizedAddSub<uint8_t>(a, b, k.add(), sub))
                      : static_cast<uint8_t>(reference::QuantizedAddSub<int8_t>(a, b, k.add(), sub));
}

void ScalarSpan(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
                uint8_t* out, int64_t n) {
  const bool u8 = k.is_uint8();
  for (int64_t i = 0; i < n; ++i) out[i] = ScalarElement(k, Load8(a + i * sa, u8), Load8(b + i * sb, u8));
}

// An ADD/SUB input rescaled as the reference does, for a broadcast value.
inline int32_t RescaleAddInput(int32_t x, int32_t offset, int left_shift, int32_t multiplier,
                               int shift) {
  return quant::MultiplyByQuantizedMultiplierSmallerThanOneExp((offset + x) * (1 << left_shift),
                                                               multiplier, shift);
}

#if DELEGATO_X86

// The reference adds the output offset in int32 (wrapping), then clamps.
DLG_TARGET_AVX512 inline __m512i OutputStage512(__m512i q, __m512i offset, __m512i lo, __m512i hi) {
  return _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(q, offset), lo), hi);
}
DLG_TARGET_AVX2 inline __m256i OutputStage256(__m256i q, __m256i offset, __m256i lo, __m256i hi) {
  return _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, offset), lo), hi);
}

template <bool kSigned>
DLG_TARGET_AVX512 inline __m512i Load16(const uint8_t* p, __mmask16 mask) {
  const __m128i bytes = _mm_maskz_loadu_epi8(mask, p);
  return kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
}

template <bool kSigned, Kind kKind>
DLG_TARGET_AVX512 void Avx512Span(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                  const uint8_t* b, int64_t sb, uint8_t* out, int64_t n) {
  if constexpr (kKind == Kind::kMul) {
    const reference::QuantizedMulDivParams& p = k.mul();
    const Requant512 rq = BroadcastRequant512(p.output_multiplier, p.output_shift);
    const __m512i off1 = _mm512_set1_epi32(p.input1_offset);
    const __m512i off2 = _mm512_set1_epi32(p.input2_offset);
    const __m512i out_off = _mm512_set1_epi32(p.output_offset);
    const __m512i lo = _mm512_set1_epi32(p.act_min);
    const __m512i hi = _mm512_set1_epi32(p.act_max);
    const __m512i a_const = _mm512_set1_epi32(Load8(a, !kSigned) + p.input1_offset);
    const __m512i b_const = _mm512_set1_epi32(Load8(b, !kSigned) + p.input2_offset);
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
      const __m512i va = sa ? _mm512_add_epi32(Load16<kSigned>(a + i, mask), off1) : a_const;
      const __m512i vb = sb ? _mm512_add_epi32(Load16<kSigned>(b + i, mask), off2) : b_const;
      const __m512i v = OutputStage512(MultiplyByQuantizedMultiplier512(_mm512_mullo_epi32(va, vb), rq),
                                       out_off, lo, hi);
      _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
    }
  } else {
    const reference::QuantizedAddParams& p = k.add();
    const Requant512 r1 = BroadcastRequant512(p.input1_multiplier, p.input1_shift);
    const Requant512 r2 = BroadcastRequant512(p.input2_multiplier, p.input2_shift);
    const Requant512 ro = BroadcastRequant512(p.output_multiplier, p.output_shift);
    const __m512i off1 = _mm512_set1_epi32(p.input1_offset);
    const __m512i off2 = _mm512_set1_epi32(p.input2_offset);
    const __m512i out_off = _mm512_set1_epi32(p.output_offset);
    const __m512i lo = _mm512_set1_epi32(p.act_min);
    const __m512i hi = _mm512_set1_epi32(p.act_max);
    const __m128i shift = _mm_cvtsi32_si128(p.left_shift);
    const __m512i a_const = _mm512_set1_epi32(RescaleAddInput(
        Load8(a, !kSigned), p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift));
    const __m512i b_const = _mm512_set1_epi32(RescaleAddInput(
        Load8(b, !kSigned), p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift));
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
      const __m512i va = sa ? MultiplyByQuantizedMultiplier512(
                                  _mm512_sll_epi32(_mm512_add_epi32(Load16<kSigned>(a + i, mask), off1), shift), r1)
                            : a_const;
      const __m512i vb = sb ? MultiplyByQuantizedMultiplier512(
                                  _mm512_sll_epi32(_mm512_add_epi32(Load16<kSigned>(b + i, mask), off2), shift), r2)
                            : b_const;
      const __m512i raw = kKind == Kind::kSub ? _mm512_sub_epi32(va, vb) : _mm512_add_epi32(va, vb);
      const __m512i v = OutputStage512(MultiplyByQuantizedMultiplier512(raw, ro), out_off, lo, hi);
      _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
    }
  }
}

template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Load8Lanes(const uint8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return kSigned ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
}

// Whole groups of 8; the caller finishes the tail with the scalar loop.
template <bool kSigned, Kind kKind>
DLG_TARGET_AVX2 int64_t Avx2Span(const QuantBinary& k, const uint8_t* a, int64_t sa,
                                 const uint8_t* b, int64_t sb, uint8_t* out, int64_t n) {
  const int64_t full = n / 8 * 8;
  if constexpr (kKind == Kind::kMul) {
    const reference::QuantizedMulDivParams& p = k.mul();
    const Requant256 rq = BroadcastRequant256(p.output_multiplier, p.output_shift);
    const __m256i off1 = _mm256_set1_epi32(p.input1_offset);
    const __m256i off2 = _mm256_set1_epi32(p.input2_offset);
    const __m256i out_off = _mm256_set1_epi32(p.output_offset);
    const __m256i lo = _mm256_set1_epi32(p.act_min);
    const __m256i hi = _mm256_set1_epi32(p.act_max);
    const __m256i a_const = _mm256_set1_epi32(Load8(a, !kSigned) + p.input1_offset);
    const __m256i b_const = _mm256_set1_epi32(Load8(b, !kSigned) + p.input2_offset);
    for (int64_t i = 0; i < full; i += 8) {
      const __m256i va = sa ? _mm256_add_epi32(Load8Lanes<kSigned>(a + i), off1) : a_const;
      const __m256i vb = sb ? _mm256_add_epi32(Load8Lanes<kSigned>(b + i), off2) : b_const;
      const __m256i v = OutputStage256(MultiplyByQuantizedMultiplier256(_mm256_mullo_epi32(va, vb), rq),
                                       out_off, lo, hi);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), NarrowToBytes256(v, v));
    }
  } else {
    const reference::QuantizedAddParams& p = k.add();
    const Requant256 r1 = BroadcastRequant256(p.input1_multiplier, p.input1_shift);
    const Requant256 r2 = BroadcastRequant256(p.input2_multiplier, p.input2_shift);
    const Requant256 ro = BroadcastRequant256(p.output_multiplier, p.output_shift);
    const __m256i off1 = _mm256_set1_epi32(p.input1_offset);
    const __m256i off2 = _mm256_set1_epi32(p.input2_offset);
    const __m256i out_off = _mm256_set1_epi32(p.output_offset);
    const __m256i lo = _mm256_set1_epi32(p.act_min);
    const __m256i hi = _mm256_set1_epi32(p.act_max);
    const __m128i shift = _mm_cvtsi32_si128(p.left_shift);
    const __m256i a_const = _mm256_set1_epi32(RescaleAddInput(
        Load8(a, !kSigned), p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift));
    const __m256i b_const = _mm256_set1_epi32(RescaleAddInput(
        Load8(b, !kSigned), p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift));
    for (int64_t i = 0; i < full; i += 8) {
      const __m256i va = sa ? MultiplyByQuantizedMultiplier256(
                                  _mm256_sll_epi32(_mm256_add_epi32(Load8Lanes<kSigned>(a + i), off1), shift), r1)
                            : a_const;
      const __m256i vb = sb ? MultiplyByQuantizedMultiplier256(
                                  _mm256_sll_epi32(_mm256_add_epi32(Load8Lanes<kSigned>(b + i), off2), shift), r2)
                            : b_const;
      const __m256i raw = kKind == Kind::kSub ? _mm256_sub_epi32(va, vb) : _mm256_add_epi32(va, vb);
      const __m256i v = OutputStage256(MultiplyByQuantizedMultiplier256(raw, ro), out_off, lo, hi);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), NarrowToBytes256(v, v));
    }
  }
  return full;
}

template <bool kSigned>
void Avx512Dispatch(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b,
                    int64_t sb, uint8_t* out, int64_t n) {
  switch (k.kind()) {
    case Kind::kAdd: Avx512Span<kSigned, Kind::kAdd>(k, a, sa, b, sb, out, n); return;
    case Kind::kSub: Avx512Span<kSigned, Kind::kSub>(k, a, sa, b, sb, out, n); return;
    case Kind::kMul: Avx512Span<kSigned, Kind::kMul>(k, a, sa, b, sb, out, n); return;
  }
}

template <bool kSigned>
int64_t Avx2Dispatch(const QuantBinary& k, const uint8_t* a, int64_t sa, const uint8_t* b,
                     int64_t sb, uint8_t* out, int64_t n) {
  switch (k.kind()) {
    case Kind::kAdd: return Avx2Span<kSigned, Kind::kAdd>(k, a, sa, b, sb, out, n);
    case Kind::kSub: return Avx2Span<kSigned, Kind::kSub>(k, a, sa, b, sb, out, n);
    case Kind::kMul: return Avx2Span<kSigned, Kind::kMul>(k, a, sa, b, sb, out, n);
  }
  return 0;
}

#endif  // DELEGATO_X86

bool ShiftInRange(int shift) { return shift <= 0 && shift >= -31; }

}  // namespace

bool QuantBinary::CoversAddSub(const reference::QuantizedAddParams& p) {
  // 8-bit inputs: (x + offset) << 20 stays within int32 and the rescaled
  // values sum without overflow; every shift is a right shift of 0..31.
  return p.left_shift >= 0 && p.left_shift <= 20 && ShiftInRange(p.input1_shift) &&
         ShiftInRange(p.input2_shift) && ShiftInRange(p.output_shift) &&
         p.input1_multiplier >= 0 && p.input2_multiplier >= 0 && p.output_multiplier >= 0;
}

bool QuantBinary::CoversMul(const reference::QuantizedMulDivParams& p) {
  return p.output_shift <= 31 && p.output_shift >= -31 && p.output_multiplier >= 0;
}

QuantBinary::QuantBinary(Kind kind, bool is_uint8, const reference::QuantizedAddParams& add,
                         const reference::QuantizedMulDivParams& mul, Isa isa)
    : kind_(kind), is_uint8_(is_uint8), add_(add), mul_(mul), isa_(isa) {}

void QuantBinary::RunSpan(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
                          uint8_t* out, int64_t n) const {
  switch (isa_) {
#if DELEGATO_X86
    case Isa::kAvx512Vnni:
      if (is_uint8_)
        Avx512Dispatch<false>(*this, a, sa, b, sb, out, n);
      else
        Avx512Dispatch<true>(*this, a, sa, b, sb, out, n);
      return;
    case Isa::kAvx2: {
      const int64_t done = is_uint8_ ? Avx2Dispatch<false>(*this, a, sa, b, sb, out, n)
                                     : Avx2Dispatch<true>(*this, a, sa, b, sb, out, n);
      ScalarSpan(*this, a + done * sa, sa, b + done * sb, sb, out + done, n - done);
      return;
    }
#endif
    default:
      ScalarSpan(*this, a, sa, b, sb, out, n);
      return;
  }
}

void QuantBinary::Run(const reference::BroadcastPlan& plan, const void* a_data,
                      const void* b_data, void* out_data, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const uint8_t* a = static_cast<const uint8_t*>(a_data);
  const uint8_t* b = static_cast<const uint8_t*>(b_data);
  uint8_t* out = static_cast<uint8_t*>(out_data);
  // The reference's walk (BroadcastBinary), one vector call per run.
  const int last = plan.rank - 1;
  int64_t index[reference::kMaxBroadcastRank];
  int64_t a_offset = 0, b_offset = 0;
  int64_t rest = begin;
  for (int d = last; d >= 0; --d) {
    index[d] = rest % plan.dims[d];
    rest /= plan.dims[d];
    a_offset += index[d] * plan.a_strides[d];
    b_offset += index[d] * plan.b_strides[d];
  }
  const int64_t sa = plan.a_strides[last], sb = plan.b_strides[last];
  // Short rows where one input is contiguous over the last two dimensions
  // and the other repeats one row: several rows per vector call, the
  // repeating row copied side by side (x[i % n] for i < kGroup * n).
  constexpr int64_t kGroup = 64;
  const int64_t n = plan.dims[last];
  bool a_repeats = false, b_repeats = false;
  if (last >= 1 && n < kGroup && sa == 1 && sb == 1) {
    a_repeats = plan.a_strides[last - 1] == 0 && plan.b_strides[last - 1] == n;
    b_repeats = plan.b_strides[last - 1] == 0 && plan.a_strides[last - 1] == n;
  }
  const int64_t rows_per_group = kGroup / n;
  uint8_t pattern[kGroup];
  const uint8_t* pattern_source = nullptr;
  int64_t position = begin;
  while (position < end) {
    if ((a_repeats || b_repeats) && index[last] == 0 && rows_per_group > 1 &&
        plan.dims[last - 1] - index[last - 1] >= rows_per_group &&
        end - position >= rows_per_group * n) {
      const uint8_t* row = a_repeats ? a + a_offset : b + b_offset;
      if (row != pattern_source) {
        for (int64_t i = 0; i < rows_per_group * n; ++i) pattern[i] = row[i % n];
        pattern_source = row;
      }
      const int64_t count = rows_per_group * n;
      if (a_repeats)
        RunSpan(pattern, 1, b + b_offset, 1, out + position, count);
      else
        RunSpan(a + a_offset, 1, pattern, 1, out + position, count);
      position += count;
      index[last - 1] += rows_per_group;
      a_offset += rows_per_group * plan.a_strides[last - 1];
      b_offset += rows_per_group * plan.b_strides[last - 1];
      for (int d = last - 1; d > 0 && index[d] == plan.dims[d]; --d) {
        a_offset -= index[d] * plan.a_strides[d];
        b_offset -= index[d] * plan.b_strides[d];
        index[d] = 0;
        ++index[d - 1];
        a_offset += plan.a_strides[d - 1];
        b_offset += plan.b_strides[d - 1];
      }
      continue;
    }
    const int64_t run = std::min(plan.dims[last] - index[last], end - position);
    RunSpan(a + a_offset, sa, b + b_offset, sb, out + position, run);
    position += run;
    a_offset += run * sa;
    b_offset += run * sb;
    index[last] += run;
    for (int d = last; d > 0 && index[d] == plan.dims[d]; --d) {
      a_offset -= index[d] * plan.a_strides[d];
      b_offset -= index[d] * plan.b_strides[d];
      index[d] = 0;
      ++index[d - 1];
      a_offset += plan.a_strides[d - 1];
      b_offset += plan.b_strides[d - 1];
    }
  }
}

}  // namespace delegato::optimized
