// Run-time instruction-set selection for the optimized kernels.
//
// The library is compiled for baseline x86-64 (or Armv8.0 aarch64); kernels
// that use AVX2, AVX-512 or Arm dot products carry a per-function target
// attribute and are only called after the CPU reported the feature (cpuid on
// x86, getauxval(AT_HWCAP) on Linux aarch64). Each optimized op picks its ISA once, in
// Prepare, and keeps it in its node data, so Eval never branches on
// features. Every ISA computes identical results (exact integer arithmetic,
// the reference's requantization), so the choice only changes speed.
//
// Selection order: a test override (SetIsaOverride), then the environment
// variable DELEGATO_ISA=scalar|avx2|avx512vnni|neon|dotprod|i8mm (for benchmarks), then the
// best the CPU supports. Requests the CPU cannot honour fall back to the best
// supported ISA below them (an x86 ISA asked for on Arm, or the reverse,
// gives scalar).
#pragma once

#include <cstdint>
#include <optional>

#if defined(__x86_64__) || defined(__i386__)
#define DELEGATO_X86 1
#define DLG_TARGET_AVX2 __attribute__((target("avx2,fma,bmi2")))
#define DLG_TARGET_AVX512 \
  __attribute__((target("avx2,fma,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#define DLG_TARGET_AMX                                                                      \
  __attribute__((target("avx2,fma,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,amx-tile," \
                        "amx-int8")))
#else
#define DELEGATO_X86 0
#endif

#if defined(__aarch64__)
#define DELEGATO_ARM 1
// Armv8.2 dot products (SDOT/UDOT): per function, so the library keeps
// running on Armv8.0 cores (Cortex-A53) that lack them.
#define DLG_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
// Armv8.6 8-bit matrix multiply (SMMLA/UMMLA), likewise per function.
#define DLG_TARGET_I8MM __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))
#else
#define DELEGATO_ARM 0
#endif

namespace delegato::optimized {

enum class Isa : int8_t {
  kScalar = 0,      // portable C++, any CPU
  kAvx2 = 1,        // AVX2 (16-bit multiply-add, vpmaddwd)
  kAvx512Vnni = 2,  // AVX-512 F/BW/VL/DQ + VNNI (vpdpbusd u8 x s8 -> s32)
  kNeon = 3,        // aarch64 Advanced SIMD, Armv8.0 (16-bit widening multiply-add, smlal)
  kDotprod = 4,     // aarch64 Armv8.2 dot product (sdot/udot 8-bit x 4 -> s32)
  kI8mm = 5,        // aarch64 Armv8.6 matrix multiply (smmla/ummla 2x8 by 8x2 -> 2x2 s32)
};
inline constexpr int kNumIsas = 6;

// The aarch64 NEON ISAs (every one of them has Armv8.0 Advanced SIMD).
inline constexpr bool IsArmIsa(Isa isa) {
  return isa == Isa::kNeon || isa == Isa::kDotprod || isa == Isa::kI8mm;
}

const char* IsaName(Isa isa);
bool ParseIsa(const char* name, Isa* isa);

// Whether this CPU (and OS) can run kernels of `isa`.
bool IsaSupported(Isa isa);
// The best ISA this CPU supports.
Isa BestIsa();
// AVX-512 extensions some avx512vnni kernels use beyond the ISA's base set
// (byte permutes, 52-bit multiply-adds); false on every other architecture.
bool CpuHasAvx512Vbmi();
bool CpuHasAvx512Ifma();

// Intel AMX 8-bit tile multiplies, used within avx512vnni by the int8
// convolution GEMM (quant_conv.h). Available when the CPU has AMX-TILE and
// AMX-INT8 and Linux grants the process the tile state (arch_prctl
// ARCH_REQ_XCOMP_PERM, asked once). Whether kernels prepared now use it: a
// test override (SetAmxOverride), then DELEGATO_AMX=0|1 (benchmarks: 0 keeps
// plain VNNI), then availability. Results are identical either way.
bool CpuHasAmxInt8();
bool AmxSelected();
void SetAmxOverride(std::optional<bool> use_amx);
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
