// GATHER and GATHER_ND. Indices that are constants are range-checked in
// Prepare; otherwise Eval zero-fills the slices of out-of-range indices and
// reports an Eval error (TFLite fails the invocation there too).
#include <memory>
#include <variant>
#include <vector>

#include "kernels/reference/gather.h"
#include "ops/kernel.h"
#include "ops/shape_ops_util.h"

namespace delegato {

using shape_ops::CheckPlainType;
using shape_ops::CheckSameType;
using shape_ops::ConstIntegers;
using shape_ops::MakeOpData;
using shape_ops::Product;

namespace {

constexpr const char* kIndexOutOfRange = "an index is out of range";

// INT16 indices: GATHER version 6, GATHER_ND version 4.
void CheckIndexType(const KernelContext& ctx, const Node& node, const Tensor& indices) {
  DLG_NODE_CHECK(ctx, node,
                 indices.type == DataType::kInt32 || indices.type == DataType::kInt64 ||
                     indices.type == DataType::kInt16,
                 "indices (tensor \"", indices.name, "\") must be INT16, INT32 or INT64, is ",
                 DataTypeName(indices.type));
}

// The values of constant indices, widened.
std::vector<int64_t> ConstIndices(const KernelContext& ctx, const Node& node, const Tensor& indices) {
  if (indices.type != DataType::kInt16) return ConstIntegers(ctx, node, indices, "indices");
  const int64_t count = indices.NumElements();
  DLG_NODE_CHECK(ctx, node, count == 0 || (indices.data != nullptr &&
                                           indices.bytes >= static_cast<size_t>(count) * sizeof(int16_t)),
                 "indices (tensor \"", indices.name, "\") holds ", indices.bytes, " bytes, needs ",
                 count * 2);
  const int16_t* values = indices.data_as<int16_t>();
  return std::vector<int64_t>(values, values + count);
}

struct GatherData {
  int64_t batch = 1, outer = 1, axis_size = 0, inner_bytes = 0, coords = 0;
};

}  // namespace

void PrepareGather(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& params = ctx.input(node, 0);
  const Tensor& indices = ctx.input(node, 1);
  CheckPlainType(ctx, node, params);
  CheckSameType(ctx, node, params, ctx.output(node, 0));
  CheckIndexType(ctx, node, indices);
  GatherParams options;
  if (const auto* p = std::get_if<GatherParams>(&node.def->params)) options = *p;

  const int rank = params.rank();
  DLG_NODE_CHECK(ctx, node, rank >= 1, "params (tensor \"", params.name, "\") is a scalar");
  int axis = options.axis;
  if (axis < 0) axis += rank;
  DLG_NODE_CHECK(ctx, node, axis >= 0 && axis < rank, "axis ", options.axis,
                 " is out of range for params rank ", rank);
  int batch_dims = options.batch_dims;
  if (batch_dims < 0) batch_dims += indices.rank();
  DLG_NODE_CHECK(ctx, node, batch_dims >= 0 && batch_dims <= axis && batch_dims <= indices.rank(),
                 "batch_dims ", options.batch_dims, " is invalid for axis ", axis,
                 " and indices rank ", indices.rank());
  for (int d = 0; d < batch_dims; ++d)
    DLG_NODE_CHECK(ctx, node, params.dims[d] == indices.dims[d], "batch dim ", d,
                   " differs between params (", params.dims[d], ") and indices (",
                   indices.dims[d], ")");

  std::vector<int32_t> dims(params.dims.begin(), params.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin() + batch_dims, indices.dims.end());
  dims.insert(dims.end(), params.dims.begin() + axis + 1, params.dims.end());

  auto data = MakeOpData<GatherData>(node);
  data->batch = Product(params.dims, 0, batch_dims);
  data->outer = Product(params.dims, batch_dims, axis);
  data->axis_size = params.dims[axis];
  data->inner_bytes =
      Product(params.dims, axis + 1, rank) * static_cast<int64_t>(DataTypeSize(params.type));
  data->coords = Product(indices.dims, batch_dims, indices.rank());

  if (indices.is_constant()) {
    for (int64_t index : ConstIndices(ctx, node, indices))
      DLG_NODE_CHECK(ctx, node, index >= 0 && index < data->axis_size, "index ", index,
                     " in constant indices \"", indices.name, "\" is out of range [0, ",
                     data->axis_size, ")");
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalGather(KernelContext& ctx, const Node& node) {
  const GatherData& d = *node.data<GatherData>();
  const Tensor& indices = ctx.in(node, 1);
  const uint8_t* params = ctx.in(node, 0).data;
  uint8_t* out = ctx.out(node, 0).data;
  auto gather = [&](const auto* index) {
    return reference::Gather(params, d.batch, d.outer, d.axis_size, d.inner_bytes, index, d.coords, out);
  };
  const bool ok = indices.type == DataType::kInt32   ? gather(indices.data_as<int32_t>())
                  : indices.type == DataType::kInt16 ? gather(indices.data_as<int16_t>())
                                                     : gather(indices.data_as<int64_t>());
  if (!ok) ctx.SetEvalError(node, kIndexOutOfRange);
}

namespace {

struct GatherNdData {
  int32_t params_dims[reference::kMaxGatherNdDepth] = {};
  int depth = 0;
  int64_t slice_bytes = 0;
  int64_t num_slices = 0;
};

}  // namespace

void PrepareGatherNd(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& params = ctx.input(node, 0);
  const Tensor& indices = ctx.input(node, 1);
  CheckPlainType(ctx, node, params);
  CheckSameType(ctx, node, params, ctx.output(node, 0));
  CheckIndexType(ctx, node, indices);
  DLG_NODE_CHECK(ctx, node, params.rank() >= 1, "params (tensor \"", params.name,
                 "\") is a scalar");
  DLG_NODE_CHECK(ctx, node, indices.rank() >= 1, "indices (tensor \"", indices.name,
                 "\") is a scalar");
  const int depth = indices.dims.back();
  DLG_NODE_CHECK(ctx, node, depth <= params.rank() && depth <= reference::kMaxGatherNdDepth,
                 "index depth ", depth, " (last dim of indices \"", indices.name,
                 "\") exceeds params rank ", params.rank());

  std::vector<int32_t> dims(indices.dims.begin(), indices.dims.end() - 1);
  dims.insert(dims.end(), params.dims.begin() + depth, params.dims.end());

  auto data = MakeOpData<GatherNdData>(node);
  data->depth = depth;
  for (int d = 0; d < depth; ++d) data->params_dims[d] = params.dims[d];
  data->slice_bytes = Product(params.dims, depth, params.rank()) *
                      static_cast<int64_t>(DataTypeSize(params.type));
  data->num_slices = Product(indices.dims, 0, indices.rank() - 1);

  if (indices.is_constant()) {
    const std::vector<int64_t> values = ConstIndices(ctx, node, indices);
    for (size_t i = 0; i < values.size(); ++i) {
      const int d = static_cast<int>(i % depth);
      DLG_NODE_CHECK(ctx, node, values[i] >= 0 && values[i] < params.dims[d], "index ",
                     values[i], " for dim ", d, " in constant indices \"", indices.name,
                     "\" is out of range [0, ", params.dims[d], ")");
    }
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalGatherNd(KernelContext& ctx, const Node& node) {
  const GatherNdData& d = *node.data<GatherNdData>();
  const Tensor& indices = ctx.in(node, 1);
  const uint8_t* params = ctx.in(node, 0).data;
  uint8_t* out = ctx.out(node, 0).data;
  auto gather = [&](const auto* index) {
    return reference::GatherNd(params, d.params_dims, d.depth, d.slice_bytes, index, d.num_slices, out);
  };
  const bool ok = indices.type == DataType::kInt32   ? gather(indices.data_as<int32_t>())
                  : indices.type == DataType::kInt16 ? gather(indices.data_as<int16_t>())
                                                     : gather(indices.data_as<int64_t>());
  if (!ok) ctx.SetEvalError(node, kIndexOutOfRange);
}

}  // namespace delegato
