#include "kernels/optimized/aligned_buffer.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace delegato::optimized::detail {

void* AllocateZeroed(size_t bytes) {
#if defined(__linux__)
  if (bytes >= kMappedBufferBytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
#endif
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return p;
}

void FreeZeroed(void* p, size_t bytes) {
  if (p == nullptr) return;
#if defined(__linux__)
  if (bytes >= kMappedBufferBytes) {
    munmap(p, bytes);
    return;
  }
#endif
  std::free(p);
}

}  // namespace delegato::optimized::detail
