// A 64-byte aligned, zero-initialized buffer for packed weights and
// per-channel constants (vector loads of a whole cache line never straddle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace delegato::optimized {

namespace detail {

// Large buffers come straight from the kernel with their pages mapped in one
// call (MAP_POPULATE, already zero): touching fresh pages one fault at a time
// was most of a float32 model's start (EfficientNet-B0: 20 MB of packed
// weights). Small ones from the heap, zeroed.
inline constexpr size_t kMappedBufferBytes = size_t{64} << 10;

void* AllocateZeroed(size_t bytes);  // 64-byte aligned; throws std::bad_alloc
void FreeZeroed(void* p, size_t bytes);

}  // namespace detail

template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t count) { Resize(count); }

  void Resize(size_t count) {
    const size_t bytes = ((count * sizeof(T) + 63) / 64) * 64;
    T* p = bytes > 0 ? static_cast<T*>(detail::AllocateZeroed(bytes)) : nullptr;
    data_.reset(p);
    data_.get_deleter().bytes = bytes;
    size_ = count;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  T& operator[](size_t i) { return data_.get()[i]; }
  const T& operator[](size_t i) const { return data_.get()[i]; }

 private:
  struct Free {
    size_t bytes = 0;
    void operator()(T* p) const { detail::FreeZeroed(p, bytes); }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

inline size_t RoundUp(size_t x, size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

}  // namespace delegato::optimized
