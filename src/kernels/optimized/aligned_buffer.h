// A 64-byte aligned, zero-initialized heap buffer for packed weights and
// per-channel constants (vector loads of a whole cache line never straddle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace delegato::optimized {

template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t count) { Resize(count); }

  void Resize(size_t count) {
    const size_t bytes = ((count * sizeof(T) + 63) / 64) * 64;
    T* p = nullptr;
    if (bytes > 0) {
      p = static_cast<T*>(std::aligned_alloc(64, bytes));
      if (p == nullptr) throw std::bad_alloc();
      std::memset(static_cast<void*>(p), 0, bytes);
    }
    data_.reset(p);
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
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

inline size_t RoundUp(size_t x, size_t multiple) { return (x + multiple - 1) / multiple * multiple; }

}  // namespace delegato::optimized
