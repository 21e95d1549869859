#include "kernels/optimized/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace delegato::optimized {
namespace {

// -1: no override; otherwise an Isa value.
std::atomic<int> g_override{-1};

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
  }
  return "unknown";
}

bool ParseIsa(const char* name, Isa* isa) {
  for (Isa candidate : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512Vnni}) {
    if (std::strcmp(name, IsaName(candidate)) == 0) {
      *isa = candidate;
      return true;
    }
  }
  return false;
}

bool IsaSupported(Isa isa) {
  static const bool supported[3] = {DetectSupported(Isa::kScalar), DetectSupported(Isa::kAvx2),
                                    DetectSupported(Isa::kAvx512Vnni)};
  const int i = static_cast<int>(isa);
  return i >= 0 && i < 3 && supported[i];
}

Isa BestIsa() {
  static const Isa best = Clamp(Isa::kAvx512Vnni);
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
