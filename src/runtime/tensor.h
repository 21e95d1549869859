// A tensor as the runtime sees it: type, current dims, quantization and a data
// pointer into the arena, the model's constant buffer, or a caller's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "delegato/types.h"
#include "model/model.h"

namespace delegato {

enum class TensorStorage : uint8_t {
  kConstant,  // points into a model buffer, never written
  kArena,     // planned by the arena planner (inputs, outputs, intermediates)
  kVariable,  // persistent state (is_variable), own allocation
  kNone,      // optional input left out / not yet allocated
  kDynamic,   // sized during Invoke (its shape depends on run-time values); own allocation
};

struct Tensor {
  std::string name;
  DataType type = DataType::kFloat32;
  std::vector<int32_t> dims;
  const Quantization* quantization = nullptr;  // owned by the model; never null after setup
  TensorStorage storage = TensorStorage::kNone;
  uint8_t* data = nullptr;
  size_t bytes = 0;

  int rank() const { return static_cast<int>(dims.size()); }
  int32_t dim(int i) const { return dims[i]; }
  int64_t NumElements() const {
    int64_t n = 1;
    for (int32_t d : dims) n *= d;
    return n;
  }
  bool is_constant() const { return storage == TensorStorage::kConstant; }

  // Per-tensor parameters (the first entry for per-axis tensors).
  float scale() const { return quantization->scale.empty() ? 0.0f : quantization->scale[0]; }
  int32_t zero_point() const {
    return quantization->zero_point.empty() ? 0
                                            : static_cast<int32_t>(quantization->zero_point[0]);
  }

  template <class T>
  T* data_as() {
    return reinterpret_cast<T*>(data);
  }
  template <class T>
  const T* data_as() const {
    return reinterpret_cast<const T*>(data);
  }
};

// Bytes needed for `dims` elements of `type`; throws on overflow or types
// without an element size.
size_t TensorByteSize(DataType type, const std::vector<int32_t>& dims);

}  // namespace delegato
