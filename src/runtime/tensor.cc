#include "runtime/tensor.h"

#include <limits>

#include "core/error.h"

namespace delegato {

size_t TensorByteSize(DataType type, const std::vector<int32_t>& dims) {
  const size_t element_size = DataTypeSize(type);
  DLG_CHECK(element_size != 0, "tensors of type ", DataTypeName(type),
            " have no fixed element size and cannot be executed");
  // Keep every tensor well below what an allocation could satisfy; models are
  // untrusted, so a huge shape must be an error, not an allocation attempt.
  constexpr uint64_t kMaxBytes = uint64_t{1} << 34;  // 16 GiB
  uint64_t count = 1;
  for (int32_t d : dims) {
    DLG_CHECK(d >= 0, "negative dimension ", d);
    // Checked before multiplying: count <= 2^34 times a dim < 2^31 could wrap.
    DLG_CHECK(d == 0 || count <= kMaxBytes / static_cast<uint64_t>(d),
              "tensor too large (over 16 GiB)");
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t bytes = count * element_size;
  DLG_CHECK(bytes <= kMaxBytes, "tensor too large (over 16 GiB)");
  return static_cast<size_t>(bytes);
}

}  // namespace delegato
