// SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY, REDUCE_ALL.
// Axis handling is MEAN's (reduce.cc): a constant INT32 scalar or 1-D axis
// tensor, negative axes counted from the end, duplicates ignored, keep_dims
// from ReducerOptions.
#include <cmath>
#include <limits>
#include <memory>
#include <variant>
#include <vector>

#include "kernels/quantization.h"
#include "kernels/reference/reduce_ops.h"
#include "ops/kernel.h"
#include "ops/shape_ops_util.h"

namespace delegato {

using shape_ops::CheckSameType;
using shape_ops::ConstIntegers;
using shape_ops::MakeOpData;
using shape_ops::ResolveAxis;

namespace {

struct ReduceOpData {
  reference::ReduceShape shape;
  bool reduced[reference::kMaxReduceRank] = {};
  bool all_dims = false;  // every dim reduced (or a scalar input)
  bool quantized = false;
  int32_t multiplier = 0;
  int shift = 0;
};

// Checks input/axis/output, sets the output dims and the reduce geometry.
ReduceOpData& PrepareReduce(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  CheckSameType(ctx, node, in, out);
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node, rank <= reference::kMaxReduceRank, "input \"", in.name,
                 "\" has rank ", rank, "; at most ", reference::kMaxReduceRank, " is supported");
  const Tensor& axis_tensor = ctx.input(node, 1);
  ctx.CheckType(node, axis_tensor, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, axis_tensor.rank() <= 1, "axis (tensor \"", axis_tensor.name,
                 "\") must be a scalar or 1-D");
  const std::vector<int64_t> axes = ConstIntegers(ctx, node, axis_tensor, "axis input");
  auto data = MakeOpData<ReduceOpData>(node);
  int reduced_dims = 0;
  if (rank > 0) {
    for (int64_t a : axes) {
      const int d = ResolveAxis(ctx, node, a, rank, "axis");
      if (!data->reduced[d]) ++reduced_dims;
      data->reduced[d] = true;
    }
  }
  data->all_dims = reduced_dims == rank;
  bool keep_dims = false;
  if (const auto* p = std::get_if<ReducerParams>(&node.def->params)) keep_dims = p->keep_dims;
  std::vector<int32_t> dims;
  for (int d = 0; d < rank; ++d) {
    if (!data->reduced[d]) dims.push_back(in.dims[d]);
    else if (keep_dims) dims.push_back(1);
  }
  data->shape = reference::MakeReduceShape(rank, in.dims.data(), data->reduced);
  if (in.type == DataType::kInt16)
    DLG_NODE_CHECK(ctx, node, in.zero_point() == 0 && out.zero_point() == 0,
                   "int16 input and output must have zero point 0");
  ctx.SetOutputDims(node, 0, dims);
  return *data;
}

void CheckTypes(const KernelContext& ctx, const Node& node, const Tensor& t,
                std::initializer_list<DataType> types) {
  for (DataType type : types)
    if (t.type == type) return;
  std::string names;
  for (DataType type : types) names += std::string(names.empty() ? "" : ", ") +
                                       std::string(DataTypeName(type));
  ctx.Fail(node, "input \"", t.name, "\" has type ", DataTypeName(t.type), "; ", node.op_name,
           " supports ", names);
}

// MAX / MIN / non-quantized PROD move 8/16-bit values without rescaling.
void CheckSameQuantization(const KernelContext& ctx, const Node& node, const Tensor& in,
                           const Tensor& out) {
  if (in.type != DataType::kUInt8 && in.type != DataType::kInt8 && in.type != DataType::kInt16)
    return;
  DLG_NODE_CHECK(ctx, node, in.scale() == out.scale() && in.zero_point() == out.zero_point(),
                 "output \"", out.name, "\" must have the quantization of input \"", in.name,
                 "\" (scale ", in.scale(), ", zero point ", in.zero_point(), ")");
}

template <class T>
T Lowest() {
  return std::numeric_limits<T>::lowest();
}
template <class T>
T Highest() {
  return std::numeric_limits<T>::max();
}

enum class Kind { kSum, kProd, kMax, kMin, kAny, kAll };

template <class T>
void RunGeneric(Kind kind, const ReduceOpData& d, const Tensor& in, Tensor& out) {
  const T* x = in.data_as<T>();
  T* y = out.data_as<T>();
  switch (kind) {
    case Kind::kSum:
      reference::ReduceGeneric(d.shape, d.all_dims, T(0),
                               [](T a, T b) { return reference::WrapAdd(a, b); }, x, y);
      break;
    case Kind::kProd:
      reference::ReduceGeneric(d.shape, d.all_dims, T(1),
                               [](T a, T b) { return reference::WrapMul(a, b); }, x, y);
      break;
    case Kind::kMax:
      reference::ReduceGeneric(d.shape, d.all_dims, Lowest<T>(),
                               [](T current, T v) { return v > current ? v : current; }, x, y);
      break;
    case Kind::kMin:
      reference::ReduceGeneric(d.shape, d.all_dims, Highest<T>(),
                               [](T current, T v) { return v < current ? v : current; }, x, y);
      break;
    default:
      break;
  }
}

void EvalGenericTyped(Kind kind, const ReduceOpData& d, const Tensor& in, Tensor& out) {
  switch (in.type) {
    case DataType::kFloat32: RunGeneric<float>(kind, d, in, out); break;
    case DataType::kInt32: RunGeneric<int32_t>(kind, d, in, out); break;
    case DataType::kInt64: RunGeneric<int64_t>(kind, d, in, out); break;
    case DataType::kUInt8: RunGeneric<uint8_t>(kind, d, in, out); break;
    case DataType::kInt8: RunGeneric<int8_t>(kind, d, in, out); break;
    case DataType::kInt16: RunGeneric<int16_t>(kind, d, in, out); break;
    default: break;
  }
}

}  // namespace

// ------------------------------------------------------------------ SUM

void PrepareSum(KernelContext& ctx, Node& node) {
  const Tensor& in = ctx.input(node, 0);
  CheckTypes(ctx, node, in,
             {DataType::kFloat32, DataType::kInt32, DataType::kInt64, DataType::kUInt8,
              DataType::kInt8, DataType::kInt16});
  ReduceOpData& d = PrepareReduce(ctx, node);
  const Tensor& out = ctx.output(node, 0);
  if (in.type == DataType::kUInt8 || in.type == DataType::kInt8 || in.type == DataType::kInt16) {
    // 8/16-bit SUM is always a quantized sum, rescaled by input/output scale.
    DLG_NODE_CHECK(ctx, node, in.scale() > 0.0f && out.scale() > 0.0f, "quantized input \"",
                   in.name, "\" and output \"", out.name, "\" need positive scales");
    d.quantized = true;
    quant::QuantizeMultiplier(static_cast<double>(in.scale()) / static_cast<double>(out.scale()),
                              &d.multiplier, &d.shift);
    node.scratch_bytes = static_cast<size_t>(d.shape.output_count) * sizeof(int32_t);
  }
}

void EvalSum(KernelContext& ctx, const Node& node) {
  const ReduceOpData& d = *node.data<ReduceOpData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  int32_t* sums = reinterpret_cast<int32_t*>(node.scratch);
  switch (in.type) {
    case DataType::kUInt8:
      reference::SumQuantized(d.shape, in.data_as<uint8_t>(), in.zero_point(), d.multiplier,
                              d.shift, out.zero_point(), sums, out.data_as<uint8_t>());
      break;
    case DataType::kInt8:
      reference::SumQuantized(d.shape, in.data_as<int8_t>(), in.zero_point(), d.multiplier,
                              d.shift, out.zero_point(), sums, out.data_as<int8_t>());
      break;
    case DataType::kInt16:
      reference::SumQuantized(d.shape, in.data_as<int16_t>(), in.zero_point(), d.multiplier,
                              d.shift, out.zero_point(), sums, out.data_as<int16_t>());
      break;
    default:
      EvalGenericTyped(Kind::kSum, d, in, out);
      break;
  }
}

// ------------------------------------------------------------------ REDUCE_MAX, REDUCE_MIN

namespace {
void PrepareMaxMin(KernelContext& ctx, Node& node) {
  const Tensor& in = ctx.input(node, 0);
  CheckTypes(ctx, node, in,
             {DataType::kFloat32, DataType::kInt32, DataType::kInt64, DataType::kUInt8,
              DataType::kInt8, DataType::kInt16});
  PrepareReduce(ctx, node);
  CheckSameQuantization(ctx, node, in, ctx.output(node, 0));
}
}  // namespace

void PrepareReduceMax(KernelContext& ctx, Node& node) { PrepareMaxMin(ctx, node); }
void EvalReduceMax(KernelContext& ctx, const Node& node) {
  EvalGenericTyped(Kind::kMax, *node.data<ReduceOpData>(), ctx.in(node, 0), ctx.out(node, 0));
}
void PrepareReduceMin(KernelContext& ctx, Node& node) { PrepareMaxMin(ctx, node); }
void EvalReduceMin(KernelContext& ctx, const Node& node) {
  EvalGenericTyped(Kind::kMin, *node.data<ReduceOpData>(), ctx.in(node, 0), ctx.out(node, 0));
}

// ------------------------------------------------------------------ REDUCE_PROD

void PrepareReduceProd(KernelContext& ctx, Node& node) {
  const Tensor& in = ctx.input(node, 0);
  CheckTypes(ctx, node, in,
             {DataType::kFloat32, DataType::kInt32, DataType::kInt64, DataType::kUInt8,
              DataType::kInt8, DataType::kInt16});
  ReduceOpData& d = PrepareReduce(ctx, node);
  const Tensor& out = ctx.output(node, 0);
  const bool has_quantization = !in.quantization->empty();
  if (has_quantization && in.type != DataType::kFloat32 && in.type != DataType::kInt32 &&
      in.type != DataType::kInt64) {
    DLG_NODE_CHECK(ctx, node, in.type == DataType::kInt8 || in.type == DataType::kInt16,
                   "quantized REDUCE_PROD supports INT8 and INT16, input \"", in.name, "\" is ",
                   DataTypeName(in.type));
    DLG_NODE_CHECK(ctx, node, in.scale() > 0.0f && out.scale() > 0.0f, "quantized input \"",
                   in.name, "\" and output \"", out.name, "\" need positive scales");
    d.quantized = true;
    // Each of the count rescaling steps applies input_scale / output_scale^(1/count).
    const int64_t output_count = d.shape.output_count;
    if (d.shape.input_count != 0 && output_count != 0) {
      const int64_t count = d.shape.input_count / output_count;
      const double scaling = static_cast<double>(in.scale()) /
                             std::pow(static_cast<double>(out.scale()), 1.0 / count);
      quant::QuantizeMultiplier(scaling, &d.multiplier, &d.shift);
      DLG_NODE_CHECK(ctx, node, d.shift >= -31 && d.shift < 8,
                     "the per-step product scaling ", scaling, " is out of range");
    }
    node.scratch_bytes = static_cast<size_t>(d.shape.output_count) * sizeof(int32_t);
  } else {
    CheckSameQuantization(ctx, node, in, out);
  }
}

void EvalReduceProd(KernelContext& ctx, const Node& node) {
  const ReduceOpData& d = *node.data<ReduceOpData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  int32_t* prods = reinterpret_cast<int32_t*>(node.scratch);
  if (d.quantized && in.type == DataType::kInt8) {
    reference::ProdQuantized(d.shape, d.reduced, in.data_as<int8_t>(), in.zero_point(),
                             d.multiplier, d.shift, out.zero_point(), prods,
                             out.data_as<int8_t>());
  } else if (d.quantized) {
    reference::ProdQuantized(d.shape, d.reduced, in.data_as<int16_t>(), in.zero_point(),
                             d.multiplier, d.shift, out.zero_point(), prods,
                             out.data_as<int16_t>());
  } else {
    EvalGenericTyped(Kind::kProd, d, in, out);
  }
}

// ------------------------------------------------------------------ REDUCE_ANY, REDUCE_ALL

namespace {
void PrepareAnyAll(KernelContext& ctx, Node& node) {
  CheckTypes(ctx, node, ctx.input(node, 0), {DataType::kBool});
  PrepareReduce(ctx, node);
}
}  // namespace

void PrepareReduceAny(KernelContext& ctx, Node& node) { PrepareAnyAll(ctx, node); }
void EvalReduceAny(KernelContext& ctx, const Node& node) {
  const ReduceOpData& d = *node.data<ReduceOpData>();
  reference::ReduceGeneric(
      d.shape, d.all_dims, uint8_t{0},
      [](uint8_t current, uint8_t v) -> uint8_t { return (v || current) ? 1 : 0; },
      ctx.in(node, 0).data_as<uint8_t>(), ctx.out(node, 0).data_as<uint8_t>());
}
void PrepareReduceAll(KernelContext& ctx, Node& node) { PrepareAnyAll(ctx, node); }
void EvalReduceAll(KernelContext& ctx, const Node& node) {
  const ReduceOpData& d = *node.data<ReduceOpData>();
  reference::ReduceGeneric(
      d.shape, d.all_dims, uint8_t{1},
      [](uint8_t current, uint8_t v) -> uint8_t { return (v && current) ? 1 : 0; },
      ctx.in(node, 0).data_as<uint8_t>(), ctx.out(node, 0).data_as<uint8_t>());
}

}  // namespace delegato
