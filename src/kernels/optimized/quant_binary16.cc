#include "kernels/optimized/quant_binary16.h"

#if DELEGATO_X86
#include <immintrin.h>
#endif
#if DELEGATO_X86 || DELEGATO_ARM
#include "kernels/optimized/requantize.h"
#endif

namespace delegato::optimized {

namespace {

bool VectorIsa(Isa isa) {
  return isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni || IsArmIsa(isa);
}

bool RightShift(int shift) { return shift <= 0 && shift >= -31; }

#if DELEGATO_X86
// MUL: the offset-free product, requantized.
struct Mul256 {
  const reference::QuantizedMulDivParams& p;
  Requant256 rq;
  DLG_TARGET_AVX2 explicit Mul256(const reference::QuantizedMulDivParams& params)
      : p(params), rq(BroadcastRequant256(params.output_multiplier, params.output_shift)) {}
  DLG_TARGET_AVX2 __m256i PrepareA(__m256i x) const { return x; }
  DLG_TARGET_AVX2 __m256i PrepareB(__m256i x) const { return x; }
  DLG_TARGET_AVX2 __m256i Combine(__m256i a, __m256i b) const {
    return MultiplyByQuantizedMultiplier256(_mm256_mullo_epi32(a, b), rq);
  }
  int16_t Scalar(int16_t a, int16_t b) const { return reference::QuantizedMul<int16_t>(a, b, p); }
};

// ADD / SUB: each input shifted left and rescaled (Prepare, once for a
// broadcast value), added or subtracted, rescaled to the output.
struct AddSub256 {
  const reference::QuantizedAddParams& p;
  bool subtract;
  Requant256 rq1, rq2, rq_out;
  __m256i left;
  DLG_TARGET_AVX2 AddSub256(const reference::QuantizedAddParams& params, bool sub)
      : p(params),
        subtract(sub),
        rq1(BroadcastRequant256(params.input1_multiplier, params.input1_shift)),
        rq2(BroadcastRequant256(params.input2_multiplier, params.input2_shift)),
        rq_out(BroadcastRequant256(params.output_multiplier, params.output_shift)),
        left(_mm256_set1_epi32(params.left_shift)) {}
  DLG_TARGET_AVX2 __m256i PrepareA(__m256i x) const {
    return MultiplyByQuantizedMultiplier256(_mm256_sllv_epi32(x, left), rq1);
  }
  DLG_TARGET_AVX2 __m256i PrepareB(__m256i x) const {
    return MultiplyByQuantizedMultiplier256(_mm256_sllv_epi32(x, left), rq2);
  }
  DLG_TARGET_AVX2 __m256i Combine(__m256i a, __m256i b) const {
    return MultiplyByQuantizedMultiplier256(
        subtract ? _mm256_sub_epi32(a, b) : _mm256_add_epi32(a, b), rq_out);
  }
  int16_t Scalar(int16_t a, int16_t b) const {
    return reference::QuantizedAddSub<int16_t>(a, b, p, subtract);
  }
};

// One run: op(a[k * sa], b[k * sb]) for k < count, sa and sb 0 or 1, 8
// lanes at a time, then the output offset and clamp (`q`: the op's params).
template <class Op, class Params>
DLG_TARGET_AVX2 void RunLanes(const Op& op, const Params& q, const int16_t* a, int64_t sa,
                              const int16_t* b, int64_t sb, int16_t* out, int64_t count) {
  const __m256i offset = _mm256_set1_epi32(q.output_offset);
  const __m256i lo = _mm256_set1_epi32(q.act_min), hi = _mm256_set1_epi32(q.act_max);
  const __m256i a_value = op.PrepareA(_mm256_set1_epi32(a[0]));
  const __m256i b_value = op.PrepareB(_mm256_set1_epi32(b[0]));
  int64_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m256i va = sa != 0 ? op.PrepareA(_mm256_cvtepi16_epi32(_mm_loadu_si128(
                                     reinterpret_cast<const __m128i*>(a + k))))
                               : a_value;
    const __m256i vb = sb != 0 ? op.PrepareB(_mm256_cvtepi16_epi32(_mm_loadu_si128(
                                     reinterpret_cast<const __m128i*>(b + k))))
                               : b_value;
    const __m256i o =
        _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(op.Combine(va, vb), offset), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k),
                     _mm_packs_epi32(_mm256_castsi256_si128(o), _mm256_extracti128_si256(o, 1)));
  }
  for (; k < count; ++k) out[k] = op.Scalar(a[k * sa], b[k * sb]);
}
#endif

#if DELEGATO_ARM
// The same steps on aarch64, 8 lanes as two int32x4 (sqrdmulh for the
// fixed-point multiplies, requantize.h).
struct MulNeon {
  const reference::QuantizedMulDivParams& p;
  RequantNeon rq;
  explicit MulNeon(const reference::QuantizedMulDivParams& params)
      : p(params), rq(BroadcastRequantNeon(params.output_multiplier, params.output_shift)) {}
  int32x4_t PrepareA(int32x4_t x) const { return x; }
  int32x4_t PrepareB(int32x4_t x) const { return x; }
  int32x4_t Combine(int32x4_t a, int32x4_t b) const {
    return MultiplyByQuantizedMultiplierNeon(vmulq_s32(a, b), rq);
  }
  int16_t Scalar(int16_t a, int16_t b) const { return reference::QuantizedMul<int16_t>(a, b, p); }
};

struct AddSubNeon {
  const reference::QuantizedAddParams& p;
  bool subtract;
  RequantNeon rq1, rq2, rq_out;
  int32x4_t left;
  AddSubNeon(const reference::QuantizedAddParams& params, bool sub)
      : p(params),
        subtract(sub),
        rq1(BroadcastRequantNeon(params.input1_multiplier, params.input1_shift)),
        rq2(BroadcastRequantNeon(params.input2_multiplier, params.input2_shift)),
        rq_out(BroadcastRequantNeon(params.output_multiplier, params.output_shift)),
        left(vdupq_n_s32(params.left_shift)) {}
  int32x4_t PrepareA(int32x4_t x) const {
    return MultiplyByQuantizedMultiplierNeon(vshlq_s32(x, left), rq1);
  }
  int32x4_t PrepareB(int32x4_t x) const {
    return MultiplyByQuantizedMultiplierNeon(vshlq_s32(x, left), rq2);
  }
  int32x4_t Combine(int32x4_t a, int32x4_t b) const {
    return MultiplyByQuantizedMultiplierNeon(subtract ? vsubq_s32(a, b) : vaddq_s32(a, b), rq_out);
  }
  int16_t Scalar(int16_t a, int16_t b) const {
    return reference::QuantizedAddSub<int16_t>(a, b, p, subtract);
  }
};

template <class Op, class Params>
void RunLanes(const Op& op, const Params& q, const int16_t* a, int64_t sa, const int16_t* b,
              int64_t sb, int16_t* out, int64_t count) {
  const int32x4_t offset = vdupq_n_s32(q.output_offset);
  const int32x4_t lo = vdupq_n_s32(q.act_min), hi = vdupq_n_s32(q.act_max);
  const int32x4_t a_value = op.PrepareA(vdupq_n_s32(a[0]));
  const int32x4_t b_value = op.PrepareB(vdupq_n_s32(b[0]));
  int64_t k = 0;
  for (; k + 8 <= count; k += 8) {
    int32x4_t half[2];
    const int16x8_t xa = sa != 0 ? vld1q_s16(a + k) : vdupq_n_s16(0);
    const int16x8_t xb = sb != 0 ? vld1q_s16(b + k) : vdupq_n_s16(0);
    for (int h = 0; h < 2; ++h) {
      const int32x4_t va =
          sa != 0 ? op.PrepareA(h == 0 ? vmovl_s16(vget_low_s16(xa)) : vmovl_high_s16(xa))
                  : a_value;
      const int32x4_t vb =
          sb != 0 ? op.PrepareB(h == 0 ? vmovl_s16(vget_low_s16(xb)) : vmovl_high_s16(xb))
                  : b_value;
      half[h] = vminq_s32(vmaxq_s32(vaddq_s32(op.Combine(va, vb), offset), lo), hi);
    }
    vst1q_s16(out + k, vmovn_high_s32(vmovn_s32(half[0]), half[1]));
  }
  for (; k < count; ++k) out[k] = op.Scalar(a[k * sa], b[k * sb]);
}
#endif

#if DELEGATO_X86 || DELEGATO_ARM
// Output elements [begin, end) of `plan`: runs whose inputs are contiguous
// or broadcast in vectors (Vector built once: its rescaling constants),
// others with the reference's scalar steps.
template <class Vector, class Params, class... Extra>
void RunPlan(const reference::BroadcastPlan& plan, const int16_t* a, const int16_t* b,
             int16_t* out, const Params& p, int64_t begin, int64_t end, Extra... extra) {
  const Vector op(p, extra...);
  reference::ForEachBroadcastRun(
      plan, begin, end,
      [&](int64_t a_offset, int64_t sa, int64_t b_offset, int64_t sb, int64_t position,
          int64_t count) {
        if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
          RunLanes(op, p, a + a_offset, sa, b + b_offset, sb, out + position, count);
          return;
        }
        for (int64_t k = 0; k < count; ++k)
          out[position + k] = op.Scalar(a[a_offset + k * sa], b[b_offset + k * sb]);
      });
}
#endif

}  // namespace

bool QuantMul16Covers(const reference::QuantizedMulDivParams& p, Isa isa) {
  return VectorIsa(isa) && p.input1_offset == 0 && p.input2_offset == 0 &&
         p.output_shift <= 31 && p.output_shift >= -31 && p.output_multiplier >= 0;
}

bool QuantAddSub16Covers(const reference::QuantizedAddParams& p, Isa isa) {
  return VectorIsa(isa) && p.input1_offset == 0 && p.input2_offset == 0 && p.left_shift >= 0 &&
         p.left_shift <= 15 && RightShift(p.input1_shift) && RightShift(p.input2_shift) &&
         RightShift(p.output_shift) && p.input1_multiplier >= 0 && p.input2_multiplier >= 0 &&
         p.output_multiplier >= 0;
}

void QuantMul16(const reference::BroadcastPlan& plan, const int16_t* a, const int16_t* b,
                int16_t* out, const reference::QuantizedMulDivParams& p, int64_t begin,
                int64_t end) {
#if DELEGATO_X86
  RunPlan<Mul256>(plan, a, b, out, p, begin, end);
#elif DELEGATO_ARM
  RunPlan<MulNeon>(plan, a, b, out, p, begin, end);
#else
  reference::QuantizedMulBroadcast(plan, a, b, out, p, begin, end);
#endif
}

void QuantAddSub16(const reference::BroadcastPlan& plan, const int16_t* a, const int16_t* b,
                   int16_t* out, const reference::QuantizedAddParams& p, bool subtract,
                   int64_t begin, int64_t end) {
#if DELEGATO_X86
  RunPlan<AddSub256>(plan, a, b, out, p, begin, end, subtract);
#elif DELEGATO_ARM
  RunPlan<AddSubNeon>(plan, a, b, out, p, begin, end, subtract);
#else
  reference::QuantizedAdd(plan, a, b, out, p, subtract, begin, end);
#endif
}

}  // namespace delegato::optimized
