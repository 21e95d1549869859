#include "kernels/optimized/quantize.h"

#include <cstring>

#include "kernels/reference/quantize.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_ARM
#include <arm_neon.h>
#endif

// GCC 12 reports false "(may be) used uninitialized" warnings from inside
// its own AVX-512 intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace delegato::optimized {
namespace {

template <class In, class Out>
void BuildTable(uint8_t* table, int32_t multiplier, int shift, int32_t in_zp, int32_t out_zp) {
  In in[256];
  Out out[256];
  for (int i = 0; i < 256; ++i) in[i] = static_cast<In>(static_cast<uint8_t>(i));
  reference::Requantize(in, out, multiplier, shift, in_zp, out_zp, 0, 256);
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(out[i]);
}

#if DELEGATO_X86
// out = table[in]: two two-register byte permutes cover entries 0..127 and
// 128..255, the input's top bit picks between them.
__attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2"))) void VbmiLookup(
    const uint8_t* table, const uint8_t* in, uint8_t* out, int64_t begin, int64_t end) {
  const __m512i t0 = _mm512_load_si512(table), t1 = _mm512_load_si512(table + 64);
  const __m512i t2 = _mm512_load_si512(table + 128), t3 = _mm512_load_si512(table + 192);
  for (int64_t i = begin; i < end; i += 64) {
    const __mmask64 mask =
        end - i >= 64 ? ~uint64_t{0} : _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(end - i));
    const __m512i x = _mm512_maskz_loadu_epi8(mask, in + i);
    const __m512i low = _mm512_permutex2var_epi8(t0, x, t1);
    const __m512i high = _mm512_permutex2var_epi8(t2, x, t3);
    _mm512_mask_storeu_epi8(out + i, mask,
                            _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), low, high));
  }
}

// out = table[in] with 16 byte shuffles (vpshufb reads an index's low
// nibble and gives 0 when its top bit is set) XORed together. Shuffle k sees
// x - 16k, wrapping for k <= 8 and saturating (signed) after: for x < 128
// (row h = x >> 4 <= 7) the index is non-negative for k = 0..h, for x >= 128
// for k = h-7..h. So with the rows' differences T_0 = R_0, T_k = R_k ^
// R_(k-1) (k = 1..7) and T_k = T_(k-8) ^ R_k ^ R_(k-1) (k >= 8), both
// windows XOR to R_h: 46 single-cycle operations per vector (a tree of
// blends took 16 shuffles and 15 two- or three-uop blends).
inline void ShuffleTerms(const uint8_t* table, __m128i terms[16]) {
  __m128i previous = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table));
  terms[0] = previous;
  for (int k = 1; k < 16; ++k) {
    const __m128i row = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k));
    terms[k] = _mm_xor_si128(row, previous);
    if (k >= 8) terms[k] = _mm_xor_si128(terms[k], terms[k - 8]);
    previous = row;
  }
}

DLG_TARGET_AVX2 void Avx2Lookup(const uint8_t* table, const uint8_t* in, uint8_t* out,
                                int64_t begin, int64_t end) {
  __m128i terms[16];
  ShuffleTerms(table, terms);
  __m256i t[16];
  for (int k = 0; k < 16; ++k) t[k] = _mm256_broadcastsi128_si256(terms[k]);
  const __m256i sixteen = _mm256_set1_epi8(16);
  int64_t i = begin;
  for (; i + 32 <= end; i += 32) {
    __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    __m256i y = _mm256_shuffle_epi8(t[0], x);
#pragma GCC unroll 8
    for (int k = 1; k <= 8; ++k) {
      x = _mm256_sub_epi8(x, sixteen);
      y = _mm256_xor_si256(y, _mm256_shuffle_epi8(t[k], x));
    }
#pragma GCC unroll 7
    for (int k = 9; k < 16; ++k) {
      x = _mm256_subs_epi8(x, sixteen);
      y = _mm256_xor_si256(y, _mm256_shuffle_epi8(t[k], x));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), y);
  }
  for (; i < end; ++i) out[i] = table[in[i]];
}

// Avx2Lookup's shuffles 64 bytes at a time, the tail masked.
DLG_TARGET_AVX512 void Avx512BwLookup(const uint8_t* table, const uint8_t* in, uint8_t* out,
                                      int64_t begin, int64_t end) {
  __m128i terms[16];
  ShuffleTerms(table, terms);
  __m512i t[16];
  for (int k = 0; k < 16; ++k) t[k] = _mm512_broadcast_i32x4(terms[k]);
  const __m512i sixteen = _mm512_set1_epi8(16);
  for (int64_t i = begin; i < end; i += 64) {
    const __mmask64 mask =
        end - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (end - i)) - 1;
    __m512i x = _mm512_maskz_loadu_epi8(mask, in + i);
    __m512i y = _mm512_shuffle_epi8(t[0], x);
#pragma GCC unroll 8
    for (int k = 1; k <= 8; ++k) {
      x = _mm512_sub_epi8(x, sixteen);
      y = _mm512_xor_si512(y, _mm512_shuffle_epi8(t[k], x));
    }
#pragma GCC unroll 7
    for (int k = 9; k < 16; ++k) {
      x = _mm512_subs_epi8(x, sixteen);
      y = _mm512_xor_si512(y, _mm512_shuffle_epi8(t[k], x));
    }
    _mm512_mask_storeu_epi8(out + i, mask, y);
  }
}

DLG_TARGET_AVX512 void Avx512Quantize(const QuantizeFloat8& q, const float* in, uint8_t* out,
                                      int64_t begin, int64_t end) {
  const __m512 scale = _mm512_set1_ps(q.scale);
  const __m512 half = _mm512_set1_ps(0.5f);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
  const __m512i zp = _mm512_set1_epi32(q.zero_point);
  const __m512i lo = _mm512_set1_epi32(q.out_signed ? -128 : 0);
  const __m512i hi = _mm512_set1_epi32(q.out_signed ? 127 : 255);
  for (int64_t i = begin; i < end; i += 16) {
    const __mmask16 mask =
        static_cast<__mmask16>(end - i >= 16 ? 0xFFFF : (1u << (end - i)) - 1);
    const __m512 x = _mm512_div_ps(_mm512_maskz_loadu_ps(mask, in + i), scale);
    const __m512 t = _mm512_roundscale_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 diff = _mm512_sub_ps(x, t);
    // |x - t| >= 0.5: move one away from zero (copysign(1, x)).
    const __mmask16 away = _mm512_cmp_ps_mask(_mm512_abs_ps(diff), half, _CMP_GE_OQ);
    const __m512 step = _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(one), _mm512_and_si512(_mm512_castps_si512(x), sign_bit)));
    const __m512 rounded = _mm512_mask_add_ps(t, away, t, step);
    __m512i v = _mm512_cvttps_epi32(rounded);  // out of range / NaN -> INT32_MIN, as on x86
    v = _mm512_add_epi32(v, zp);
    v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
    _mm_mask_storeu_epi8(out + i, mask, _mm512_cvtepi32_epi8(v));
  }
}

// Eight floats -> eight int32 with the AVX-512 path's steps: divide, round
// half away from zero, truncate (out of range / NaN -> INT32_MIN), add the
// zero point with wrap-around. Clamping is left to the saturating packs.
DLG_TARGET_AVX2 inline __m256i Avx2QuantizeVector(__m256 x, __m256 scale, __m256i zp) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  x = _mm256_div_ps(x, scale);
  const __m256 t = _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 diff = _mm256_sub_ps(x, t);
  // |x - t| >= 0.5: move one away from zero (copysign(1, x)).
  const __m256 away =
      _mm256_cmp_ps(_mm256_andnot_ps(sign_bit, diff), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 step = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(x, sign_bit));
  const __m256 rounded = _mm256_blendv_ps(t, _mm256_add_ps(t, step), away);
  return _mm256_add_epi32(_mm256_cvttps_epi32(rounded), zp);  // cvtt: x86's INT32_MIN
}

// Saturating int32 -> int16 -> 8-bit packs: the same as clamping to the
// output type's range, since each step saturates monotonically.
template <bool kSigned>
DLG_TARGET_AVX2 inline __m256i Avx2Pack16(__m256i a, __m256i b) {
  return kSigned ? _mm256_packs_epi16(a, b) : _mm256_packus_epi16(a, b);
}
template <bool kSigned>
DLG_TARGET_AVX2 inline __m128i Avx2Pack8(__m128i a) {
  return kSigned ? _mm_packs_epi16(a, a) : _mm_packus_epi16(a, a);
}

// Eight values -> eight bytes in the low half.
template <bool kSigned>
DLG_TARGET_AVX2 inline __m128i Avx2Quantize8(__m256 x, __m256 scale, __m256i zp) {
  const __m256i v = Avx2QuantizeVector(x, scale, zp);
  const __m128i v16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return Avx2Pack8<kSigned>(v16);
}

template <bool kSigned>
DLG_TARGET_AVX2 void Avx2Quantize(const QuantizeFloat8& q, const float* in, uint8_t* out,
                                  int64_t begin, int64_t end) {
  const __m256 scale = _mm256_set1_ps(q.scale);
  const __m256i zp = _mm256_set1_epi32(q.zero_point);
  // Undoes the per-128-bit-lane interleaving of the two pack steps.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = begin;
  for (; end - i >= 32; i += 32) {
    const __m256i a = Avx2QuantizeVector(_mm256_loadu_ps(in + i), scale, zp);
    const __m256i b = Avx2QuantizeVector(_mm256_loadu_ps(in + i + 8), scale, zp);
    const __m256i c = Avx2QuantizeVector(_mm256_loadu_ps(in + i + 16), scale, zp);
    const __m256i d = Avx2QuantizeVector(_mm256_loadu_ps(in + i + 24), scale, zp);
    const __m256i bytes =
        Avx2Pack16<kSigned>(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (; end - i >= 8; i += 8)
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i),
                     Avx2Quantize8<kSigned>(_mm256_loadu_ps(in + i), scale, zp));
  if (i < end) {
    const int n = static_cast<int>(end - i);
    alignas(32) float tail_in[8] = {};
    alignas(16) uint8_t tail_out[16];
    std::memcpy(tail_in, in + i, sizeof(float) * n);
    _mm_store_si128(reinterpret_cast<__m128i*>(tail_out),
                    Avx2Quantize8<kSigned>(_mm256_load_ps(tail_in), scale, zp));
    std::memcpy(out + i, tail_out, n);
  }
}
#endif

#if DELEGATO_ARM
// out = table[in], 16 bytes at a time: a four-register table lookup for
// entries 0..63, then three lookup-or-keep steps for 64..127, 128..191 and
// 192..255 on the index less 64 each time (an index past a step's 64
// entries, wrapped or not, keeps the byte found so far).
void NeonLookup(const uint8_t* table, const uint8_t* in, uint8_t* out, int64_t begin,
                int64_t end) {
  const uint8x16x4_t t0 = vld1q_u8_x4(table), t1 = vld1q_u8_x4(table + 64);
  const uint8x16x4_t t2 = vld1q_u8_x4(table + 128), t3 = vld1q_u8_x4(table + 192);
  const uint8x16_t step = vdupq_n_u8(64);
  int64_t i = begin;
  for (; end - i >= 16; i += 16) {
    uint8x16_t x = vld1q_u8(in + i);
    uint8x16_t y = vqtbl4q_u8(t0, x);
    x = vsubq_u8(x, step);
    y = vqtbx4q_u8(y, t1, x);
    x = vsubq_u8(x, step);
    y = vqtbx4q_u8(y, t2, x);
    x = vsubq_u8(x, step);
    y = vqtbx4q_u8(y, t3, x);
    vst1q_u8(out + i, y);
  }
  for (; i < end; ++i) out[i] = table[in[i]];
}

// Four floats -> four int32 with the reference's steps: divide, round half
// away from zero (FCVTAS rounds ties away and truncates in one step; exact
// for every float inside the int32 range), INT32_MIN for NaN and values
// outside it (x86's conversion, which the reference follows; FCVTAS would
// saturate), wrapping zero-point add. Floats of magnitude 2^23 and more are
// integers, so testing x before rounding is testing round(x).
inline int32x4_t NeonQuantizeVector(float32x4_t x, float32x4_t scale, int32x4_t zp) {
  x = vdivq_f32(x, scale);
  const uint32x4_t inside = vandq_u32(vcgtq_f32(x, vdupq_n_f32(-2147483904.0f)),
                                      vcltq_f32(x, vdupq_n_f32(2147483648.0f)));
  const int32x4_t v = vbslq_s32(inside, vcvtaq_s32_f32(x), vdupq_n_s32(INT32_MIN));
  return vaddq_s32(v, zp);
}

// Sixteen floats -> sixteen bytes; the saturating narrowings clamp to the
// output type's range (each saturates monotonically).
template <bool kSigned>
inline uint8x16_t NeonQuantize16(const float* in, float32x4_t scale, int32x4_t zp) {
  const int16x8_t ab = vcombine_s16(vqmovn_s32(NeonQuantizeVector(vld1q_f32(in), scale, zp)),
                                    vqmovn_s32(NeonQuantizeVector(vld1q_f32(in + 4), scale, zp)));
  const int16x8_t cd = vcombine_s16(vqmovn_s32(NeonQuantizeVector(vld1q_f32(in + 8), scale, zp)),
                                    vqmovn_s32(NeonQuantizeVector(vld1q_f32(in + 12), scale, zp)));
  if (kSigned) return vreinterpretq_u8_s8(vcombine_s8(vqmovn_s16(ab), vqmovn_s16(cd)));
  return vcombine_u8(vqmovun_s16(ab), vqmovun_s16(cd));
}

template <bool kSigned>
void NeonQuantize(const QuantizeFloat8& q, const float* in, uint8_t* out, int64_t begin,
                  int64_t end) {
  const float32x4_t scale = vdupq_n_f32(q.scale);
  const int32x4_t zp = vdupq_n_s32(q.zero_point);
  int64_t i = begin;
  for (; end - i >= 16; i += 16) vst1q_u8(out + i, NeonQuantize16<kSigned>(in + i, scale, zp));
  if (i < end) {
    const size_t n = static_cast<size_t>(end - i);
    float tail_in[16] = {};
    uint8_t tail_out[16];
    std::memcpy(tail_in, in + i, sizeof(float) * n);
    vst1q_u8(tail_out, NeonQuantize16<kSigned>(tail_in, scale, zp));
    std::memcpy(out + i, tail_out, n);
  }
}
#endif

}  // namespace

void RequantizeTable8::Build(bool in_signed, bool out_signed, int32_t multiplier, int shift,
                             int32_t in_zp, int32_t out_zp) {
  if (in_signed && out_signed)
    BuildTable<int8_t, int8_t>(table, multiplier, shift, in_zp, out_zp);
  else if (in_signed)
    BuildTable<int8_t, uint8_t>(table, multiplier, shift, in_zp, out_zp);
  else if (out_signed)
    BuildTable<uint8_t, int8_t>(table, multiplier, shift, in_zp, out_zp);
  else
    BuildTable<uint8_t, uint8_t>(table, multiplier, shift, in_zp, out_zp);
  SelectLookup();
}

ByteLookup SelectByteLookup() { return ByteLookupFor(SelectedIsa()); }

ByteLookup ByteLookupFor(Isa isa) {
  if (isa == Isa::kAvx512Vnni) return CpuHasAvx512Vbmi() ? ByteLookup::kVbmi : ByteLookup::kAvx512Bw;
  if (isa == Isa::kAvx2) return ByteLookup::kAvx2;
  if (IsArmIsa(isa)) return ByteLookup::kNeon;
  return ByteLookup::kBytes;
}

bool ByteLookupSupported(ByteLookup kind) {
  switch (kind) {
    case ByteLookup::kBytes: return true;
    case ByteLookup::kAvx2: return DELEGATO_X86 && IsaSupported(Isa::kAvx2);
    case ByteLookup::kAvx512Bw: return DELEGATO_X86 && IsaSupported(Isa::kAvx512Vnni);
    case ByteLookup::kVbmi: return DELEGATO_X86 && IsaSupported(Isa::kAvx512Vnni) && CpuHasAvx512Vbmi();
    case ByteLookup::kNeon: return DELEGATO_ARM != 0;
  }
  return false;
}

const char* ByteLookupName(ByteLookup kind) {
  switch (kind) {
    case ByteLookup::kBytes: return "bytes";
    case ByteLookup::kAvx2: return "avx2";
    case ByteLookup::kAvx512Bw: return "avx512bw";
    case ByteLookup::kVbmi: return "vbmi";
    case ByteLookup::kNeon: return "neon";
  }
  return "?";
}

void LookupBytes(ByteLookup kind, const uint8_t* table, const uint8_t* in, uint8_t* out,
                 int64_t begin, int64_t end) {
  switch (kind) {
#if DELEGATO_X86
    case ByteLookup::kVbmi: VbmiLookup(table, in, out, begin, end); return;
    case ByteLookup::kAvx512Bw: Avx512BwLookup(table, in, out, begin, end); return;
    case ByteLookup::kAvx2: Avx2Lookup(table, in, out, begin, end); return;
#endif
#if DELEGATO_ARM
    case ByteLookup::kNeon: NeonLookup(table, in, out, begin, end); return;
#endif
    default: break;
  }
  for (int64_t i = begin; i < end; ++i) out[i] = table[in[i]];
}

void QuantizeFloat8::Run(const float* in, uint8_t* out, int64_t begin, int64_t end) const {
#if DELEGATO_X86
  if (isa == Isa::kAvx512Vnni) {
    Avx512Quantize(*this, in, out, begin, end);
    return;
  }
  if (isa == Isa::kAvx2) {
    if (out_signed)
      Avx2Quantize<true>(*this, in, out, begin, end);
    else
      Avx2Quantize<false>(*this, in, out, begin, end);
    return;
  }
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa)) {
    if (out_signed)
      NeonQuantize<true>(*this, in, out, begin, end);
    else
      NeonQuantize<false>(*this, in, out, begin, end);
    return;
  }
#endif
  if (out_signed)
    reference::AffineQuantize(scale, zero_point, in, reinterpret_cast<int8_t*>(out), begin, end);
  else
    reference::AffineQuantize(scale, zero_point, in, out, begin, end);
}

}  // namespace delegato::optimized
