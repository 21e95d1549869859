// The reference's float clamp, std::min(std::max(x, lo), hi), in NEON lanes.
// Written as its two comparisons and selects, (x < lo) ? lo : x, then
// (hi < r) ? hi : r: NEON's fmax / fmin would differ for NaN and signed
// zeros.
#pragma once

#include "kernels/optimized/isa.h"

#if DELEGATO_ARM
#include <arm_neon.h>

namespace delegato::optimized {

inline float32x4_t ClampNeon(float32x4_t x, float32x4_t lo, float32x4_t hi) {
  const float32x4_t raised = vbslq_f32(vcltq_f32(x, lo), lo, x);
  return vbslq_f32(vcltq_f32(hi, raised), hi, raised);
}

}  // namespace delegato::optimized
#endif  // DELEGATO_ARM
