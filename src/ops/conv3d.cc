// CONV_3D and CONV_3D_TRANSPOSE (float32 only, as TFLite's kernels): checks,
// geometry and the activation range in Prepare; the reference kernels in Eval.
//   CONV_3D inputs: input [N,D,H,W,C], filter [KD,KH,KW,C,OC], bias [OC] (optional)
//   CONV_3D_TRANSPOSE inputs: output_shape (INT32 [5], constant or folded from a
//     shape subgraph), filter [KD,KH,KW,OC,C], input [N,D,H,W,C], bias [OC] (optional)
// Padding is TFLite's per dimension; the transpose computes it as for a
// convolution from the output size to the input size.
#include <memory>
#include <variant>
#include <vector>

#include "kernels/quantization.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/conv3d.h"
#include "ops/kernel.h"
#include "ops/layer_quant.h"

namespace delegato {
namespace {

struct Conv3DData {
  reference::Conv3DGeometry g;
  float act_min = 0, act_max = 0;
};

const Conv3DParams& Params(KernelContext& ctx, const Node& node) {
  const auto* params = std::get_if<Conv3DParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "missing Conv3DOptions");
  DLG_NODE_CHECK(ctx, node,
                 params->stride_d > 0 && params->stride_h > 0 && params->stride_w > 0,
                 "strides must be positive, got ", params->stride_d, "x", params->stride_h, "x",
                 params->stride_w);
  DLG_NODE_CHECK(ctx, node,
                 params->dilation_d > 0 && params->dilation_h > 0 && params->dilation_w > 0,
                 "dilations must be positive, got ", params->dilation_d, "x",
                 params->dilation_h, "x", params->dilation_w);
  return *params;
}

void CheckFloat(KernelContext& ctx, const Node& node, const Tensor& t, const char* role) {
  DLG_NODE_CHECK(ctx, node, t.type == DataType::kFloat32, role, " tensor \"", t.name,
                 "\" has type ", DataTypeName(t.type),
                 "; ", node.op_name, " takes FLOAT32 only (as TFLite)");
}

void CheckRank5(KernelContext& ctx, const Node& node, const Tensor& t, const char* role) {
  DLG_NODE_CHECK(ctx, node, t.rank() == 5, role, " tensor \"", t.name,
                 "\" must have rank 5, has rank ", t.rank());
}

// Bias (optional, [OC] FLOAT32) and the fused activation.
void PrepareBiasAndActivation(KernelContext& ctx, const Node& node, const Tensor* bias,
                              int32_t out_channels, Activation act, Conv3DData& data) {
  if (bias != nullptr) {
    CheckFloat(ctx, node, *bias, "bias");
    layer_quant::CheckConstantSize(ctx, node, *bias, "bias");
    DLG_NODE_CHECK(ctx, node, bias->NumElements() == out_channels, "bias tensor \"",
                   bias->name, "\" has ", bias->NumElements(), " elements, expected ",
                   out_channels);
  }
  DLG_NODE_CHECK(ctx, node, quant::ActivationRangeFloat(act, &data.act_min, &data.act_max),
                 "fused activation ", layer_quant::ActivationName(act), " is not supported");
}

// One spatial dimension's padding (and, for CONV_3D, output size).
int32_t Window(KernelContext& ctx, const Node& node, Padding padding, int32_t in_size,
               int32_t filter_size, int32_t stride, int32_t dilation, int32_t* out_size) {
  reference::WindowDim dim;
  DLG_NODE_CHECK(ctx, node,
                 reference::ComputeWindowDim(padding, in_size, filter_size, stride, dilation, &dim),
                 "cannot compute the window of size ", in_size, " with filter ", filter_size,
                 ", stride ", stride, ", dilation ", dilation);
  if (out_size != nullptr) *out_size = dim.out_size;
  return dim.pad;
}

}  // namespace

void PrepareConv3D(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 3);
  ctx.CheckOutputCount(node, 1);
  const Conv3DParams& p = Params(ctx, node);
  const Tensor& input = ctx.input(node, 0);
  const Tensor& filter = ctx.input(node, 1);
  const Tensor* bias = ctx.optional_input(node, 2);
  Tensor& output = ctx.output(node, 0);
  CheckFloat(ctx, node, input, "input");
  CheckFloat(ctx, node, filter, "filter");
  CheckFloat(ctx, node, output, "output");
  CheckRank5(ctx, node, input, "input");
  CheckRank5(ctx, node, filter, "filter");
  layer_quant::CheckConstantSize(ctx, node, filter, "filter");
  DLG_NODE_CHECK(ctx, node, filter.dim(3) == input.dim(4), "filter tensor \"", filter.name,
                 "\" has ", filter.dim(3), " input channels, input \"", input.name, "\" has ",
                 input.dim(4));

  auto data = std::make_shared<Conv3DData>();
  reference::Conv3DGeometry& g = data->g;
  g.batches = input.dim(0);
  g.input_depth = input.dim(1);
  g.input_height = input.dim(2);
  g.input_width = input.dim(3);
  g.input_channels = input.dim(4);
  g.filter_depth = filter.dim(0);
  g.filter_height = filter.dim(1);
  g.filter_width = filter.dim(2);
  g.output_channels = filter.dim(4);
  g.stride_depth = p.stride_d;
  g.stride_height = p.stride_h;
  g.stride_width = p.stride_w;
  g.dilation_depth = p.dilation_d;
  g.dilation_height = p.dilation_h;
  g.dilation_width = p.dilation_w;
  g.pad_width = Window(ctx, node, p.padding, g.input_width, g.filter_width, g.stride_width,
                       g.dilation_width, &g.output_width);
  g.pad_height = Window(ctx, node, p.padding, g.input_height, g.filter_height, g.stride_height,
                        g.dilation_height, &g.output_height);
  g.pad_depth = Window(ctx, node, p.padding, g.input_depth, g.filter_depth, g.stride_depth,
                       g.dilation_depth, &g.output_depth);
  PrepareBiasAndActivation(ctx, node, bias, g.output_channels, p.activation, *data);
  ctx.SetOutputDims(node, 0,
                    {g.batches, g.output_depth, g.output_height, g.output_width,
                     g.output_channels});
  node.op_data = data;
}

void EvalConv3D(KernelContext& ctx, const Node& node) {
  const Conv3DData& d = *node.data<Conv3DData>();
  const Tensor* bias = node.inputs.size() > 2 && node.inputs[2] >= 0 ? &ctx.in(node, 2) : nullptr;
  reference::Conv3DFloat(d.g, ctx.in(node, 0).data_as<float>(), ctx.in(node, 1).data_as<float>(),
                         bias ? bias->data_as<float>() : nullptr, d.act_min, d.act_max,
                         ctx.out(node, 0).data_as<float>());
}

void PrepareConv3DTranspose(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 4);
  ctx.CheckOutputCount(node, 1);
  const Conv3DParams& p = Params(ctx, node);
  const Tensor& output_shape = ctx.input(node, 0);
  const Tensor& filter = ctx.input(node, 1);
  const Tensor& input = ctx.input(node, 2);
  const Tensor* bias = ctx.optional_input(node, 3);
  Tensor& output = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, output_shape.type == DataType::kInt32, "output_shape tensor \"",
                 output_shape.name, "\" has type ", DataTypeName(output_shape.type),
                 ", INT32 expected");
  DLG_NODE_CHECK(ctx, node, output_shape.rank() == 1 && output_shape.dim(0) == 5,
                 "output_shape tensor \"", output_shape.name,
                 "\" must be a 1-D tensor of 5 values");
  ctx.RequireValues(node, output_shape, "(output_shape) is computed at run time and decides "
                    "the output shape");
  layer_quant::CheckConstantSize(ctx, node, output_shape, "output_shape");
  CheckFloat(ctx, node, input, "input");
  CheckFloat(ctx, node, filter, "filter");
  CheckFloat(ctx, node, output, "output");
  CheckRank5(ctx, node, input, "input");
  CheckRank5(ctx, node, filter, "filter");
  layer_quant::CheckConstantSize(ctx, node, filter, "filter");

  const int32_t* shape = output_shape.data_as<int32_t>();
  for (int i = 0; i < 5; ++i)
    DLG_NODE_CHECK(ctx, node, shape[i] >= 0, "output_shape has negative dimension ", shape[i]);
  DLG_NODE_CHECK(ctx, node, filter.dim(4) == input.dim(4), "filter tensor \"", filter.name,
                 "\" has ", filter.dim(4), " input channels, input \"", input.name, "\" has ",
                 input.dim(4));
  DLG_NODE_CHECK(ctx, node, shape[0] == input.dim(0), "output_shape batch ", shape[0],
                 " differs from the input batch ", input.dim(0));
  DLG_NODE_CHECK(ctx, node, shape[4] == filter.dim(3), "output_shape channels ", shape[4],
                 " differ from the filter's output channels ", filter.dim(3));

  auto data = std::make_shared<Conv3DData>();
  reference::Conv3DGeometry& g = data->g;
  g.batches = input.dim(0);
  g.input_depth = input.dim(1);
  g.input_height = input.dim(2);
  g.input_width = input.dim(3);
  g.input_channels = input.dim(4);
  g.filter_depth = filter.dim(0);
  g.filter_height = filter.dim(1);
  g.filter_width = filter.dim(2);
  g.output_depth = shape[1];
  g.output_height = shape[2];
  g.output_width = shape[3];
  g.output_channels = shape[4];
  g.stride_depth = p.stride_d;
  g.stride_height = p.stride_h;
  g.stride_width = p.stride_w;
  g.dilation_depth = p.dilation_d;
  g.dilation_height = p.dilation_h;
  g.dilation_width = p.dilation_w;
  g.pad_width = Window(ctx, node, p.padding, g.output_width, g.filter_width, g.stride_width,
                       g.dilation_width, nullptr);
  g.pad_height = Window(ctx, node, p.padding, g.output_height, g.filter_height, g.stride_height,
                        g.dilation_height, nullptr);
  g.pad_depth = Window(ctx, node, p.padding, g.output_depth, g.filter_depth, g.stride_depth,
                       g.dilation_depth, nullptr);
  PrepareBiasAndActivation(ctx, node, bias, g.output_channels, p.activation, *data);
  ctx.SetOutputDims(node, 0, {shape[0], shape[1], shape[2], shape[3], shape[4]});
  node.op_data = data;
}

void EvalConv3DTranspose(KernelContext& ctx, const Node& node) {
  const Conv3DData& d = *node.data<Conv3DData>();
  const Tensor* bias = node.inputs.size() > 3 && node.inputs[3] >= 0 ? &ctx.in(node, 3) : nullptr;
  reference::Conv3DTransposeFloat(d.g, ctx.in(node, 2).data_as<float>(),
                                  ctx.in(node, 1).data_as<float>(),
                                  bias ? bias->data_as<float>() : nullptr, d.act_min, d.act_max,
                                  ctx.out(node, 0).data_as<float>());
}

}  // namespace delegato
