#include "kernels/optimized/isa.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>

#if DELEGATO_ARM && defined(__linux__)
#include <sys/auxv.h>
#endif
#if DELEGATO_X86
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace delegato::optimized {
namespace {

// -1: no override; otherwise an Isa value.
std::atomic<int> g_override{-1};
// -1: no override; otherwise 0 or 1.
std::atomic<int> g_amx_override{-1};

bool DetectAmxInt8() {
#if DELEGATO_X86 && defined(__linux__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  constexpr unsigned kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;  // CPUID.(7,0):EDX
  if ((edx & kAmxTile) == 0 || (edx & kAmxInt8) == 0) return false;
  // The tile data state is off for a process until it asks for it.
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

bool DetectSupported(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return true;
#if DELEGATO_X86
    case Isa::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi2");
    case Isa::kAvx512Vnni:
      __builtin_cpu_init();
      return DetectSupported(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
#endif
#if DELEGATO_ARM
    case Isa::kNeon:
      return true;  // Advanced SIMD is part of every aarch64 Linux target
    case Isa::kDotprod: {
#if defined(__linux__)
      constexpr unsigned long kHwcapAsimdDp = 1ul << 20;  // HWCAP_ASIMDDP
      return (getauxval(AT_HWCAP) & kHwcapAsimdDp) != 0;
#else
      return false;
#endif
    }
    case Isa::kI8mm: {
#if defined(__linux__)
      constexpr unsigned long kHwcap2I8mm = 1ul << 13;  // HWCAP2_I8MM
      return DetectSupported(Isa::kDotprod) && (getauxval(AT_HWCAP2) & kHwcap2I8mm) != 0;
#else
      return false;
#endif
    }
#endif
    default:
      return false;
  }
}

Isa Clamp(Isa wanted) {
  for (int i = static_cast<int>(wanted); i > 0; --i)
    if (IsaSupported(static_cast<Isa>(i))) return static_cast<Isa>(i);
  return Isa::kScalar;
}

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512Vnni: return "avx512vnni";
    case Isa::kNeon: return "neon";
    case Isa::kDotprod: return "dotprod";
    case Isa::kI8mm: return "i8mm";
  }
  return "unknown";
}

bool ParseIsa(const char* name, Isa* isa) {
  for (int i = 0; i < kNumIsas; ++i) {
    const Isa candidate = static_cast<Isa>(i);
    if (std::strcmp(name, IsaName(candidate)) == 0) {
      *isa = candidate;
      return true;
    }
  }
  return false;
}

bool CpuHasAvx512Vbmi() {
#if DELEGATO_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vbmi");
#else
  return false;
#endif
}

bool CpuHasAvx512Ifma() {
#if DELEGATO_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512ifma");
#else
  return false;
#endif
}

bool CpuHasAmxInt8() {
  static const bool available = DetectAmxInt8();
  return available;
}

bool AmxSelected() {
  // Asked in this order so that a refusal never requests the tile permission.
  const int forced = g_amx_override.load(std::memory_order_relaxed);
  if (forced >= 0) return forced == 1 && CpuHasAmxInt8();
  static const bool from_env = [] {
    const char* env = std::getenv("DELEGATO_AMX");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return from_env && CpuHasAmxInt8();
}

void SetAmxOverride(std::optional<bool> use_amx) {
  g_amx_override.store(use_amx ? (*use_amx ? 1 : 0) : -1, std::memory_order_relaxed);
}

bool IsaSupported(Isa isa) {
  static const auto supported = [] {
    std::array<bool, kNumIsas> s{};
    for (int i = 0; i < kNumIsas; ++i) s[i] = DetectSupported(static_cast<Isa>(i));
    return s;
  }();
  const int i = static_cast<int>(isa);
  return i >= 0 && i < kNumIsas && supported[i];
}

Isa BestIsa() {
  static const Isa best = Clamp(static_cast<Isa>(kNumIsas - 1));
  return best;
}

Isa SelectedIsa() {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced >= 0) return Clamp(static_cast<Isa>(forced));
  static const Isa from_env = [] {
    const char* env = std::getenv("DELEGATO_ISA");
    Isa isa;
    if (env != nullptr && ParseIsa(env, &isa)) return Clamp(isa);
    return BestIsa();
  }();
  return from_env;
}

void SetIsaOverride(std::optional<Isa> isa) {
  g_override.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

}  // namespace delegato::optimized
