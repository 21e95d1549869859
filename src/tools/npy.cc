#include "tools/npy.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

struct DescrEntry {
  const char* descr;
  DataType type;
};
constexpr DescrEntry kDescrs[] = {
    {"<f4", DataType::kFloat32}, {"<f2", DataType::kFloat16}, {"<f8", DataType::kFloat64},
    {"<i4", DataType::kInt32},   {"<i8", DataType::kInt64},   {"<i2", DataType::kInt16},
    {"|i1", DataType::kInt8},    {"|u1", DataType::kUInt8},   {"|b1", DataType::kBool},
    {"<u2", DataType::kUInt16},  {"<u4", DataType::kUInt32},  {"<u8", DataType::kUInt64},
};

// Finds `'key': <value>` in the header dict and returns the raw value text.
std::string HeaderValue(const std::string& header, const std::string& key,
                        const std::string& path) {
  const std::string needle = "'" + key + "':";
  size_t pos = header.find(needle);
  DLG_CHECK(pos != std::string::npos, path, ": .npy header has no '", key, "'");
  pos += needle.size();
  while (pos < header.size() && header[pos] == ' ') ++pos;
  size_t end = pos;
  if (pos < header.size() && header[pos] == '(') {
    end = header.find(')', pos);
    DLG_CHECK(end != std::string::npos, path, ": malformed shape in .npy header");
    return header.substr(pos, end - pos + 1);
  }
  if (pos < header.size() && header[pos] == '\'') {
    end = header.find('\'', pos + 1);
    DLG_CHECK(end != std::string::npos, path, ": malformed .npy header");
    return header.substr(pos + 1, end - pos - 1);
  }
  end = header.find_first_of(",}", pos);
  DLG_CHECK(end != std::string::npos, path, ": malformed .npy header");
  return header.substr(pos, end - pos);
}

}  // namespace

NpyArray ReadNpy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  DLG_CHECK(file, path, ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return ParseNpy(bytes, path);
}

NpyArray ParseNpy(std::span<const uint8_t> bytes, const std::string& path) {
  DLG_CHECK(bytes.size() >= 10 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0, path,
            ": not a .npy file (missing \\x93NUMPY magic)");
  const int major = bytes[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    DLG_CHECK(bytes.size() >= 12, path, ": truncated .npy header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (size_t{bytes[11]} << 24);
    header_start = 12;
  } else {
    Fail(path, ": unsupported .npy format version ", major);
  }
  DLG_CHECK(header_start + header_len <= bytes.size(), path, ": truncated .npy header");
  const std::string header(bytes.begin() + header_start, bytes.begin() + header_start + header_len);

  NpyArray array;
  const std::string descr = HeaderValue(header, "descr", path);
  bool found = false;
  for (const DescrEntry& e : kDescrs) {
    if (descr == e.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(e.descr).substr(1))) {
      array.type = e.type;
      found = true;
    }
  }
  DLG_CHECK(found, path, ": unsupported .npy dtype '", descr,
            "' (little-endian numeric and bool types are supported)");
  const std::string fortran = HeaderValue(header, "fortran_order", path);
  DLG_CHECK(fortran.find("False") != std::string::npos, path,
            ": Fortran-ordered arrays are not supported; save with np.ascontiguousarray");
  const std::string shape = HeaderValue(header, "shape", path);
  uint64_t count = 1;
  size_t pos = 1;
  while (pos < shape.size()) {
    while (pos < shape.size() && (shape[pos] == ' ' || shape[pos] == ',')) ++pos;
    if (pos >= shape.size() || shape[pos] == ')') break;
    DLG_CHECK(shape[pos] >= '0' && shape[pos] <= '9', path, ": malformed shape ", shape);
    uint64_t dim = 0;
    while (pos < shape.size() && shape[pos] >= '0' && shape[pos] <= '9') {
      dim = dim * 10 + static_cast<uint64_t>(shape[pos] - '0');
      // Tensor dimensions are int32.
      DLG_CHECK(dim <= INT32_MAX, path, ": dimension too large in shape ", shape);
      ++pos;
    }
    // Checked before multiplying: count < 2^40 times dim < 2^31 could wrap.
    DLG_CHECK(dim == 0 || count < (uint64_t{1} << 40) / dim, path, ": array too large (shape ",
              shape, ")");
    count *= dim;
    array.shape.push_back(static_cast<int64_t>(dim));
  }
  const size_t data_start = header_start + header_len;
  const uint64_t expected = count * DataTypeSize(array.type);
  DLG_CHECK(bytes.size() - data_start == expected, path, ": holds ", bytes.size() - data_start,
            " data bytes, shape ", shape, " of ", descr, " needs ", expected);
  array.data.assign(bytes.begin() + data_start, bytes.end());
  return array;
}

void WriteNpy(const std::string& path, DataType type, const std::vector<int32_t>& shape,
              const void* data, size_t bytes) {
  const char* descr = nullptr;
  for (const DescrEntry& e : kDescrs)
    if (e.type == type) descr = e.descr;
  DLG_CHECK(descr != nullptr, path, ": cannot write type ", DataTypeName(type), " as .npy");
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) shape_text += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  shape_text += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                       shape_text + ", }";
  // Pad so the data starts on a 64-byte boundary, header ends with '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char preamble[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', '\x01', '\x00',
                             static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  WriteFileAtomically(path, {std::string_view(preamble, sizeof(preamble)), header,
                             std::string_view(static_cast<const char*>(data), bytes)});
}

}  // namespace delegato::tools
