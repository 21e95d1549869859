// RESIZE_BILINEAR (float32, uint8, int8, int16) and RESIZE_NEAREST_NEIGHBOR
// (any plain type) on NHWC input with a constant INT32 [2] size (height, width).
#include <memory>
#include <variant>
#include <vector>

#include "kernels/optimized/resize_bilinear.h"
#include "kernels/reference/resize.h"
#include "ops/kernel.h"
#include "ops/shape_ops_util.h"

namespace delegato {

using shape_ops::CheckPlainType;
using shape_ops::CheckSameType;
using shape_ops::ConstIntegers;
using shape_ops::MakeOpData;

namespace {

struct ResizeData {
  reference::ResizeGeometry geometry;
  // The optimized RESIZE_BILINEAR (float32, uint8, int8), when allowed.
  std::unique_ptr<optimized::ResizeBilinear> fast;
};

void PrepareResize(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckPlainType(ctx, node, in);
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  DLG_NODE_CHECK(ctx, node, in.rank() == 4, "input \"", in.name, "\" must be 4-D (NHWC), has rank ",
                 in.rank());
  const Tensor& size = ctx.input(node, 1);
  ctx.CheckType(node, size, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, size.rank() == 1 && size.dims[0] == 2, "size (tensor \"", size.name,
                 "\") must have shape [2]");
  const std::vector<int64_t> hw = ConstIntegers(ctx, node, size, "size input");
  DLG_NODE_CHECK(ctx, node, hw[0] > 0 && hw[1] > 0, "output size ", hw[0], "x", hw[1],
                 " must be positive");
  ResizeParams params;
  if (const auto* p = std::get_if<ResizeParams>(&node.def->params)) params = *p;
  DLG_NODE_CHECK(ctx, node, in.dims[1] > 0 && in.dims[2] > 0, "input \"", in.name,
                 "\" has an empty spatial dim");
  auto data = MakeOpData<ResizeData>(node);
  reference::ResizeGeometry& g = data->geometry;
  g.batches = in.dims[0];
  g.input_height = in.dims[1];
  g.input_width = in.dims[2];
  g.depth = in.dims[3];
  g.output_height = static_cast<int32_t>(hw[0]);
  g.output_width = static_cast<int32_t>(hw[1]);
  g.align_corners = params.align_corners;
  g.half_pixel_centers = params.half_pixel_centers;
  // The fixed-point path multiplies positions by 2^10 in int32.
  DLG_NODE_CHECK(ctx, node,
                 (int64_t{1} << 10) * std::max(g.input_height, g.input_width) *
                         int64_t{std::max(g.output_height, g.output_width)} <
                     (int64_t{1} << 31),
                 "resize geometry is too large");
  ctx.SetOutputDims(node, 0, {g.batches, g.output_height, g.output_width, g.depth});
}

}  // namespace

void PrepareResizeBilinear(KernelContext& ctx, Node& node) {
  const Tensor& in = ctx.input(node, 0);
  DLG_NODE_CHECK(ctx, node,
                 in.type == DataType::kFloat32 || in.type == DataType::kUInt8 ||
                     in.type == DataType::kInt8 || in.type == DataType::kInt16,
                 "input \"", in.name, "\" has type ", DataTypeName(in.type),
                 "; RESIZE_BILINEAR supports FLOAT32, UINT8, INT8 and INT16");
  ResizeParams params;
  if (const auto* p = std::get_if<ResizeParams>(&node.def->params)) params = *p;
  DLG_NODE_CHECK(ctx, node, !(params.align_corners && params.half_pixel_centers),
                 "align_corners and half_pixel_centers cannot both be set");
  PrepareResize(ctx, node);
  if (ctx.optimized() && in.type != DataType::kInt16) {
    ResizeData& data = *node.data<ResizeData>();
    const auto type = in.type == DataType::kFloat32 ? optimized::ResizeBilinear::Type::kFloat32
                      : in.type == DataType::kUInt8 ? optimized::ResizeBilinear::Type::kUInt8
                                                    : optimized::ResizeBilinear::Type::kInt8;
    if (optimized::ResizeBilinear::Covers(type, data.geometry))
      data.fast = std::make_unique<optimized::ResizeBilinear>(type, data.geometry,
                                                              optimized::SelectedIsa());
  }
}

void EvalResizeBilinear(KernelContext& ctx, const Node& node) {
  const reference::ResizeGeometry& g = node.data<ResizeData>()->geometry;
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  if (const optimized::ResizeBilinear* fast = node.data<ResizeData>()->fast.get()) {
    // Output rows split across the pool.
    ParallelRange(ctx, fast->rows(), [&](int64_t begin, int64_t end) {
      fast->RunRows(begin, end, in.data, out.data);
    });
    return;
  }
  switch (in.type) {
    case DataType::kFloat32:
      reference::ResizeBilinearFloat(g, in.data_as<float>(), out.data_as<float>());
      break;
    case DataType::kUInt8:
      reference::ResizeBilinearFloat(g, in.data_as<uint8_t>(), out.data_as<uint8_t>());
      break;
    case DataType::kInt8:
      reference::ResizeBilinearFixed(g, in.data_as<int8_t>(), out.data_as<int8_t>());
      break;
    case DataType::kInt16:
      reference::ResizeBilinearFixed(g, in.data_as<int16_t>(), out.data_as<int16_t>());
      break;
    default:
      break;
  }
}

void PrepareResizeNearestNeighbor(KernelContext& ctx, Node& node) { PrepareResize(ctx, node); }

void EvalResizeNearestNeighbor(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  reference::ResizeNearestNeighbor(node.data<ResizeData>()->geometry, DataTypeSize(in.type),
                                   in.data, ctx.out(node, 0).data);
}

}  // namespace delegato
