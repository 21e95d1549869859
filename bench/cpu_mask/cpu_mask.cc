// libdelegato_cpumask.so: hides AVX-512, AMX and AVX-VNNI from every CPUID a
// process executes, so that an engine which picks its kernels from CPUID
// (LiteRT's XNNPACK through cpuinfo, delegato through libgcc) runs its AVX2
// path on a CPU that has more. bench/compare_litert.py preloads it into both
// engines for its avx2: rows.
//
//   LD_PRELOAD=build/libdelegato_cpumask.so python3 ...
//
// How: Linux's arch_prctl(ARCH_SET_CPUID, 0) ("CPUID faulting", the
// cpuid_fault flag of /proc/cpuinfo) makes the CPUID instruction raise a
// general-protection fault, delivered as SIGSEGV. The constructor enables it
// and installs a SIGSEGV handler that recognises the faulting instruction
// (0F A2 at the interrupted RIP), runs the real CPUID with faulting briefly
// off, clears the feature bits below, writes the result into the saved
// registers and resumes after the instruction. Other faults go to the handler
// the program installs (sigaction and signal are interposed so that a later
// handler, e.g. Python's faulthandler, is chained rather than replacing this
// one) or to the default action. The setting is per thread and inherited by
// threads and forked children; execve clears it (LD_PRELOAD sets it again).
//
// XCR0 (xgetbv) still reports the ZMM state enabled; feature detectors
// (cpuinfo, libgcc) require the CPUID bit and the XCR0 state both, so the
// CPUID bits suffice.
//
// DELEGATO_CPUMASK_KEEP_AVX_VNNI=1 leaves AVX-VNNI visible (hides AVX-512 and
// AMX only); DELEGATO_CPUMASK_VERBOSE=1 prints a line when the mask is on.
//
// Limits: x86-64 Linux only; a CPU or kernel without CPUID faulting leaves
// the process unchanged (delegato_cpumask_active() returns 0). The dynamic
// loader's own CPUID (glibc's string-function selection) runs before any
// constructor and keeps its AVX-512 variants of memcpy and friends. Built
// without the C++ runtime (only libc) so that it loads before, and does not
// pull in, libstdc++ and libgcc_s.
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

// Leaf 7 subleaf 0.
constexpr uint32_t kLeaf7Ebx = (1u << 16)    // AVX512F
                               | (1u << 17)  // AVX512DQ
                               | (1u << 21)  // AVX512_IFMA
                               | (1u << 26)  // AVX512PF
                               | (1u << 27)  // AVX512ER
                               | (1u << 28)  // AVX512CD
                               | (1u << 30)  // AVX512BW
                               | (1u << 31);  // AVX512VL
constexpr uint32_t kLeaf7Ecx = (1u << 1)     // AVX512_VBMI
                               | (1u << 6)   // AVX512_VBMI2
                               | (1u << 11)  // AVX512_VNNI
                               | (1u << 12)  // AVX512_BITALG
                               | (1u << 14);  // AVX512_VPOPCNTDQ
constexpr uint32_t kLeaf7Edx = (1u << 2)     // AVX512_4VNNIW
                               | (1u << 3)   // AVX512_4FMAPS
                               | (1u << 8)   // AVX512_VP2INTERSECT
                               | (1u << 22)  // AMX_BF16
                               | (1u << 23)  // AVX512_FP16
                               | (1u << 24)  // AMX_TILE
                               | (1u << 25);  // AMX_INT8
// Leaf 7 subleaf 1.
constexpr uint32_t kLeaf7Sub1Eax = (1u << 4)    // AVX_VNNI (VEX-encoded vpdpbusd on ymm)
                                   | (1u << 5)   // AVX512_BF16
                                   | (1u << 21)  // AMX_FP16
                                   | (1u << 23);  // AVX_IFMA
constexpr uint32_t kLeaf7Sub1Edx = (1u << 4)    // AVX_VNNI_INT8
                                   | (1u << 5)   // AVX_NE_CONVERT
                                   | (1u << 8)   // AMX_COMPLEX
                                   | (1u << 19);  // AVX10

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

SigactionFn g_real_sigaction = nullptr;
// The program's SIGSEGV disposition, to which other faults are passed on.
struct sigaction g_program_handler;
volatile sig_atomic_t g_active = 0;
// DELEGATO_CPUMASK_KEEP_AVX_VNNI=1: hide AVX-512 and AMX only, as on client
// CPUs that have AVX-VNNI without AVX-512 (Alder Lake and later).
bool g_keep_avx_vnni = false;

long SetCpuidFaulting(bool on) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, on ? 0 : 1); }

void MaskedCpuid(uint32_t leaf, uint32_t subleaf, uint32_t r[4]) {
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  if (leaf == 7 && subleaf == 0) {
    r[1] &= ~kLeaf7Ebx;
    r[2] &= ~kLeaf7Ecx;
    r[3] &= ~kLeaf7Edx;
  } else if (leaf == 7 && subleaf == 1) {
    r[0] &= ~(g_keep_avx_vnni ? kLeaf7Sub1Eax & ~(1u << 4) : kLeaf7Sub1Eax);
    r[3] &= ~kLeaf7Sub1Edx;
  }
}

void PassOn(int sig, siginfo_t* info, void* context) {
  const struct sigaction next = g_program_handler;
  if (next.sa_flags & SA_SIGINFO) {
    if (next.sa_sigaction != nullptr) return next.sa_sigaction(sig, info, context);
  } else if (next.sa_handler != SIG_DFL && next.sa_handler != SIG_IGN) {
    return next.sa_handler(sig);
  }
  // Default action (a synchronous fault cannot be ignored): restore it and
  // return; a fault repeats and the kernel ends the process, a signal sent by
  // kill or raise is sent again (delivered once this handler returns).
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  g_real_sigaction(sig, &dfl, nullptr);
  if (info->si_code <= 0) raise(sig);
}

void OnSegv(int sig, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  greg_t* regs = uc->uc_mcontext.gregs;
  // A CPUID fault is a #GP: si_code SI_KERNEL, the instruction itself at RIP
  // (so RIP is readable; page faults with a bad RIP have another si_code).
  const auto* pc = reinterpret_cast<const unsigned char*>(regs[REG_RIP]);
  if (g_active && info->si_code == SI_KERNEL && pc[0] == 0x0F && pc[1] == 0xA2) {
    uint32_t r[4];
    SetCpuidFaulting(false);
    MaskedCpuid(static_cast<uint32_t>(regs[REG_RAX]), static_cast<uint32_t>(regs[REG_RCX]), r);
    SetCpuidFaulting(true);
    // CPUID writes the 32-bit registers, zero-extended.
    regs[REG_RAX] = r[0];
    regs[REG_RBX] = r[1];
    regs[REG_RCX] = r[2];
    regs[REG_RDX] = r[3];
    regs[REG_RIP] += 2;
    return;
  }
  PassOn(sig, info, context);
}

__attribute__((constructor)) void Install() {
  g_real_sigaction = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
  if (g_real_sigaction == nullptr) return;
  const char* keep = std::getenv("DELEGATO_CPUMASK_KEEP_AVX_VNNI");
  g_keep_avx_vnni = keep != nullptr && keep[0] == '1';
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = OnSegv;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (g_real_sigaction(SIGSEGV, &action, &g_program_handler) != 0) return;
  if (SetCpuidFaulting(true) != 0) {  // no CPUID faulting here: leave the process as it is
    g_real_sigaction(SIGSEGV, &g_program_handler, nullptr);
    return;
  }
  g_active = 1;
  const char* verbose = std::getenv("DELEGATO_CPUMASK_VERBOSE");
  if (verbose != nullptr && verbose[0] == '1') {
    static const char kMessage[] = "libdelegato_cpumask: CPUID faulting on, AVX-512/AMX/AVX-VNNI hidden\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  }
}

}  // namespace

extern "C" {

// 1 when CPUID faulting is on and the features are hidden in this process.
__attribute__((visibility("default"))) int delegato_cpumask_active() { return g_active; }

// The program sees and replaces its own SIGSEGV disposition; the mask's
// handler stays first and passes non-CPUID faults on to it.
__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act,
                                                     struct sigaction* old) {
  if (g_real_sigaction == nullptr)
    g_real_sigaction = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
  if (sig != SIGSEGV || !g_active) return g_real_sigaction(sig, act, old);
  if (old != nullptr) *old = g_program_handler;
  if (act != nullptr) g_program_handler = *act;
  return 0;
}

__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction action, old;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(sig, &action, &old) != 0) return SIG_ERR;
  // glibc keeps both in one union: the handler as it was installed.
  return (old.sa_flags & SA_SIGINFO) ? reinterpret_cast<sighandler_t>(reinterpret_cast<void*>(old.sa_sigaction))
                                     : old.sa_handler;
}

}  // extern "C"
