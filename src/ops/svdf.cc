// SVDF in TFLite's three forms:
//   full integer: int8 input/output/weights_feature, int16 weights_time and
//     state, int32 bias, RELU activation (the kernel clamps to int8);
//   float32: every tensor float32;
//   hybrid: float32 input/state/bias/output with int8 weights_feature and
//     weights_time (per-tensor scales, zero point 0), symmetric or asymmetric
//     input quantization (asymmetric_quantize_inputs).
//   inputs: input [batch, input_size], weights_feature [filters, input_size],
//           weights_time [filters, memory], bias [units] (optional),
//           state [batch, memory * filters] (a variable tensor, updated in place)
//   output: [batch, units], units = filters / rank
#include <cmath>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "kernels/quantization.h"
#include "kernels/reference/svdf.h"
#include "ops/kernel.h"

namespace delegato {
namespace {

constexpr int kInput = 0;
constexpr int kWeightsFeature = 1;
constexpr int kWeightsTime = 2;
constexpr int kBias = 3;
constexpr int kState = 4;

enum class SvdfKind { kInteger, kFloat, kHybrid };

struct SvdfData {
  SvdfKind kind = SvdfKind::kInteger;
  reference::SvdfShape shape;
  reference::SvdfIntegerParams quant;
  reference::SvdfFloatParams float_params;
  reference::SvdfHybridParams hybrid;  // feature_row_sums points into row_sums
  std::vector<float> weights_time_float;  // hybrid: dequantized weights_time
  std::vector<int32_t> row_sums;
  size_t quantized_offset = 0, scales_offset = 0, zero_points_offset = 0;
};

size_t AlignUp(size_t n) { return (n + 15) / 16 * 16; }

reference::LstmActivation FloatActivation(const KernelContext& ctx, const Node& node,
                                          Activation a) {
  switch (a) {
    case Activation::kNone: return reference::LstmActivation::kNone;
    case Activation::kRelu: return reference::LstmActivation::kRelu;
    case Activation::kReluN1To1: return reference::LstmActivation::kReluN1To1;
    case Activation::kRelu6: return reference::LstmActivation::kRelu6;
    case Activation::kTanh: return reference::LstmActivation::kTanh;
    default: break;
  }
  ctx.Fail(node, "activation SIGN_BIT is not supported by SVDF");
  return reference::LstmActivation::kNone;
}

float HybridWeightScale(const KernelContext& ctx, const Node& node, const Tensor& w,
                        const char* role) {
  ctx.CheckType(node, w, DataType::kInt8);
  DLG_NODE_CHECK(ctx, node, w.is_constant(), role, " \"", w.name,
                 "\" must be a constant in a hybrid SVDF");
  DLG_NODE_CHECK(ctx, node, w.quantization && w.quantization->scale.size() == 1, role, " \"",
                 w.name, "\" must be quantized per tensor");
  const float scale = w.quantization->scale[0];
  DLG_NODE_CHECK(ctx, node, scale > 0.0f && std::isfinite(scale), role, " \"", w.name,
                 "\" has invalid scale ", scale);
  DLG_NODE_CHECK(ctx, node, w.zero_point() == 0, role, " \"", w.name,
                 "\" must have zero point 0, has ", w.zero_point());
  return scale;
}

void CheckConstantBytes(const KernelContext& ctx, const Node& node, const Tensor& t,
                        const char* role) {
  if (!t.is_constant()) return;
  const size_t expected = TensorByteSize(t.type, t.dims);
  DLG_NODE_CHECK(ctx, node, t.bytes == expected, role, " \"", t.name, "\" holds ", t.bytes,
                 " bytes, its shape needs ", expected);
}

float PositiveScale(const KernelContext& ctx, const Node& node, const Tensor& t,
                    const char* role) {
  DLG_NODE_CHECK(ctx, node, !t.quantization->scale.empty(), role, " \"", t.name,
                 "\" has no quantization parameters");
  const float scale = t.scale();
  DLG_NODE_CHECK(ctx, node, scale > 0.0f && std::isfinite(scale), role, " \"", t.name,
                 "\" has invalid scale ", scale);
  return scale;
}

}  // namespace

void PrepareSvdf(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 5, 5);
  ctx.CheckOutputCount(node, 1);
  const auto* params = std::get_if<SvdfParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, params != nullptr, "missing SVDFOptions");

  const Tensor& input = ctx.input(node, kInput);
  const Tensor& weights_feature = ctx.input(node, kWeightsFeature);
  const Tensor& weights_time = ctx.input(node, kWeightsTime);
  const Tensor* bias = ctx.optional_input(node, kBias);
  const Tensor& state = ctx.input(node, kState);
  Tensor& output = ctx.output(node, 0);

  DLG_NODE_CHECK(ctx, node, input.rank() == 2, "input \"", input.name,
                 "\" must have rank 2 [batch, input_size], has rank ", input.rank());
  DLG_NODE_CHECK(ctx, node, weights_feature.rank() == 2, "weights_feature \"",
                 weights_feature.name, "\" must have rank 2, has rank ", weights_feature.rank());
  DLG_NODE_CHECK(ctx, node, weights_time.rank() == 2, "weights_time \"", weights_time.name,
                 "\" must have rank 2, has rank ", weights_time.rank());
  DLG_NODE_CHECK(ctx, node, state.rank() == 2, "state \"", state.name,
                 "\" must have rank 2, has rank ", state.rank());

  reference::SvdfShape s;
  s.batch = input.dim(0);
  s.input_size = input.dim(1);
  s.filters = weights_feature.dim(0);
  s.memory = weights_time.dim(1);
  s.rank = params->rank;
  DLG_NODE_CHECK(ctx, node, s.rank > 0, "rank must be positive, got ", s.rank);
  DLG_NODE_CHECK(ctx, node, s.filters % s.rank == 0, "weights_feature has ", s.filters,
                 " filters, not a multiple of rank ", s.rank);
  DLG_NODE_CHECK(ctx, node, weights_feature.dim(1) == s.input_size, "weights_feature has ",
                 weights_feature.dim(1), " columns, input has ", s.input_size);
  DLG_NODE_CHECK(ctx, node, weights_time.dim(0) == s.filters, "weights_time has ",
                 weights_time.dim(0), " rows, weights_feature ", s.filters);
  DLG_NODE_CHECK(ctx, node, s.memory > 0, "weights_time memory size must be positive, got ",
                 s.memory);
  DLG_NODE_CHECK(ctx, node,
                 state.dim(0) == s.batch &&
                     static_cast<int64_t>(state.dim(1)) ==
                         static_cast<int64_t>(s.memory) * s.filters,
                 "state \"", state.name, "\" must be [", s.batch, ", ",
                 static_cast<int64_t>(s.memory) * s.filters, "], got [", state.dim(0), ", ",
                 state.dim(1), "]");
  DLG_NODE_CHECK(ctx, node, state.storage == TensorStorage::kVariable, "state \"", state.name,
                 "\" must be a variable tensor");
  if (bias != nullptr) {
    DLG_NODE_CHECK(ctx, node, bias->rank() == 1 && bias->dim(0) == s.units(), "bias \"",
                   bias->name, "\" must be [", s.units(), "]");
  }
  CheckConstantBytes(ctx, node, weights_feature, "weights_feature");
  CheckConstantBytes(ctx, node, weights_time, "weights_time");
  if (bias != nullptr) CheckConstantBytes(ctx, node, *bias, "bias");

  auto data = std::make_shared<SvdfData>();
  data->shape = s;

  size_t scratch_bytes = static_cast<size_t>(s.batch) * static_cast<size_t>(s.filters) * 4;
  if (input.type == DataType::kFloat32 && weights_feature.type == DataType::kFloat32) {
    data->kind = SvdfKind::kFloat;
    ctx.CheckType(node, weights_time, DataType::kFloat32);
    ctx.CheckType(node, state, DataType::kFloat32);
    ctx.CheckType(node, output, DataType::kFloat32);
    if (bias != nullptr) ctx.CheckType(node, *bias, DataType::kFloat32);
    data->float_params.activation = FloatActivation(ctx, node, params->activation);
  } else if (input.type == DataType::kFloat32) {
    data->kind = SvdfKind::kHybrid;
    reference::SvdfHybridParams& h = data->hybrid;
    h.feature_scale = HybridWeightScale(ctx, node, weights_feature, "weights_feature");
    const float time_scale = HybridWeightScale(ctx, node, weights_time, "weights_time");
    ctx.CheckType(node, state, DataType::kFloat32);
    ctx.CheckType(node, output, DataType::kFloat32);
    if (bias != nullptr) ctx.CheckType(node, *bias, DataType::kFloat32);
    h.activation = FloatActivation(ctx, node, params->activation);
    h.asymmetric = params->asymmetric_quantize_inputs;
    const int8_t* wt = weights_time.data_as<int8_t>();
    data->weights_time_float.resize(static_cast<size_t>(s.filters) * s.memory);
    for (size_t i = 0; i < data->weights_time_float.size(); ++i)
      data->weights_time_float[i] = static_cast<float>(wt[i]) * time_scale;
    const int8_t* wf = weights_feature.data_as<int8_t>();
    data->row_sums.assign(static_cast<size_t>(s.filters), 0);
    for (int32_t f = 0; f < s.filters; ++f)
      for (int32_t c = 0; c < s.input_size; ++c)
        data->row_sums[f] += wf[static_cast<int64_t>(f) * s.input_size + c];
    h.feature_row_sums = data->row_sums.data();
    data->quantized_offset = AlignUp(scratch_bytes);
    data->scales_offset =
        AlignUp(data->quantized_offset + static_cast<size_t>(s.batch) * s.input_size);
    data->zero_points_offset = AlignUp(data->scales_offset + static_cast<size_t>(s.batch) * 4);
    scratch_bytes = data->zero_points_offset + static_cast<size_t>(s.batch) * 4;
  } else if (input.type == DataType::kInt8) {
    ctx.CheckType(node, weights_feature, DataType::kInt8);
    ctx.CheckType(node, weights_time, DataType::kInt16);
    ctx.CheckType(node, state, DataType::kInt16);
    ctx.CheckType(node, output, DataType::kInt8);
    if (bias != nullptr) ctx.CheckType(node, *bias, DataType::kInt32);
    // The integer kernel exists only in this form (it clamps to int8, no ReLU).
    DLG_NODE_CHECK(ctx, node, params->activation == Activation::kRelu,
                   "integer SVDF requires RELU activation");
    const double input_scale = PositiveScale(ctx, node, input, "input");
    const double feature_scale = PositiveScale(ctx, node, weights_feature, "weights_feature");
    const double time_scale = PositiveScale(ctx, node, weights_time, "weights_time");
    const double state_scale = PositiveScale(ctx, node, state, "state");
    const double output_scale = PositiveScale(ctx, node, output, "output");
    reference::SvdfIntegerParams& q = data->quant;
    q.input_zero_point = input.zero_point();
    q.output_zero_point = output.zero_point();
    quant::QuantizeMultiplier(input_scale * feature_scale / state_scale, &q.feature_multiplier,
                              &q.feature_shift);
    quant::QuantizeMultiplier(state_scale * time_scale / output_scale, &q.output_multiplier,
                              &q.output_shift);
  } else {
    ctx.Fail(node, "input \"", input.name, "\" has type ", DataTypeName(input.type),
             "; INT8 or FLOAT32 expected");
  }

  ctx.SetOutputDims(node, 0, {s.batch, s.units()});
  node.scratch_bytes = scratch_bytes;
  node.op_data = std::move(data);
}

void EvalSvdf(KernelContext& ctx, const Node& node) {
  const SvdfData& d = *node.data<SvdfData>();
  const Tensor& input = ctx.in(node, kInput);
  const Tensor& weights_feature = ctx.in(node, kWeightsFeature);
  const Tensor& weights_time = ctx.in(node, kWeightsTime);
  const Tensor* bias = node.inputs[kBias] >= 0 ? &ctx.in(node, kBias) : nullptr;
  Tensor& state = ctx.tensor(node.inputs[kState]);
  Tensor& output = ctx.out(node, 0);
  if (d.kind == SvdfKind::kFloat) {
    reference::SvdfFloat(d.shape, d.float_params, input.data_as<float>(),
                         weights_feature.data_as<float>(), weights_time.data_as<float>(),
                         bias ? bias->data_as<float>() : nullptr, state.data_as<float>(),
                         reinterpret_cast<float*>(node.scratch), output.data_as<float>());
    return;
  }
  if (d.kind == SvdfKind::kHybrid) {
    uint8_t* scratch = reinterpret_cast<uint8_t*>(node.scratch);
    reference::SvdfHybrid(d.shape, d.hybrid, input.data_as<float>(),
                          weights_feature.data_as<int8_t>(), d.weights_time_float.data(),
                          bias ? bias->data_as<float>() : nullptr, state.data_as<float>(),
                          reinterpret_cast<float*>(scratch),
                          reinterpret_cast<int8_t*>(scratch + d.quantized_offset),
                          reinterpret_cast<float*>(scratch + d.scales_offset),
                          reinterpret_cast<int32_t*>(scratch + d.zero_points_offset),
                          output.data_as<float>());
    return;
  }
  reference::SvdfInteger(d.shape, d.quant, input.data_as<int8_t>(),
                         weights_feature.data_as<int8_t>(), weights_time.data_as<int16_t>(),
                         bias ? bias->data_as<int32_t>() : nullptr, state.data_as<int16_t>(),
                         reinterpret_cast<int32_t*>(node.scratch), output.data_as<int8_t>());
}

}  // namespace delegato
