// Public value types shared by the model, the interpreter and the tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace delegato {

// Element types. The numeric values are those of the TFLite format's TensorType,
// so a type read from a file needs no translation table.
enum class DataType : int8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt32 = 2,
  kUInt8 = 3,
  kInt64 = 4,
  kString = 5,
  kBool = 6,
  kInt16 = 7,
  kComplex64 = 8,
  kInt8 = 9,
  kFloat64 = 10,
  kComplex128 = 11,
  kUInt64 = 12,
  kResource = 13,
  kVariant = 14,
  kUInt32 = 15,
  kUInt16 = 16,
  kInt4 = 17,
  kBFloat16 = 18,
};

constexpr int kMaxDataTypeValue = 22;  // largest TensorType value the format defines

// "FLOAT32", "INT8", ...; "TYPE_<n>" for values the format does not define.
std::string_view DataTypeName(DataType type);

// Size in bytes of one element, or 0 for types without a fixed element size
// (STRING, RESOURCE, VARIANT, INT4, ...), which the runtime does not execute.
size_t DataTypeSize(DataType type);

}  // namespace delegato
