// Prepare-time helpers shared by the shape, gather, reduce and resize ops:
// reading constant integer tensors (axes, shapes, paddings) and checking axes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "ops/kernel.h"

namespace delegato::shape_ops {

// The values of a constant int32 / int64 tensor whose contents decide output
// dims. Fails (naming `what`) when the tensor is not constant, has another
// type, or holds fewer bytes than its dims say. A tensor with no elements
// counts as constant (the format stores no buffer for it).
inline std::vector<int64_t> ConstIntegers(const KernelContext& ctx, const Node& node,
                                          const Tensor& t, std::string_view what) {
  DLG_NODE_CHECK(ctx, node, t.type == DataType::kInt32 || t.type == DataType::kInt64, what,
                 " (tensor \"", t.name, "\") must be INT32 or INT64, is ", DataTypeName(t.type));
  const int64_t count = t.NumElements();
  std::vector<int64_t> values;
  if (count == 0) return values;
  ctx.RequireValues(node, t, "(", what,
                    ") is computed at run time and its values decide output shapes");
  const size_t element = t.type == DataType::kInt32 ? 4 : 8;
  DLG_NODE_CHECK(ctx, node, t.data != nullptr && t.bytes >= static_cast<size_t>(count) * element,
                 what, " (tensor \"", t.name, "\") holds ", t.bytes, " bytes, needs ",
                 count * static_cast<int64_t>(element));
  values.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    if (t.type == DataType::kInt32) {
      int32_t v;
      std::memcpy(&v, t.data + i * 4, 4);
      values[i] = v;
    } else {
      std::memcpy(&values[i], t.data + i * 8, 8);
    }
  }
  return values;
}

// A constant scalar (or one-element) axis tensor.
inline int64_t ConstScalar(const KernelContext& ctx, const Node& node, const Tensor& t,
                           std::string_view what) {
  DLG_NODE_CHECK(ctx, node, t.NumElements() == 1, what, " (tensor \"", t.name,
                 "\") must hold one value, holds ", t.NumElements());
  return ConstIntegers(ctx, node, t, what)[0];
}

// axis in [-rank, rank) -> [0, rank).
inline int ResolveAxis(const KernelContext& ctx, const Node& node, int64_t axis, int rank,
                       std::string_view what) {
  DLG_NODE_CHECK(ctx, node, axis >= -rank && axis < rank, what, " ", axis,
                 " is out of range for rank ", rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Types whose elements these ops move as plain bytes.
inline bool IsPlainType(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat64:
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kInt32:
    case DataType::kUInt32:
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kBool:
    case DataType::kComplex64:
    case DataType::kComplex128:
      return true;
    default:
      return false;
  }
}

inline void CheckPlainType(const KernelContext& ctx, const Node& node, const Tensor& t) {
  DLG_NODE_CHECK(ctx, node, IsPlainType(t.type), "tensor \"", t.name, "\" has type ",
                 DataTypeName(t.type), ", which this op does not support");
}

inline void CheckSameType(const KernelContext& ctx, const Node& node, const Tensor& a,
                          const Tensor& b) {
  DLG_NODE_CHECK(ctx, node, a.type == b.type, "tensor \"", b.name, "\" has type ",
                 DataTypeName(b.type), ", expected ", DataTypeName(a.type), " like tensor \"",
                 a.name, "\"");
}

inline int64_t Product(const std::vector<int32_t>& dims, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= dims[i];
  return n;
}

template <class T>
std::shared_ptr<T> MakeOpData(Node& node) {
  auto data = std::make_shared<T>();
  node.op_data = data;
  return data;
}

}  // namespace delegato::shape_ops
