// MEAN (float32, uint8, int8, int16), ARG_MAX and ARG_MIN.
#include <algorithm>
#include <memory>
#include <variant>
#include <vector>

#include "kernels/quantization.h"
#include "kernels/optimized/arg_minmax.h"
#include "kernels/optimized/reduce_mean.h"
#include "kernels/reference/arg_minmax.h"
#include "kernels/reference/reduce.h"
#include "ops/kernel.h"
#include "ops/shape_ops_util.h"

namespace delegato {

using shape_ops::CheckSameType;
using shape_ops::ConstIntegers;
using shape_ops::ConstScalar;
using shape_ops::MakeOpData;
using shape_ops::Product;
using shape_ops::ResolveAxis;

// --------------------------------------------------------------------- MEAN

namespace {

struct MeanData {
  reference::ReduceShape shape;
  int32_t multiplier = 0;
  int shift = 0;
  bool fast = false;  // 8-bit sums by the optimized kernel (kernel set allowing it)
  // With several threads, the fast sums over parts of the reduced rows, one
  // per thread, added on the caller (partial sums after the whole ones in scratch).
  int row_parts = 1;
  bool fast_float = false;  // float32 through optimized::MeanFloatContiguous (bit-exact)
  optimized::MeanSum8 sum8;
};

}  // namespace

void PrepareMean(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node,
                 in.type == DataType::kFloat32 || in.type == DataType::kUInt8 ||
                     in.type == DataType::kInt8 || in.type == DataType::kInt16,
                 "input \"", in.name, "\" has type ", DataTypeName(in.type),
                 "; MEAN supports FLOAT32, UINT8, INT8 and INT16");
  CheckSameType(ctx, node, in, out);
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node, rank <= reference::kMaxReduceRank, "input \"", in.name,
                 "\" has rank ", rank, "; at most ", reference::kMaxReduceRank, " is supported");
  const Tensor& axis_tensor = ctx.input(node, 1);
  ctx.CheckType(node, axis_tensor, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, axis_tensor.rank() <= 1, "axis (tensor \"", axis_tensor.name,
                 "\") must be a scalar or 1-D");
  const std::vector<int64_t> axes = ConstIntegers(ctx, node, axis_tensor, "axis input");
  bool reduced[reference::kMaxReduceRank] = {};
  if (rank > 0)
    for (int64_t a : axes) reduced[ResolveAxis(ctx, node, a, rank, "axis")] = true;

  bool keep_dims = false;
  if (const auto* p = std::get_if<ReducerParams>(&node.def->params)) keep_dims = p->keep_dims;
  std::vector<int32_t> dims;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) dims.push_back(in.dims[d]);
    else if (keep_dims) dims.push_back(1);
  }

  auto data = MakeOpData<MeanData>(node);
  data->shape = reference::MakeReduceShape(rank, in.dims.data(), reduced);
  if (in.type == DataType::kFloat32 && ctx.optimized() && data->sum8.Plan(data->shape)) {
    data->fast_float = true;
    data->sum8.isa = optimized::SelectedIsa();
  }
  if (in.type != DataType::kFloat32) {
    if (in.type == DataType::kInt16)
      DLG_NODE_CHECK(ctx, node, in.zero_point() == 0 && out.zero_point() == 0,
                     "int16 input and output must have zero point 0");
    DLG_NODE_CHECK(ctx, node, out.scale() > 0.0f, "output \"", out.name,
                   "\" needs a positive scale");
    quant::QuantizeMultiplier(static_cast<double>(in.scale()) / static_cast<double>(out.scale()),
                              &data->multiplier, &data->shift);
    node.scratch_bytes = static_cast<size_t>(data->shape.output_count) * sizeof(int32_t);
    if (ctx.optimized() && (in.type == DataType::kUInt8 || in.type == DataType::kInt8) &&
        data->sum8.Plan(data->shape)) {
      data->fast = true;
      data->sum8.is_signed = in.type == DataType::kInt8;
      data->sum8.isa = optimized::SelectedIsa();
      // A global average pool's input was written by a layer split across
      // threads, half of it in the other core's cache: each thread sums the
      // rows it holds (the same contiguous split) instead of the caller
      // fetching them all. 2^14 bytes and up: about a microsecond of summing.
      constexpr int64_t kMinSplitBytes = int64_t{1} << 14;
      const int threads = ctx.pool().num_threads();
      const optimized::MeanSum8& k = data->sum8;
      if (threads > 1 && k.reduced >= threads && k.outer * k.reduced * k.inner >= kMinSplitBytes) {
        data->row_parts = threads;
        node.scratch_bytes *= static_cast<size_t>(threads);
      }
    }
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalMean(KernelContext& ctx, const Node& node) {
  const MeanData& d = *node.data<MeanData>();
  const Tensor& in = ctx.in(node, 0);
  const Tensor& out = ctx.out(node, 0);
  int32_t* sums = reinterpret_cast<int32_t*>(node.scratch);
  if (d.fast_float) {
    optimized::MeanFloatContiguous(d.sum8, static_cast<float>(d.shape.reduced_count),
                                   in.data_as<float>(), ctx.out(node, 0).data_as<float>());
    return;
  }
  if (d.fast) {
    const uint8_t* bytes = static_cast<const uint8_t*>(in.data);
    if (d.row_parts > 1) {
      const int64_t count = d.shape.output_count, rows = d.sum8.reduced;
      ParallelRange(ctx, d.row_parts, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part)
          d.sum8.RunRows(bytes, rows * part / d.row_parts, rows * (part + 1) / d.row_parts,
                         sums + part * count);
      });
      for (int part = 1; part < d.row_parts; ++part)
        for (int64_t i = 0; i < count; ++i)  // wrapping, as the reference's int32 sums
          sums[i] = static_cast<int32_t>(static_cast<uint32_t>(sums[i]) +
                                         static_cast<uint32_t>(sums[part * count + i]));
    } else {
      d.sum8.Run(bytes, sums);
    }
    if (in.type == DataType::kInt8)
      reference::MeanRescale(d.shape, sums, in.zero_point(), d.multiplier, d.shift,
                             out.zero_point(), ctx.out(node, 0).data_as<int8_t>());
    else
      reference::MeanRescale(d.shape, sums, in.zero_point(), d.multiplier, d.shift,
                             out.zero_point(), ctx.out(node, 0).data_as<uint8_t>());
    return;
  }
  switch (in.type) {
    case DataType::kFloat32:
      reference::MeanFloat(d.shape, in.data_as<float>(), ctx.out(node, 0).data_as<float>());
      break;
    case DataType::kUInt8:
      reference::MeanQuantized(d.shape, in.data_as<uint8_t>(), in.zero_point(), d.multiplier,
                               d.shift, out.zero_point(), sums,
                               ctx.out(node, 0).data_as<uint8_t>());
      break;
    case DataType::kInt8:
      reference::MeanQuantized(d.shape, in.data_as<int8_t>(), in.zero_point(), d.multiplier,
                               d.shift, out.zero_point(), sums,
                               ctx.out(node, 0).data_as<int8_t>());
      break;
    case DataType::kInt16:
      reference::MeanQuantized(d.shape, in.data_as<int16_t>(), in.zero_point(), d.multiplier,
                               d.shift, out.zero_point(), sums,
                               ctx.out(node, 0).data_as<int16_t>());
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------- ARG_MAX, ARG_MIN

namespace {

struct ArgMinMaxData {
  int64_t outer = 1, axis_size = 0, inner = 1;
  bool fast = false;  // the optimized 8-bit kernel (kernel set allowing it)
  optimized::ArgMinMax8 kernel;
};

void PrepareArgMinMax(KernelContext& ctx, Node& node, bool is_max) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  switch (in.type) {
    case DataType::kFloat32:
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kBool:
      break;
    default:
      ctx.Fail(node, "input \"", in.name, "\" has unsupported type ", DataTypeName(in.type));
  }
  DLG_NODE_CHECK(ctx, node, out.type == DataType::kInt32 || out.type == DataType::kInt64,
                 "output \"", out.name, "\" must be INT32 or INT64, is ",
                 DataTypeName(out.type));
  if (const auto* p = std::get_if<ArgMinMaxParams>(&node.def->params))
    DLG_NODE_CHECK(ctx, node, p->output_type == out.type, "options ask for ",
                   DataTypeName(p->output_type), " output but output \"", out.name, "\" is ",
                   DataTypeName(out.type));
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node, rank >= 1, "input \"", in.name, "\" is a scalar");
  const int axis =
      ResolveAxis(ctx, node, ConstScalar(ctx, node, ctx.input(node, 1), "axis input"), rank,
                  "axis");
  DLG_NODE_CHECK(ctx, node, in.dims[axis] > 0, "dim ", axis, " of input \"", in.name,
                 "\" is empty");
  std::vector<int32_t> dims = in.dims;
  dims.erase(dims.begin() + axis);
  auto data = MakeOpData<ArgMinMaxData>(node);
  data->outer = Product(in.dims, 0, axis);
  data->axis_size = in.dims[axis];
  data->inner = Product(in.dims, axis + 1, rank);
  ctx.SetOutputDims(node, 0, dims);
  if (ctx.optimized() && (in.type == DataType::kUInt8 || in.type == DataType::kInt8) &&
      optimized::ArgMinMax8::Covers(data->axis_size, data->inner)) {
    data->fast = true;
    data->kernel.is_max = is_max;
    data->kernel.is_signed = in.type == DataType::kInt8;
    data->kernel.index64 = out.type == DataType::kInt64;
    data->kernel.axis_size = data->axis_size;
    data->kernel.isa = optimized::SelectedIsa();
  }
}

template <bool kIsMax, class T>
void ArgMinMaxTyped(const ArgMinMaxData& d, const Tensor& in, Tensor& out) {
  if (out.type == DataType::kInt32)
    reference::ArgMinMax<T, int32_t, kIsMax>(in.data_as<T>(), d.outer, d.axis_size, d.inner,
                                             out.data_as<int32_t>());
  else
    reference::ArgMinMax<T, int64_t, kIsMax>(in.data_as<T>(), d.outer, d.axis_size, d.inner,
                                             out.data_as<int64_t>());
}

template <bool kIsMax>
void EvalArgMinMax(KernelContext& ctx, const Node& node) {
  const ArgMinMaxData& d = *node.data<ArgMinMaxData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  if (d.fast) {
    ParallelRange(ctx, d.outer, [&](int64_t begin, int64_t end) {
      d.kernel.Run(in.data, out.data, begin, end);
    });
    return;
  }
  switch (in.type) {
    case DataType::kFloat32: ArgMinMaxTyped<kIsMax, float>(d, in, out); break;
    case DataType::kUInt8: ArgMinMaxTyped<kIsMax, uint8_t>(d, in, out); break;
    case DataType::kInt8: ArgMinMaxTyped<kIsMax, int8_t>(d, in, out); break;
    case DataType::kInt16: ArgMinMaxTyped<kIsMax, int16_t>(d, in, out); break;
    case DataType::kInt32: ArgMinMaxTyped<kIsMax, int32_t>(d, in, out); break;
    case DataType::kInt64: ArgMinMaxTyped<kIsMax, int64_t>(d, in, out); break;
    case DataType::kBool: ArgMinMaxTyped<kIsMax, bool>(d, in, out); break;
    default: break;
  }
}

}  // namespace

void PrepareArgMax(KernelContext& ctx, Node& node) { PrepareArgMinMax(ctx, node, true); }
void EvalArgMax(KernelContext& ctx, const Node& node) { EvalArgMinMax<true>(ctx, node); }
void PrepareArgMin(KernelContext& ctx, Node& node) { PrepareArgMinMax(ctx, node, false); }
void EvalArgMin(KernelContext& ctx, const Node& node) { EvalArgMinMax<false>(ctx, node); }

}  // namespace delegato
