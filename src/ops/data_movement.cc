// Shape and data-movement ops: SHAPE, RANK, EXPAND_DIMS, FILL, RANGE,
// ZEROS_LIKE, BROADCAST_TO, BROADCAST_ARGS, TILE, SLICE, REVERSE_V2,
// MIRROR_PAD, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND,
// BATCH_TO_SPACE_ND, ONE_HOT.
// Inputs whose values decide output shapes (dims, multiples, begin/size,
// paddings, block shapes, depth, range bounds) must be constants: Prepare
// reads them, and fails naming the node and tensor otherwise.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "kernels/reference/data_movement.h"
#include "ops/kernel.h"
#include "ops/shape_ops_util.h"

namespace delegato {

using shape_ops::CheckPlainType;
using shape_ops::CheckSameType;
using shape_ops::ConstIntegers;
using shape_ops::ConstScalar;
using shape_ops::MakeOpData;
using shape_ops::Product;
using shape_ops::ResolveAxis;

namespace {

template <class P>
const P* ParamsIf(const Node& node) {
  return std::get_if<P>(&node.def->params);
}

std::string DimsText(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

void CheckTypeIn(const KernelContext& ctx, const Node& node, const Tensor& t,
                 std::span<const DataType> types) {
  for (DataType type : types)
    if (t.type == type) return;
  std::string names;
  for (DataType type : types) {
    if (!names.empty()) names += ", ";
    names += DataTypeName(type);
  }
  ctx.Fail(node, "tensor \"", t.name, "\" has type ", DataTypeName(t.type), "; supported: ",
           names);
}

void CheckTypeIn(const KernelContext& ctx, const Node& node, const Tensor& t,
                 std::initializer_list<DataType> types) {
  CheckTypeIn(ctx, node, t, std::span<const DataType>(types.begin(), types.size()));
}

// uint8 / int8 / int16 tensors that carry quantization must keep it from
// input to output (the ops below move values without requantizing).
void CheckSameQuantization(const KernelContext& ctx, const Node& node, const Tensor& in,
                           const Tensor& out) {
  if (in.type != DataType::kUInt8 && in.type != DataType::kInt8 && in.type != DataType::kInt16)
    return;
  DLG_NODE_CHECK(ctx, node, in.scale() == out.scale() && in.zero_point() == out.zero_point(),
                 "output \"", out.name, "\" must have the quantization of input \"", in.name,
                 "\" (scale ", in.scale(), ", zero point ", in.zero_point(), "), has scale ",
                 out.scale(), ", zero point ", out.zero_point());
  if (in.type == DataType::kInt16)
    DLG_NODE_CHECK(ctx, node, in.zero_point() == 0, "int16 tensor \"", in.name,
                   "\" must have zero point 0, has ", in.zero_point());
}

std::vector<int64_t> Strides(const std::vector<int32_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

void CopyInput0(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  if (in.bytes != 0) std::memcpy(ctx.out(node, 0).data, in.data, in.bytes);
}

// ------------------------------------------------------------ mapped copy

// What Prepare precomputes for reference::MappedCopy.
struct MappedCopyData {
  std::vector<int64_t> view_dims, starts, offsets;
  size_t element_size = 0;
  uint64_t pad_bits = 0;  // the pad value's bytes (MIRROR_PAD has none)
};

class MappedCopyBuilder {
 public:
  explicit MappedCopyBuilder(MappedCopyData& data) : data_(data) {}
  // Adds a view dim of size n; offset(i) gives the input element offset.
  template <class F>
  void AddDim(int64_t n, F offset) {
    data_.view_dims.push_back(n);
    data_.starts.push_back(static_cast<int64_t>(data_.offsets.size()));
    for (int64_t i = 0; i < n; ++i) data_.offsets.push_back(offset(i));
  }

 private:
  MappedCopyData& data_;
};

void EvalMappedCopy(KernelContext& ctx, const Node& node) {
  const MappedCopyData& d = *node.data<MappedCopyData>();
  const int rank = static_cast<int>(d.view_dims.size());
  const void* in = ctx.in(node, 0).data;
  void* out = ctx.out(node, 0).data;
  if (ctx.out(node, 0).NumElements() == 0) return;
  switch (d.element_size) {
    case 1:
      reference::MappedCopy(rank, d.view_dims.data(), d.starts.data(), d.offsets.data(),
                            static_cast<uint8_t>(d.pad_bits), static_cast<const uint8_t*>(in),
                            static_cast<uint8_t*>(out));
      break;
    case 2:
      reference::MappedCopy(rank, d.view_dims.data(), d.starts.data(), d.offsets.data(),
                            static_cast<uint16_t>(d.pad_bits), static_cast<const uint16_t*>(in),
                            static_cast<uint16_t*>(out));
      break;
    case 4:
      reference::MappedCopy(rank, d.view_dims.data(), d.starts.data(), d.offsets.data(),
                            static_cast<uint32_t>(d.pad_bits), static_cast<const uint32_t*>(in),
                            static_cast<uint32_t*>(out));
      break;
    default:
      reference::MappedCopy(rank, d.view_dims.data(), d.starts.data(), d.offsets.data(),
                            d.pad_bits, static_cast<const uint64_t*>(in),
                            static_cast<uint64_t*>(out));
      break;
  }
}

// Types the copy ops move (by element size 1, 2, 4 or 8).
constexpr DataType kMovableTypes[] = {
    DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,
    DataType::kUInt8,   DataType::kInt16,   DataType::kUInt16,   DataType::kInt32,
    DataType::kInt64,   DataType::kUInt32,  DataType::kBool};

}  // namespace

// ------------------------------------------------------------------ SHAPE, RANK

namespace {
struct ShapeValues {
  std::vector<int64_t> values;
};
}  // namespace

void PrepareShape(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  Tensor& out = ctx.output(node, 0);
  const ShapeParams* params = ParamsIf<ShapeParams>(node);
  DLG_NODE_CHECK(ctx, node, params != nullptr,
                 "SHAPE needs ShapeOptions with out_type INT32 or INT64; the node has none");
  DLG_NODE_CHECK(ctx, node,
                 params->out_type == DataType::kInt32 || params->out_type == DataType::kInt64,
                 "out_type ", DataTypeName(params->out_type), " is not INT32 or INT64");
  DLG_NODE_CHECK(ctx, node, out.type == params->out_type, "output \"", out.name, "\" has type ",
                 DataTypeName(out.type), ", out_type says ", DataTypeName(params->out_type));
  auto data = MakeOpData<ShapeValues>(node);
  data->values.assign(in.dims.begin(), in.dims.end());
  ctx.SetOutputDims(node, 0, {in.rank()});
}

void EvalShape(KernelContext& ctx, const Node& node) {
  const ShapeValues& d = *node.data<ShapeValues>();
  Tensor& out = ctx.out(node, 0);
  for (size_t i = 0; i < d.values.size(); ++i) {
    if (out.type == DataType::kInt32)
      out.data_as<int32_t>()[i] = static_cast<int32_t>(d.values[i]);
    else
      out.data_as<int64_t>()[i] = d.values[i];
  }
}

void PrepareRank(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  Tensor& out = ctx.output(node, 0);
  ctx.CheckType(node, out, DataType::kInt32);
  auto data = MakeOpData<ShapeValues>(node);
  data->values = {in.rank()};
  ctx.SetOutputDims(node, 0, {});
}

void EvalRank(KernelContext& ctx, const Node& node) {
  ctx.out(node, 0).data_as<int32_t>()[0] = static_cast<int32_t>(node.data<ShapeValues>()->values[0]);
}

// ------------------------------------------------------------------ EXPAND_DIMS

void PrepareExpandDims(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  CheckPlainType(ctx, node, in);
  CheckSameType(ctx, node, in, out);
  const int64_t axis = ConstScalar(ctx, node, ctx.input(node, 1), "axis");
  const int d = ResolveAxis(ctx, node, axis, in.rank() + 1, "axis");
  std::vector<int32_t> dims = in.dims;
  dims.insert(dims.begin() + d, 1);
  ctx.SetOutputDims(node, 0, dims);
}

void EvalExpandDims(KernelContext& ctx, const Node& node) { CopyInput0(ctx, node); }

// ------------------------------------------------------------------ ZEROS_LIKE

void PrepareZerosLike(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckTypeIn(ctx, node, in, {DataType::kFloat32, DataType::kInt32, DataType::kInt64});
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  ctx.SetOutputDims(node, 0, in.dims);
}

void EvalZerosLike(KernelContext& ctx, const Node& node) {
  Tensor& out = ctx.out(node, 0);
  if (out.bytes != 0) std::memset(out.data, 0, out.bytes);
}

// ------------------------------------------------------------------ FILL

void PrepareFill(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& dims_tensor = ctx.input(node, 0);
  const Tensor& value = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, dims_tensor.rank() == 1, "dims (tensor \"", dims_tensor.name,
                 "\") must be 1-D, has shape ", DimsText(dims_tensor.dims));
  DLG_NODE_CHECK(ctx, node, value.rank() == 0, "value (tensor \"", value.name,
                 "\") must be a scalar, has shape ", DimsText(value.dims));
  CheckTypeIn(ctx, node, value,
              {DataType::kFloat32, DataType::kFloat16, DataType::kInt8, DataType::kUInt8,
               DataType::kInt16, DataType::kUInt16, DataType::kInt32, DataType::kUInt32,
               DataType::kInt64, DataType::kBool});
  CheckSameType(ctx, node, value, out);
  DLG_NODE_CHECK(ctx, node, value.scale() == out.scale() && value.zero_point() == out.zero_point(),
                 "output \"", out.name, "\" must have the quantization of value \"", value.name,
                 "\"");
  if (value.type == DataType::kInt16)
    DLG_NODE_CHECK(ctx, node, value.zero_point() == 0, "int16 value \"", value.name,
                   "\" must have zero point 0");
  const std::vector<int64_t> dims = ConstIntegers(ctx, node, dims_tensor, "dims");
  std::vector<int32_t> out_dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    DLG_NODE_CHECK(ctx, node, dims[i] >= 0 && dims[i] <= INT32_MAX, "dims[", i, "] is ", dims[i],
                   "; fill dimensions must be >= 0");
    out_dims.push_back(static_cast<int32_t>(dims[i]));
  }
  ctx.SetOutputDims(node, 0, out_dims);
}

void EvalFill(KernelContext& ctx, const Node& node) {
  const Tensor& value = ctx.in(node, 1);
  Tensor& out = ctx.out(node, 0);
  const int64_t n = out.NumElements();
  switch (DataTypeSize(out.type)) {
    case 1:
      reference::Fill(value.data_as<uint8_t>()[0], n, out.data_as<uint8_t>());
      break;
    case 2:
      reference::Fill(value.data_as<uint16_t>()[0], n, out.data_as<uint16_t>());
      break;
    case 4:
      reference::Fill(value.data_as<uint32_t>()[0], n, out.data_as<uint32_t>());
      break;
    default:
      reference::Fill(value.data_as<uint64_t>()[0], n, out.data_as<uint64_t>());
      break;
  }
}

// ------------------------------------------------------------------ RANGE

namespace {

struct RangeData {
  bool quantized = false;
  float start = 0, delta = 0, scale = 1;
  int32_t zero_point = 0;
};

template <class T>
T ConstValue(const Tensor& t) {
  T v;
  std::memcpy(&v, t.data, sizeof(T));
  return v;
}

// The element count TFLite computes for [start, limit) by delta.
template <class T>
int64_t RangeCount(const KernelContext& ctx, const Node& node, T start, T limit, T delta) {
  DLG_NODE_CHECK(ctx, node, !(delta == 0), "delta must not be 0");
  DLG_NODE_CHECK(ctx, node, (start >= limit && delta < 0) || (start <= limit && delta > 0),
                 "delta has the wrong sign for start ", start, " and limit ", limit);
  double count;
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    count = static_cast<double>((span + step - 1) / step);
  } else {
    count = std::ceil(std::abs((limit - start) / delta));
  }
  DLG_NODE_CHECK(ctx, node, count <= INT32_MAX, "range of ", count, " elements is too large");
  return static_cast<int64_t>(count);
}

}  // namespace

void PrepareRange(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& start = ctx.input(node, 0);
  const Tensor& limit = ctx.input(node, 1);
  const Tensor& delta = ctx.input(node, 2);
  const Tensor& out = ctx.output(node, 0);
  for (const Tensor* t : {&start, &limit, &delta}) {
    DLG_NODE_CHECK(ctx, node, t->rank() == 0, "tensor \"", t->name, "\" must be a scalar, has shape ",
                   DimsText(t->dims));
    ctx.RequireValues(node, *t, "is computed at run time and the range's values decide the "
                      "output size");
    DLG_NODE_CHECK(ctx, node, t->data != nullptr && t->bytes >= DataTypeSize(t->type),
                   "tensor \"", t->name, "\" has no data");
  }
  CheckTypeIn(ctx, node, start,
              {DataType::kFloat32, DataType::kInt32, DataType::kInt64, DataType::kInt8,
               DataType::kInt16});
  CheckSameType(ctx, node, start, limit);
  CheckSameType(ctx, node, start, delta);
  CheckSameType(ctx, node, start, out);
  auto data = MakeOpData<RangeData>(node);
  int64_t count = 0;
  switch (start.type) {
    case DataType::kFloat32:
      count = RangeCount(ctx, node, ConstValue<float>(start), ConstValue<float>(limit),
                         ConstValue<float>(delta));
      break;
    case DataType::kInt32:
      count = RangeCount(ctx, node, ConstValue<int32_t>(start), ConstValue<int32_t>(limit),
                         ConstValue<int32_t>(delta));
      break;
    case DataType::kInt64:
      count = RangeCount(ctx, node, ConstValue<int64_t>(start), ConstValue<int64_t>(limit),
                         ConstValue<int64_t>(delta));
      break;
    default: {
      // int8 / int16: quantized when the tensor carries a scale.
      const bool is8 = start.type == DataType::kInt8;
      auto raw = [&](const Tensor& t) -> int32_t {
        return is8 ? ConstValue<int8_t>(t) : ConstValue<int16_t>(t);
      };
      if (start.quantization->empty()) {
        count = is8 ? RangeCount(ctx, node, ConstValue<int8_t>(start), ConstValue<int8_t>(limit),
                                 ConstValue<int8_t>(delta))
                    : RangeCount(ctx, node, ConstValue<int16_t>(start),
                                 ConstValue<int16_t>(limit), ConstValue<int16_t>(delta));
        break;
      }
      // Each input is dequantized with its own parameters, in double, then
      // narrowed to float; the count is computed as for an integer type.
      auto dequantize = [&](const Tensor& t) {
        return static_cast<float>(static_cast<double>(t.scale()) * (raw(t) - t.zero_point()));
      };
      const float s = dequantize(start), l = dequantize(limit), dl = dequantize(delta);
      DLG_NODE_CHECK(ctx, node, !(dl == 0), "delta must not be 0");
      DLG_NODE_CHECK(ctx, node, (s >= l && dl < 0) || (s <= l && dl > 0),
                     "delta has the wrong sign for start ", s, " and limit ", l);
      const float c = (std::abs(l - s) + std::abs(dl) - 1) / std::abs(dl);
      DLG_NODE_CHECK(ctx, node, c <= static_cast<float>(INT32_MAX), "range is too large");
      count = static_cast<int32_t>(c);
      data->quantized = true;
      data->start = s;
      data->delta = dl;
      data->scale = start.scale();
      data->zero_point = start.zero_point();
      break;
    }
  }
  ctx.SetOutputDims(node, 0, {static_cast<int32_t>(count)});
}

void EvalRange(KernelContext& ctx, const Node& node) {
  const RangeData& d = *node.data<RangeData>();
  const Tensor& start = ctx.in(node, 0);
  const Tensor& delta = ctx.in(node, 2);
  Tensor& out = ctx.out(node, 0);
  const int64_t n = out.NumElements();
  switch (out.type) {
    case DataType::kFloat32:
      reference::Range(ConstValue<float>(start), ConstValue<float>(delta), n, out.data_as<float>());
      break;
    case DataType::kInt32:
      reference::Range(ConstValue<int32_t>(start), ConstValue<int32_t>(delta), n,
                       out.data_as<int32_t>());
      break;
    case DataType::kInt64:
      reference::Range(ConstValue<int64_t>(start), ConstValue<int64_t>(delta), n,
                       out.data_as<int64_t>());
      break;
    case DataType::kInt8:
      if (d.quantized)
        reference::RangeQuantized(d.start, d.delta, d.scale, d.zero_point, n,
                                  out.data_as<int8_t>());
      else
        reference::Range(ConstValue<int8_t>(start), ConstValue<int8_t>(delta), n,
                         out.data_as<int8_t>());
      break;
    default:
      if (d.quantized)
        reference::RangeQuantized(d.start, d.delta, d.scale, d.zero_point, n,
                                  out.data_as<int16_t>());
      else
        reference::Range(ConstValue<int16_t>(start), ConstValue<int16_t>(delta), n,
                         out.data_as<int16_t>());
      break;
  }
}

// ------------------------------------------------------------------ BROADCAST_ARGS

void PrepareBroadcastArgs(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& s0 = ctx.input(node, 0);
  const Tensor& s1 = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  CheckTypeIn(ctx, node, s0, {DataType::kInt32, DataType::kInt64});
  CheckSameType(ctx, node, s0, s1);
  CheckSameType(ctx, node, s0, out);
  for (const Tensor* t : {&s0, &s1})
    DLG_NODE_CHECK(ctx, node, t->rank() == 1, "shape tensor \"", t->name,
                   "\" must be 1-D, has shape ", DimsText(t->dims));
  ctx.SetOutputDims(node, 0, {std::max(s0.dims[0], s1.dims[0])});
}

namespace {
template <class T>
bool BroadcastArgs(const T* a, int64_t na, const T* b, int64_t nb, T* out) {
  const int64_t n = std::max(na, nb);
  for (int64_t i = 0; i < n; ++i) {
    // Aligned from the right; a missing dim counts as 1.
    const T x = i < n - na ? T{1} : a[i - (n - na)];
    const T y = i < n - nb ? T{1} : b[i - (n - nb)];
    if (x != y && x != 1 && y != 1) return false;
    out[i] = x == 1 ? y : x;
  }
  return true;
}
}  // namespace

void EvalBroadcastArgs(KernelContext& ctx, const Node& node) {
  const Tensor& s0 = ctx.in(node, 0);
  const Tensor& s1 = ctx.in(node, 1);
  Tensor& out = ctx.out(node, 0);
  const bool ok =
      s0.type == DataType::kInt32
          ? BroadcastArgs(s0.data_as<int32_t>(), s0.dims[0], s1.data_as<int32_t>(), s1.dims[0],
                          out.data_as<int32_t>())
          : BroadcastArgs(s0.data_as<int64_t>(), s0.dims[0], s1.data_as<int64_t>(), s1.dims[0],
                          out.data_as<int64_t>());
  if (!ok) ctx.SetEvalError(node, "the two shapes are not broadcast-compatible");
}

// ------------------------------------------------------------------ BROADCAST_TO

void PrepareBroadcastTo(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& shape_tensor = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  CheckTypeIn(ctx, node, in, kMovableTypes);
  CheckSameType(ctx, node, in, out);
  DLG_NODE_CHECK(ctx, node, shape_tensor.rank() == 1, "shape (tensor \"", shape_tensor.name,
                 "\") must be 1-D, has shape ", DimsText(shape_tensor.dims));
  const std::vector<int64_t> shape = ConstIntegers(ctx, node, shape_tensor, "shape");
  const int out_rank = static_cast<int>(shape.size());
  const int in_rank = in.rank();
  DLG_NODE_CHECK(ctx, node, in_rank <= 8 && out_rank <= 8, "BROADCAST_TO supports rank <= 8; "
                 "input rank ", in_rank, ", output rank ", out_rank);
  DLG_NODE_CHECK(ctx, node, out_rank >= in_rank, "shape ", "has rank ", out_rank,
                 ", below input \"", in.name, "\"'s rank ", in_rank);
  std::vector<int32_t> dims(out_rank);
  for (int d = 0; d < out_rank; ++d) {
    DLG_NODE_CHECK(ctx, node, shape[d] >= 0 && shape[d] <= INT32_MAX, "shape[", d, "] is ",
                   shape[d]);
    dims[d] = static_cast<int32_t>(shape[d]);
    const int id = d - (out_rank - in_rank);
    if (id >= 0)
      DLG_NODE_CHECK(ctx, node, in.dims[id] == 1 || in.dims[id] == dims[d], "input \"", in.name,
                     "\" ", DimsText(in.dims), " cannot be broadcast to ", DimsText(dims));
  }
  auto data = MakeOpData<MappedCopyData>(node);
  data->element_size = DataTypeSize(in.type);
  const std::vector<int64_t> strides = Strides(in.dims);
  MappedCopyBuilder b(*data);
  for (int d = 0; d < out_rank; ++d) {
    const int id = d - (out_rank - in_rank);
    const bool repeat = id < 0 || in.dims[id] == 1;
    const int64_t stride = id < 0 ? 0 : strides[id];
    b.AddDim(dims[d], [&](int64_t i) { return repeat ? 0 : i * stride; });
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalBroadcastTo(KernelContext& ctx, const Node& node) { EvalMappedCopy(ctx, node); }

// ------------------------------------------------------------------ TILE

void PrepareTile(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& multiples_tensor = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  CheckTypeIn(ctx, node, in, kMovableTypes);
  CheckSameType(ctx, node, in, out);
  DLG_NODE_CHECK(ctx, node,
                 multiples_tensor.rank() == 1 && multiples_tensor.dims[0] == in.rank(),
                 "multiples (tensor \"", multiples_tensor.name, "\") has shape ",
                 DimsText(multiples_tensor.dims), ", expected [", in.rank(), "]");
  const std::vector<int64_t> multiples =
      ConstIntegers(ctx, node, multiples_tensor, "multiples");
  std::vector<int32_t> dims(in.rank());
  auto data = MakeOpData<MappedCopyData>(node);
  data->element_size = DataTypeSize(in.type);
  const std::vector<int64_t> strides = Strides(in.dims);
  MappedCopyBuilder b(*data);
  for (int d = 0; d < in.rank(); ++d) {
    DLG_NODE_CHECK(ctx, node, multiples[d] >= 0, "multiples[", d, "] is ", multiples[d],
                   ", must be >= 0");
    const int64_t size = in.dims[d] * multiples[d];
    DLG_NODE_CHECK(ctx, node, size <= INT32_MAX, "tiled dim ", d, " is too large");
    dims[d] = static_cast<int32_t>(size);
    const int64_t n = in.dims[d], stride = strides[d];
    b.AddDim(size, [&](int64_t i) { return (i % n) * stride; });
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalTile(KernelContext& ctx, const Node& node) { EvalMappedCopy(ctx, node); }

// ------------------------------------------------------------------ SLICE

void PrepareSlice(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& begin_tensor = ctx.input(node, 1);
  const Tensor& size_tensor = ctx.input(node, 2);
  const Tensor& out = ctx.output(node, 0);
  CheckTypeIn(ctx, node, in, kMovableTypes);
  CheckSameType(ctx, node, in, out);
  CheckSameType(ctx, node, begin_tensor, size_tensor);
  const int rank = in.rank();
  for (const Tensor* t : {&begin_tensor, &size_tensor})
    DLG_NODE_CHECK(ctx, node, t->rank() == 1 && t->dims[0] == rank, "tensor \"", t->name,
                   "\" has shape ", DimsText(t->dims), ", expected [", rank, "]");
  const std::vector<int64_t> begin = ConstIntegers(ctx, node, begin_tensor, "begin");
  const std::vector<int64_t> size = ConstIntegers(ctx, node, size_tensor, "size");
  std::vector<int32_t> dims(rank);
  auto data = MakeOpData<MappedCopyData>(node);
  data->element_size = DataTypeSize(in.type);
  const std::vector<int64_t> strides = Strides(in.dims);
  MappedCopyBuilder b(*data);
  for (int d = 0; d < rank; ++d) {
    const int64_t n = in.dims[d];
    const int64_t s = size[d] == -1 ? n - begin[d] : size[d];
    DLG_NODE_CHECK(ctx, node, begin[d] >= 0 && s >= 0 && begin[d] + s <= n, "dim ", d,
                   ": begin ", begin[d], " and size ", size[d], " do not fit input \"", in.name,
                   "\" ", DimsText(in.dims));
    dims[d] = static_cast<int32_t>(s);
    const int64_t start = begin[d], stride = strides[d];
    b.AddDim(s, [&](int64_t i) { return (start + i) * stride; });
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalSlice(KernelContext& ctx, const Node& node) { EvalMappedCopy(ctx, node); }

// ------------------------------------------------------------------ REVERSE_V2

void PrepareReverseV2(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& axis_tensor = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  CheckTypeIn(ctx, node, in, kMovableTypes);
  CheckSameType(ctx, node, in, out);
  ctx.CheckType(node, axis_tensor, DataType::kInt32);
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node, axis_tensor.rank() == 1 && axis_tensor.dims[0] <= rank && rank <= 8,
                 "axis (tensor \"", axis_tensor.name, "\") has shape ",
                 DimsText(axis_tensor.dims), "; input rank ", rank,
                 " (rank <= 8, at most rank axes)");
  const std::vector<int64_t> axes = ConstIntegers(ctx, node, axis_tensor, "axis");
  std::vector<bool> reversed(rank, false);
  std::vector<int> sorted;
  for (int64_t a : axes) {
    const int d = ResolveAxis(ctx, node, a, rank, "axis");
    reversed[d] = true;
    sorted.push_back(d);
  }
  // TFLite's kernel reverses one contiguous run of axes only.
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i)
    DLG_NODE_CHECK(ctx, node, sorted[i] == sorted[i - 1] + 1,
                   "axes must be contiguous (non-contiguous axes are not supported)");
  auto data = MakeOpData<MappedCopyData>(node);
  data->element_size = DataTypeSize(in.type);
  const std::vector<int64_t> strides = Strides(in.dims);
  MappedCopyBuilder b(*data);
  for (int d = 0; d < rank; ++d) {
    const int64_t n = in.dims[d], stride = strides[d];
    const bool rev = reversed[d];
    b.AddDim(n, [&](int64_t i) { return (rev ? n - 1 - i : i) * stride; });
  }
  ctx.SetOutputDims(node, 0, in.dims);
}

void EvalReverseV2(KernelContext& ctx, const Node& node) { EvalMappedCopy(ctx, node); }

// ------------------------------------------------------------------ MIRROR_PAD

void PrepareMirrorPad(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& paddings_tensor = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  CheckTypeIn(ctx, node, in, kMovableTypes);
  CheckSameType(ctx, node, in, out);
  CheckSameQuantization(ctx, node, in, out);
  const MirrorPadParams* params = ParamsIf<MirrorPadParams>(node);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "MIRROR_PAD needs MirrorPadOptions; the node has none");
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node,
                 paddings_tensor.rank() == 2 && paddings_tensor.dims[0] == rank &&
                     paddings_tensor.dims[1] == 2,
                 "paddings (tensor \"", paddings_tensor.name, "\") has shape ",
                 DimsText(paddings_tensor.dims), ", expected [", rank, ",2]");
  const std::vector<int64_t> paddings = ConstIntegers(ctx, node, paddings_tensor, "paddings");
  const bool reflect = params->mode == MirrorPadMode::kReflect;
  auto data = MakeOpData<MappedCopyData>(node);
  data->element_size = DataTypeSize(in.type);
  const std::vector<int64_t> strides = Strides(in.dims);
  MappedCopyBuilder b(*data);
  std::vector<int32_t> dims(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t n = in.dims[d], before = paddings[2 * d], after = paddings[2 * d + 1];
    // REFLECT mirrors around the edge element (pads up to n - 1), SYMMETRIC
    // repeats it (pads up to n).
    const int64_t limit = reflect ? n - 1 : n;
    DLG_NODE_CHECK(ctx, node, before >= 0 && after >= 0 && before <= limit && after <= limit,
                   "paddings of dim ", d, " (", before, ", ", after, ") must be in [0, ", limit,
                   "] for ", reflect ? "REFLECT" : "SYMMETRIC", " mode and size ", n);
    const int64_t size = n + before + after;
    DLG_NODE_CHECK(ctx, node, size <= INT32_MAX, "padded dim ", d, " is too large");
    dims[d] = static_cast<int32_t>(size);
    const int64_t stride = strides[d];
    b.AddDim(size, [&](int64_t i) {
      int64_t index;
      if (i < before)
        index = reflect ? before - i : before - 1 - i;
      else if (i < before + n)
        index = i - before;
      else
        index = reflect ? n - 2 - (i - before - n) : n - 1 - (i - before - n);
      return index * stride;
    });
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalMirrorPad(KernelContext& ctx, const Node& node) { EvalMappedCopy(ctx, node); }

// ------------------------------------------------------ DEPTH_TO_SPACE, SPACE_TO_DEPTH

namespace {

int32_t BlockSize(const KernelContext& ctx, const Node& node) {
  const BlockSizeParams* params = ParamsIf<BlockSizeParams>(node);
  DLG_NODE_CHECK(ctx, node, params != nullptr, node.op_name, " needs its options (block_size)");
  // block_size^2 times a depth must fit in int32, so it cannot exceed 46340.
  DLG_NODE_CHECK(ctx, node, params->block_size >= 1 && params->block_size <= 46340,
                 "block_size ", params->block_size, " must be in [1, 46340]");
  return params->block_size;
}

void CheckDepthSpaceInput(const KernelContext& ctx, const Node& node, const Tensor& in,
                          const Tensor& out) {
  CheckTypeIn(ctx, node, in,
              {DataType::kFloat32, DataType::kUInt8, DataType::kInt8, DataType::kInt16,
               DataType::kInt32, DataType::kInt64});
  CheckSameType(ctx, node, in, out);
  DLG_NODE_CHECK(ctx, node, in.rank() == 4, "input \"", in.name, "\" must be 4-D (NHWC), has shape ",
                 DimsText(in.dims));
}

}  // namespace

void PrepareDepthToSpace(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  CheckDepthSpaceInput(ctx, node, in, out);
  const int64_t bs = BlockSize(ctx, node);
  const int64_t B = in.dims[0], H = in.dims[1], W = in.dims[2], C = in.dims[3];
  DLG_NODE_CHECK(ctx, node, C % (bs * bs) == 0, "input depth ", C,
                 " is not a multiple of block_size^2 = ", bs * bs);
  const int64_t Co = C / (bs * bs);
  DLG_NODE_CHECK(ctx, node, H * bs <= INT32_MAX && W * bs <= INT32_MAX, "output is too large");
  auto data = MakeOpData<MappedCopyData>(node);
  data->element_size = DataTypeSize(in.type);
  MappedCopyBuilder b(*data);
  // Output viewed as [B, H, bs, W, bs, Co]: depth index (bh * bs + bw) * Co + c.
  b.AddDim(B, [&](int64_t i) { return i * H * W * C; });
  b.AddDim(H, [&](int64_t i) { return i * W * C; });
  b.AddDim(bs, [&](int64_t i) { return i * bs * Co; });
  b.AddDim(W, [&](int64_t i) { return i * C; });
  b.AddDim(bs, [&](int64_t i) { return i * Co; });
  b.AddDim(Co, [&](int64_t i) { return i; });
  ctx.SetOutputDims(node, 0,
                    {static_cast<int32_t>(B), static_cast<int32_t>(H * bs),
                     static_cast<int32_t>(W * bs), static_cast<int32_t>(Co)});
}

void EvalDepthToSpace(KernelContext& ctx, const Node& node) { EvalMappedCopy(ctx, node); }

void PrepareSpaceToDepth(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  CheckDepthSpaceInput(ctx, node, in, out);
  const int64_t bs = BlockSize(ctx, node);
  const int64_t B = in.dims[0], H = in.dims[1], W = in.dims[2], C = in.dims[3];
  DLG_NODE_CHECK(ctx, node, H % bs == 0 && W % bs == 0, "input height ", H, " and width ", W,
                 " must be multiples of block_size ", bs);
  DLG_NODE_CHECK(ctx, node, C * bs * bs <= INT32_MAX, "output is too large");
  auto data = MakeOpData<MappedCopyData>(node);
  data->element_size = DataTypeSize(in.type);
  MappedCopyBuilder b(*data);
  // Output viewed as [B, H/bs, W/bs, bs, bs, C].
  b.AddDim(B, [&](int64_t i) { return i * H * W * C; });
  b.AddDim(H / bs, [&](int64_t i) { return i * bs * W * C; });
  b.AddDim(W / bs, [&](int64_t i) { return i * bs * C; });
  b.AddDim(bs, [&](int64_t i) { return i * W * C; });
  b.AddDim(bs, [&](int64_t i) { return i * C; });
  b.AddDim(C, [&](int64_t i) { return i; });
  ctx.SetOutputDims(node, 0,
                    {static_cast<int32_t>(B), static_cast<int32_t>(H / bs),
                     static_cast<int32_t>(W / bs), static_cast<int32_t>(C * bs * bs)});
}

void EvalSpaceToDepth(KernelContext& ctx, const Node& node) { EvalMappedCopy(ctx, node); }

// ------------------------------------------------ SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND

namespace {

struct BatchSpaceData {
  int32_t in_dims[4] = {}, out_dims[4] = {};  // 4-D views (3-D tensors get width 1)
  int32_t block_h = 1, block_w = 1, before_h = 0, before_w = 0;
  size_t element_size = 0;
  uint64_t pad_bits = 0;
};

// The common checks; returns the 4-D view of the input, block and the
// [spatial, 2] paddings or crops.
void PrepareBatchSpace(KernelContext& ctx, Node& node, bool to_batch) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& block_tensor = ctx.input(node, 1);
  const Tensor& pads_tensor = ctx.input(node, 2);
  const Tensor& out = ctx.output(node, 0);
  if (to_batch) {
    // LiteRT's SPACE_TO_BATCH_ND also takes these; its padding is all-zero bits.
    CheckTypeIn(ctx, node, in,
                {DataType::kFloat32, DataType::kFloat16, DataType::kUInt8, DataType::kInt8,
                 DataType::kInt16, DataType::kUInt16, DataType::kInt32, DataType::kUInt32,
                 DataType::kInt64, DataType::kBool});
  } else {
    CheckTypeIn(ctx, node, in,
                {DataType::kFloat32, DataType::kUInt8, DataType::kInt8, DataType::kInt16,
                 DataType::kInt32, DataType::kInt64});
  }
  CheckSameType(ctx, node, in, out);
  CheckSameQuantization(ctx, node, in, out);
  DLG_NODE_CHECK(ctx, node, in.rank() == 3 || in.rank() == 4, "input \"", in.name,
                 "\" must be 3-D or 4-D, has shape ", DimsText(in.dims));
  const int spatial = in.rank() - 2;
  ctx.CheckType(node, block_tensor, DataType::kInt32);
  ctx.CheckType(node, pads_tensor, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, block_tensor.rank() == 1 && block_tensor.dims[0] == spatial,
                 "block_shape (tensor \"", block_tensor.name, "\") has shape ",
                 DimsText(block_tensor.dims), ", expected [", spatial, "]");
  const char* pads_name = to_batch ? "paddings" : "crops";
  DLG_NODE_CHECK(ctx, node,
                 pads_tensor.rank() == 2 && pads_tensor.dims[0] == spatial &&
                     pads_tensor.dims[1] == 2,
                 pads_name, " (tensor \"", pads_tensor.name, "\") has shape ",
                 DimsText(pads_tensor.dims), ", expected [", spatial, ",2]");
  const std::vector<int64_t> block = ConstIntegers(ctx, node, block_tensor, "block_shape");
  const std::vector<int64_t> pads = ConstIntegers(ctx, node, pads_tensor, pads_name);

  auto data = MakeOpData<BatchSpaceData>(node);
  data->element_size = DataTypeSize(in.type);
  const int32_t view[4] = {in.dims[0], in.dims[1], spatial == 2 ? in.dims[2] : 1,
                           in.dims[in.rank() - 1]};
  std::copy(view, view + 4, data->in_dims);
  int64_t blocks[2] = {1, 1}, before[2] = {0, 0}, after[2] = {0, 0};
  for (int s = 0; s < spatial; ++s) {
    blocks[s] = block[s];
    before[s] = pads[2 * s];
    after[s] = pads[2 * s + 1];
    DLG_NODE_CHECK(ctx, node, blocks[s] >= 1, "block_shape[", s, "] is ", blocks[s],
                   ", must be >= 1");
    DLG_NODE_CHECK(ctx, node, before[s] >= 0 && after[s] >= 0, pads_name, " of spatial dim ", s,
                   " (", before[s], ", ", after[s], ") must not be negative");
  }
  int64_t out_view[4] = {view[0], view[1], view[2], view[3]};
  if (to_batch) {
    for (int s = 0; s < 2; ++s) {
      const int64_t padded = view[1 + s] + before[s] + after[s];
      DLG_NODE_CHECK(ctx, node, padded % blocks[s] == 0, "padded spatial dim ", s, " (", padded,
                     ") is not a multiple of block ", blocks[s]);
      out_view[1 + s] = padded / blocks[s];
    }
    out_view[0] = view[0] * blocks[0] * blocks[1];
  } else {
    DLG_NODE_CHECK(ctx, node, view[0] % (blocks[0] * blocks[1]) == 0, "input batch ", view[0],
                   " is not a multiple of the block size ", blocks[0] * blocks[1]);
    out_view[0] = view[0] / (blocks[0] * blocks[1]);
    for (int s = 0; s < 2; ++s) {
      const int64_t size = view[1 + s] * blocks[s] - before[s] - after[s];
      DLG_NODE_CHECK(ctx, node, size >= 0, "crops of spatial dim ", s, " (", before[s], ", ",
                     after[s], ") exceed its size ", view[1 + s] * blocks[s]);
      out_view[1 + s] = size;
    }
  }
  for (int i = 0; i < 4; ++i) {
    DLG_NODE_CHECK(ctx, node, out_view[i] <= INT32_MAX, "output is too large");
    data->out_dims[i] = static_cast<int32_t>(out_view[i]);
  }
  data->block_h = static_cast<int32_t>(blocks[0]);
  data->block_w = static_cast<int32_t>(blocks[1]);
  data->before_h = static_cast<int32_t>(before[0]);
  data->before_w = static_cast<int32_t>(before[1]);
  // Padding is the output's zero point for 8- and 16-bit types, else zero.
  if (data->element_size <= 2) {
    const int64_t zp = out.zero_point();
    data->pad_bits = static_cast<uint64_t>(zp) & (data->element_size == 1 ? 0xFF : 0xFFFF);
  }
  std::vector<int32_t> dims = {data->out_dims[0], data->out_dims[1]};
  if (spatial == 2) dims.push_back(data->out_dims[2]);
  dims.push_back(data->out_dims[3]);
  ctx.SetOutputDims(node, 0, dims);
}

template <class T>
void RunBatchSpace(const BatchSpaceData& d, bool to_batch, const void* in, void* out) {
  if (to_batch)
    reference::SpaceToBatchNd(d.in_dims, d.out_dims, d.block_h, d.block_w, d.before_h,
                              d.before_w, static_cast<T>(d.pad_bits), static_cast<const T*>(in),
                              static_cast<T*>(out));
  else
    reference::BatchToSpaceNd(d.in_dims, d.out_dims, d.block_h, d.block_w, d.before_h,
                              d.before_w, static_cast<const T*>(in), static_cast<T*>(out));
}

void EvalBatchSpace(KernelContext& ctx, const Node& node, bool to_batch) {
  const BatchSpaceData& d = *node.data<BatchSpaceData>();
  const void* in = ctx.in(node, 0).data;
  void* out = ctx.out(node, 0).data;
  switch (d.element_size) {
    case 1: RunBatchSpace<uint8_t>(d, to_batch, in, out); break;
    case 2: RunBatchSpace<uint16_t>(d, to_batch, in, out); break;
    case 4: RunBatchSpace<uint32_t>(d, to_batch, in, out); break;
    default: RunBatchSpace<uint64_t>(d, to_batch, in, out); break;
  }
}

}  // namespace

void PrepareSpaceToBatchNd(KernelContext& ctx, Node& node) { PrepareBatchSpace(ctx, node, true); }
void EvalSpaceToBatchNd(KernelContext& ctx, const Node& node) { EvalBatchSpace(ctx, node, true); }
void PrepareBatchToSpaceNd(KernelContext& ctx, Node& node) { PrepareBatchSpace(ctx, node, false); }
void EvalBatchToSpaceNd(KernelContext& ctx, const Node& node) { EvalBatchSpace(ctx, node, false); }

// ------------------------------------------------------------------ ONE_HOT

namespace {
struct OneHotData {
  int64_t prefix = 1, depth = 0, suffix = 1;
};

template <class T>
void RunOneHot(const OneHotData& d, const Tensor& indices, const Tensor& on, const Tensor& off,
               Tensor& out) {
  const T on_value = on.data_as<T>()[0], off_value = off.data_as<T>()[0];
  if (indices.type == DataType::kInt32)
    reference::OneHot(indices.data_as<int32_t>(), d.prefix, d.depth, d.suffix, on_value,
                      off_value, out.data_as<T>());
  else
    reference::OneHot(indices.data_as<int64_t>(), d.prefix, d.depth, d.suffix, on_value,
                      off_value, out.data_as<T>());
}
}  // namespace

void PrepareOneHot(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 4, 4);
  ctx.CheckOutputCount(node, 1);
  const Tensor& indices = ctx.input(node, 0);
  const Tensor& depth_tensor = ctx.input(node, 1);
  const Tensor& on = ctx.input(node, 2);
  const Tensor& off = ctx.input(node, 3);
  const Tensor& out = ctx.output(node, 0);
  CheckTypeIn(ctx, node, indices, {DataType::kInt32, DataType::kInt64});
  ctx.CheckType(node, depth_tensor, DataType::kInt32);
  CheckTypeIn(ctx, node, on,
              {DataType::kFloat32, DataType::kInt16, DataType::kInt32, DataType::kInt64,
               DataType::kInt8, DataType::kUInt8, DataType::kBool});
  CheckSameType(ctx, node, on, off);
  CheckSameType(ctx, node, on, out);
  DLG_NODE_CHECK(ctx, node, on.NumElements() == 1 && off.NumElements() == 1,
                 "on_value and off_value must be scalars");
  const int64_t depth = ConstScalar(ctx, node, depth_tensor, "depth");
  DLG_NODE_CHECK(ctx, node, depth >= 0 && depth <= INT32_MAX, "depth ", depth,
                 " must be >= 0");
  const OneHotParams params = ParamsIf<OneHotParams>(node) ? *ParamsIf<OneHotParams>(node)
                                                           : OneHotParams{};
  const int out_rank = indices.rank() + 1;
  const int axis = params.axis == -1 ? out_rank - 1
                                     : ResolveAxis(ctx, node, params.axis, out_rank, "axis");
  DLG_NODE_CHECK(ctx, node, params.axis >= -1, "axis ", params.axis, " must be >= -1");
  std::vector<int32_t> dims = indices.dims;
  dims.insert(dims.begin() + axis, static_cast<int32_t>(depth));
  auto data = MakeOpData<OneHotData>(node);
  data->depth = depth;
  data->prefix = Product(indices.dims, 0, axis);
  data->suffix = Product(indices.dims, axis, indices.rank());
  ctx.SetOutputDims(node, 0, dims);
}

void EvalOneHot(KernelContext& ctx, const Node& node) {
  const OneHotData& d = *node.data<OneHotData>();
  const Tensor& indices = ctx.in(node, 0);
  const Tensor& on = ctx.in(node, 2);
  const Tensor& off = ctx.in(node, 3);
  Tensor& out = ctx.out(node, 0);
  switch (DataTypeSize(out.type)) {
    case 1: RunOneHot<uint8_t>(d, indices, on, off, out); break;
    case 2: RunOneHot<uint16_t>(d, indices, on, off, out); break;
    case 4: RunOneHot<uint32_t>(d, indices, on, off, out); break;
    default: RunOneHot<uint64_t>(d, indices, on, off, out); break;
  }
}

}  // namespace delegato
