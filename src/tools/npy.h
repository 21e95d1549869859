// NumPy .npy files (format versions 1.0 to 3.0, C order, little-endian).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "delegato/types.h"

namespace delegato::tools {

struct NpyArray {
  DataType type = DataType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

// Throws delegato::Error naming the file on anything malformed or unsupported.
NpyArray ReadNpy(const std::string& path);
// The same on a file's bytes; `label` names them in errors.
NpyArray ParseNpy(std::span<const uint8_t> bytes, const std::string& label);
void WriteNpy(const std::string& path, DataType type, const std::vector<int32_t>& shape,
              const void* data, size_t bytes);

}  // namespace delegato::tools
