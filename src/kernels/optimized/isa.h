// Run-time instruction-set selection for the optimized kernels.
//
// The library is compiled for baseline x86-64; kernels that use AVX2 or
// AVX-512 carry a per-function target attribute and are only called after
// the CPU reported the feature. Each optimized op picks its ISA once, in
// Prepare, and keeps it in its node data, so Eval never branches on
// features. Every ISA computes identical results (exact integer arithmetic,
// the reference's requantization), so the choice only changes speed.
//
// Selection order: a test override (SetIsaOverride), then the environment
// variable DELEGATO_ISA=scalar|avx2|avx512vnni (for benchmarks), then the
// best the CPU supports. Requests the CPU cannot honour fall back to the best
// supported ISA below them.
#pragma once

#include <cstdint>
#include <optional>

#if defined(__x86_64__) || defined(__i386__)
#define DELEGATO_X86 1
#define DLG_TARGET_AVX2 __attribute__((target("avx2,fma,bmi2")))
#define DLG_TARGET_AVX512 \
  __attribute__((target("avx2,fma,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#else
#define DELEGATO_X86 0
#endif

namespace delegato::optimized {

enum class Isa : int8_t {
  kScalar = 0,      // portable C++, any CPU
  kAvx2 = 1,        // AVX2 (16-bit multiply-add, vpmaddwd)
  kAvx512Vnni = 2,  // AVX-512 F/BW/VL/DQ + VNNI (vpdpbusd u8 x s8 -> s32)
};

const char* IsaName(Isa isa);
bool ParseIsa(const char* name, Isa* isa);

// Whether this CPU (and OS) can run kernels of `isa`.
bool IsaSupported(Isa isa);
// The best ISA this CPU supports.
Isa BestIsa();
// The ISA kernels prepared now should use (see the selection order above).
Isa SelectedIsa();

// Tests and benchmarks: force an ISA for kernels prepared from now on
// (clamped to what the CPU supports); std::nullopt restores the default.
void SetIsaOverride(std::optional<Isa> isa);

class ScopedIsaOverride {
 public:
  explicit ScopedIsaOverride(Isa isa) { SetIsaOverride(isa); }
  ~ScopedIsaOverride() { SetIsaOverride(std::nullopt); }
  ScopedIsaOverride(const ScopedIsaOverride&) = delete;
  ScopedIsaOverride& operator=(const ScopedIsaOverride&) = delete;
};

}  // namespace delegato::optimized
