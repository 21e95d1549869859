// libFuzzer target: .npy files as `delegato run --input` reads them. An Error
// is the expected outcome for malformed files; a crash, sanitizer report or
// allocation beyond the file's size is a bug.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const delegato::tools::NpyArray array =
        delegato::tools::ParseNpy(std::span<const uint8_t>(data, size), "fuzz.npy");
    // What the CLI does next: shape as int32 dims, bytes against the type.
    size_t count = 1;
    for (int64_t dim : array.shape) {
      if (dim < 0 || dim > INT32_MAX) __builtin_trap();
      count *= static_cast<size_t>(dim);
    }
    if (count * delegato::DataTypeSize(array.type) != array.data.size()) __builtin_trap();
  } catch (const delegato::Error&) {
  }
  return 0;
}
