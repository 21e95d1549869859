#include "delegato/types.h"

namespace delegato {

std::string_view DataTypeName(DataType type) {
  static constexpr std::string_view kNames[] = {
      "FLOAT32", "FLOAT16", "INT32",   "UINT8",  "INT64",      "STRING",
      "BOOL",    "INT16",   "COMPLEX64", "INT8", "FLOAT64",    "COMPLEX128",
      "UINT64",  "RESOURCE", "VARIANT", "UINT32", "UINT16",    "INT4",
      "BFLOAT16", "INT2",   "UINT4",   "FLOAT8_E4M3FN", "FLOAT8_E5M2"};
  const int value = static_cast<int>(type);
  if (value >= 0 && value <= kMaxDataTypeValue) return kNames[value];
  return "UNKNOWN_TYPE";
}

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 4;
    case DataType::kFloat16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kUInt8: return 1;
    case DataType::kInt64: return 8;
    case DataType::kBool: return 1;
    case DataType::kInt16: return 2;
    case DataType::kComplex64: return 8;
    case DataType::kInt8: return 1;
    case DataType::kFloat64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kUInt64: return 8;
    case DataType::kUInt32: return 4;
    case DataType::kUInt16: return 2;
    case DataType::kBFloat16: return 2;
    // A resource tensor holds the int32 id of its resource (as in TFLite).
    case DataType::kResource: return 4;
    default: return 0;
  }
}

}  // namespace delegato
