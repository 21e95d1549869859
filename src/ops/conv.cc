// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: checks, output shapes and
// requantization constants in Prepare; the reference kernels in Eval.
//
// Supported: float32; uint8 with per-tensor asymmetric weights (the legacy
// scheme); int8 activations with int8 weights quantized per tensor or per
// output channel; int16x8 (int16 activations with zero point 0, int8 weights,
// INT64 bias or none), which always runs the reference kernels of
// kernels/reference/int16x8.h. Hybrid (float activations, quantized weights)
// and shuffled FC weights are rejected in Prepare.
//
// Multipliers are computed exactly as TFLite's Prepare does, which differs by
// path: legacy uint8 convolutions use double(float(in_s * w_s)) / out_s,
// int8 convolutions double(in_s) * double(w_s[c]) / double(out_s), both
// turned into a Q31 multiplier and shift; FULLY_CONNECTED keeps
// double(in_s) * double(w_s) / double(out_s) as a double and its reference
// kernel rescales in floating point.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <variant>
#include <vector>

#include "kernels/optimized/conv16x8.h"
#include "kernels/optimized/depthwise16x8.h"
#include "kernels/optimized/float_conv.h"
#include "kernels/optimized/float_winograd.h"
#include "kernels/optimized/hybrid_depthwise.h"
#include "kernels/optimized/hybrid_gemm.h"
#include "kernels/optimized/packed_state.h"
#include "kernels/optimized/quant_conv.h"
#include "kernels/optimized/quant_depthwise.h"
#include "kernels/optimized/repeat_channels.h"
#include "kernels/quantization.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/depthwise_conv.h"
#include "kernels/reference/fully_connected.h"
#include "kernels/reference/hybrid.h"
#include "kernels/reference/int16x8.h"
#include "ops/kernel.h"

namespace delegato {
namespace {

// Every task of an optimized kernel (RunTask(task, args...)) across the
// context's thread pool.
template <class Kernel, class... Args>
void RunTasks(const KernelContext& ctx, const Kernel& kernel, const Args&... args) {
  ParallelRange(ctx, kernel.num_tasks(), [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) kernel.RunTask(static_cast<int>(task), args...);
  });
}

// A depthwise kernel's output rows (RunRows(begin, end, in, out)) across the
// pool, or on the calling thread below 2^16 multiply-adds: about 2 µs of
// work at the float kernel's 25-35 G MAC/s, less than the hand-off costs. A
// layer split across threads leaves its output in both cores' caches, and a
// depthwise layer run by the caller alone then fetches half its input from
// the other core: float 14x14x576 stride 2 took 20 µs so at 2 threads
// against 11 at 1, 11 again split (2^18 before; zoo:mobilenet_v2_float32 at
// 2 threads: 0.90 -> 0.75 of LiteRT's time).
template <class Kernel, class In, class Out>
void RunDepthwiseRows(const KernelContext& ctx, const Kernel& kernel, const In* in, Out* out) {
  constexpr int64_t kMinParallelMacs = int64_t{1} << 16;
  if (kernel.macs() < kMinParallelMacs) {
    kernel.RunRows(0, kernel.rows(), in, out);
    return;
  }
  ParallelRange(ctx, kernel.rows(),
                [&](int64_t begin, int64_t end) { kernel.RunRows(begin, end, in, out); });
}

// The optimized convolution GEMM (CONV_2D, FULLY_CONNECTED). Its packed
// weights come from the interpreter's PackedWeightStore when that holds an
// entry the kernel accepts for this node; otherwise it packs and records.
std::unique_ptr<optimized::QuantConv> MakeQuantConv(KernelContext& ctx, const Node& node,
                                                    const optimized::QuantConvParams& p) {
  PackedWeightStore* store = ctx.packed_weights();
  constexpr uint32_t kKind = static_cast<uint32_t>(optimized::PackedKind::kQuantConv);
  const PackedWeightStore::Blob stored =
      store != nullptr ? store->Find(node.index, kKind) : PackedWeightStore::Blob{};
  const auto start = std::chrono::steady_clock::now();
  auto fast = std::make_unique<optimized::QuantConv>(p, optimized::SelectedIsa(),
                                                     ctx.pool().num_threads(), stored.bytes);
  const int64_t micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  if (store != nullptr) {
    if (fast->reused_packed()) {
      store->CountLoaded(micros);
    } else {
      if (!stored.bytes.empty()) store->CountRejected();
      store->Record(node.index, kKind, fast->SerializePacked(p), micros);
    }
  }
  return fast;
}

// The float32 fast kernels run with a vector ISA; DELEGATO_ISA=scalar (or a
// CPU without AVX2) keeps the reference kernels.
bool UseFloatFast(const KernelContext& ctx) {
  return ctx.optimized() && optimized::SelectedIsa() != optimized::Isa::kScalar;
}

// ------------------------------------------------------------------ helpers

template <class P>
const P& ParamsOf(KernelContext& ctx, const Node& node, const char* options_name) {
  const P* params = std::get_if<P>(&node.def->params);
  if (params == nullptr) ctx.Fail(node, "missing ", options_name);
  return *params;
}

const char* ActivationName(Activation a) {
  switch (a) {
    case Activation::kNone: return "NONE";
    case Activation::kRelu: return "RELU";
    case Activation::kReluN1To1: return "RELU_N1_TO_1";
    case Activation::kRelu6: return "RELU6";
    case Activation::kTanh: return "TANH";
    case Activation::kSignBit: return "SIGN_BIT";
  }
  return "UNKNOWN";
}

bool IsQuantizedType(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// Checks a constant tensor's buffer holds exactly its elements.
void CheckConstantSize(KernelContext& ctx, const Node& node, const Tensor& t, const char* role) {
  if (!t.is_constant()) return;
  const size_t expected = TensorByteSize(t.type, t.dims);
  DLG_NODE_CHECK(ctx, node, t.bytes == expected, role, " tensor \"", t.name, "\" has ", t.bytes,
                 " bytes of data, its shape needs ", expected);
}

// An activation tensor's per-tensor scale and zero point, checked: a positive
// finite scale and a zero point inside the type's range.
struct TensorQuant {
  float scale = 0.0f;
  int32_t zero_point = 0;
};

TensorQuant ActivationQuant(KernelContext& ctx, const Node& node, const Tensor& t,
                            const char* role) {
  const Quantization& q = *t.quantization;
  DLG_NODE_CHECK(ctx, node, !q.scale.empty(), role, " tensor \"", t.name, "\" (",
                 DataTypeName(t.type), ") has no quantization parameters");
  DLG_NODE_CHECK(ctx, node, q.scale.size() == 1, role, " tensor \"", t.name,
                 "\" must be quantized per tensor, has ", q.scale.size(), " scales");
  const float scale = q.scale[0];
  DLG_NODE_CHECK(ctx, node, std::isfinite(scale) && scale > 0.0f, role, " tensor \"", t.name,
                 "\" has invalid scale ", scale);
  const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
  if (t.type == DataType::kInt16) {
    // int16x8 activations are symmetric.
    DLG_NODE_CHECK(ctx, node, zp == 0, role, " tensor \"", t.name,
                   "\" (INT16) must have zero point 0, has ", zp);
  }
  const int64_t lo = t.type == DataType::kUInt8 ? 0 : -128;
  const int64_t hi = t.type == DataType::kUInt8 ? 255 : 127;
  DLG_NODE_CHECK(ctx, node, zp >= lo && zp <= hi, role, " tensor \"", t.name, "\" has zero point ",
                 zp, " outside the ", DataTypeName(t.type), " range");
  return TensorQuant{scale, static_cast<int32_t>(zp)};
}

// Weight quantization: per-tensor (one scale) or per-axis (one scale per
// output channel along `quantized_dimension`, int8 only).
struct WeightQuant {
  std::vector<float> scales;  // 1 or `channels` entries
  int32_t zero_point = 0;     // first zero point (per-tensor offset)
  bool per_channel = false;
};

WeightQuant FilterQuant(KernelContext& ctx, const Node& node, const Tensor& filter,
                        int32_t channels, bool require_zero_zero_points) {
  const Quantization& q = *filter.quantization;
  const char* name = filter.name.c_str();
  DLG_NODE_CHECK(ctx, node, !q.scale.empty(), "filter tensor \"", name, "\" (",
                 DataTypeName(filter.type), ") has no quantization parameters");
  WeightQuant w;
  w.per_channel = q.scale.size() > 1;
  if (w.per_channel) {
    DLG_NODE_CHECK(ctx, node, filter.type == DataType::kInt8, "filter tensor \"", name,
                   "\" is quantized per axis but has type ", DataTypeName(filter.type),
                   "; per-axis weights must be INT8");
    DLG_NODE_CHECK(ctx, node, static_cast<int64_t>(q.scale.size()) == channels,
                   "filter tensor \"", name, "\" has ", q.scale.size(),
                   " per-axis scales, expected one per output channel (", channels, ")");
    const int32_t axis = q.quantized_dimension;
    DLG_NODE_CHECK(ctx, node, axis >= 0 && axis < filter.rank() && filter.dim(axis) == channels,
                   "filter tensor \"", name, "\" quantized_dimension ", axis,
                   " does not index the output-channel dimension of size ", channels);
  }
  for (float s : q.scale)
    DLG_NODE_CHECK(ctx, node, std::isfinite(s) && s >= 0.0f, "filter tensor \"", name,
                   "\" has invalid scale ", s);
  w.scales = q.scale;
  const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
  if (require_zero_zero_points) {
    for (int64_t z : q.zero_point)
      DLG_NODE_CHECK(ctx, node, z == 0, "filter tensor \"", name,
                     "\" must have zero points of 0 (symmetric ", DataTypeName(filter.type),
                     " weights), has ", z);
  }
  const int64_t lo = filter.type == DataType::kUInt8 ? 0 : -128;
  const int64_t hi = filter.type == DataType::kUInt8 ? 255 : 127;
  DLG_NODE_CHECK(ctx, node, zp >= lo && zp <= hi, "filter tensor \"", name, "\" has zero point ",
                 zp, " outside the ", DataTypeName(filter.type), " range");
  w.zero_point = static_cast<int32_t>(zp);
  return w;
}

float BiasScale(const Tensor* bias) {
  return bias == nullptr || bias->quantization->scale.empty() ? 0.0f
                                                              : bias->quantization->scale[0];
}

// TFLite's GetQuantizedConvolutionMultipler checks for per-tensor weights:
// the bias scale must be close to in_s * w_s relative to the output scale.
void CheckLegacyBiasScale(KernelContext& ctx, const Node& node, const Tensor* bias,
                          float input_scale, float filter_scale, float output_scale) {
  DLG_NODE_CHECK(ctx, node, input_scale * filter_scale >= 0.0f,
                 "input scale * filter scale is negative");
  if (bias == nullptr) return;
  const double product = static_cast<double>(input_scale) * static_cast<double>(filter_scale);
  const double diff = std::abs(product - static_cast<double>(BiasScale(bias)));
  DLG_NODE_CHECK(ctx, node, diff / static_cast<double>(output_scale) <= 0.02, "bias tensor \"",
                 bias->name, "\" scale ", BiasScale(bias),
                 " does not match input scale * filter scale (", product, ")");
}

// Per-channel Q31 multipliers and shifts for a convolution's requantization.
void ComputeConvMultipliers(KernelContext& ctx, const Node& node, DataType type,
                            const TensorQuant& in, const WeightQuant& w, const TensorQuant& out,
                            int32_t channels, std::vector<int32_t>* multipliers,
                            std::vector<int32_t>* shifts) {
  multipliers->assign(channels, 0);
  shifts->assign(channels, 0);
  for (int32_t c = 0; c < channels; ++c) {
    const float filter_scale = w.per_channel ? w.scales[c] : w.scales[0];
    double real;
    if (type == DataType::kUInt8) {
      // Float product first, as TFLite's legacy helper does.
      real = static_cast<double>(in.scale * filter_scale) / static_cast<double>(out.scale);
    } else {
      real = static_cast<double>(in.scale) * static_cast<double>(filter_scale) /
             static_cast<double>(out.scale);
    }
    int32_t multiplier = 0;
    int shift = 0;
    quant::QuantizeMultiplier(real, &multiplier, &shift);
    DLG_NODE_CHECK(ctx, node, shift <= 31, "effective output scale ", real,
                   " of channel ", c, " is too large to requantize");
    // The 64-bit requantization of int16x8 shifts right by 15 - shift.
    DLG_NODE_CHECK(ctx, node, type != DataType::kInt16 || shift <= 14, "effective output scale ",
                   real, " of channel ", c, " is too large to requantize 16x8");
    (*multipliers)[c] = multiplier;
    (*shifts)[c] = shift;
  }
}

struct ActivationRange {
  float float_min = 0, float_max = 0;
  int32_t quant_min = 0, quant_max = 0;
};

ActivationRange ComputeActivationRange(KernelContext& ctx, const Node& node, Activation act,
                                       DataType type, const TensorQuant& out) {
  ActivationRange r;
  bool ok;
  if (type == DataType::kFloat32) {
    ok = quant::ActivationRangeFloat(act, &r.float_min, &r.float_max);
  } else {
    // 6 / scale must fit in int32 for the clamp bounds to exist.
    DLG_NODE_CHECK(ctx, node, act == Activation::kNone || 6.0f / out.scale < 2.0e9f,
                   "output scale ", out.scale, " is too small for fused activation ",
                   ActivationName(act));
    if (type == DataType::kUInt8)
      ok = quant::ActivationRangeQuantized<uint8_t>(act, out.scale, out.zero_point, &r.quant_min,
                                                    &r.quant_max);
    else if (type == DataType::kInt16)
      ok = quant::ActivationRangeQuantized<int16_t>(act, out.scale, out.zero_point, &r.quant_min,
                                                    &r.quant_max);
    else
      ok = quant::ActivationRangeQuantized<int8_t>(act, out.scale, out.zero_point, &r.quant_min,
                                                   &r.quant_max);
  }
  DLG_NODE_CHECK(ctx, node, ok, "fused activation ", ActivationName(act), " is not supported");
  return r;
}

// Input/filter/output types of a convolution-like op: all float32, all uint8,
// all int8, or int16 input and output with int8 weights (int16x8). Names
// every tensor type otherwise.
DataType CheckConvTypes(KernelContext& ctx, const Node& node, const Tensor& input,
                        const Tensor& filter, const Tensor& output) {
  const DataType t = input.type;
  if (t == DataType::kInt16) {
    DLG_NODE_CHECK(ctx, node, filter.type == DataType::kInt8 && output.type == DataType::kInt16,
                   "unsupported types: input \"", input.name, "\" INT16, filter \"", filter.name,
                   "\" ", DataTypeName(filter.type), ", output \"", output.name, "\" ",
                   DataTypeName(output.type), " (int16x8 needs INT8 weights and an INT16 output)");
    return t;
  }
  const bool supported = t == DataType::kFloat32 || IsQuantizedType(t);
  const bool hybrid = t == DataType::kFloat32 && IsQuantizedType(filter.type);
  DLG_NODE_CHECK(ctx, node, !hybrid, "hybrid ", DataTypeName(t), " input with ",
                 DataTypeName(filter.type), " filter \"", filter.name, "\" is not supported");
  DLG_NODE_CHECK(ctx, node, supported && filter.type == t && output.type == t,
                 "unsupported types: input \"", input.name, "\" ", DataTypeName(t), ", filter \"",
                 filter.name, "\" ", DataTypeName(filter.type), ", output \"", output.name, "\" ",
                 DataTypeName(output.type),
                 " (supported: all FLOAT32, all UINT8, all INT8, INT16 with INT8 weights)");
  return t;
}

// int32_bias_declared: the op's options set quantized_bias_type INT32
// (CONV_2D, FULLY_CONNECTED), which is how TFLite selects its 32-bit 16x8
// path.
void CheckBias(KernelContext& ctx, const Node& node, const Tensor* bias, DataType type,
               int32_t channels, bool int32_bias_declared = false) {
  if (bias == nullptr) return;
  if (type == DataType::kInt16) {
    // An INT32 bias without the declaration is read as INT64 by LiteRT 2.3
    // (garbage outputs; DEPTHWISE_CONV_2D rejects it), so there is no result
    // to reproduce.
    DLG_NODE_CHECK(ctx, node,
                   bias->type == DataType::kInt64 ||
                       (bias->type == DataType::kInt32 && int32_bias_declared),
                   "bias tensor \"", bias->name, "\" has type ", DataTypeName(bias->type),
                   ", expected INT64 for INT16 input (an INT32 bias needs quantized_bias_type "
                   "INT32 in the options of CONV_2D or FULLY_CONNECTED)");
  } else {
    const DataType expected = type == DataType::kFloat32 ? DataType::kFloat32 : DataType::kInt32;
    DLG_NODE_CHECK(ctx, node, bias->type == expected, "bias tensor \"", bias->name,
                   "\" has type ", DataTypeName(bias->type), ", expected ",
                   DataTypeName(expected), " for ", DataTypeName(type), " input");
  }
  DLG_NODE_CHECK(ctx, node, bias->NumElements() == channels, "bias tensor \"", bias->name,
                 "\" has ", bias->NumElements(), " elements, expected ", channels);
  if (type != DataType::kFloat32) {
    const auto& zps = bias->quantization->zero_point;
    DLG_NODE_CHECK(ctx, node, zps.empty() || zps[0] == 0, "bias tensor \"", bias->name,
                   "\" must have zero point 0");
  }
  CheckConstantSize(ctx, node, *bias, "bias");
}

// Keeps the window arithmetic (origin + dilation * tap) inside int32.
void CheckWindowExtent(KernelContext& ctx, const Node& node, int32_t filter_h, int32_t filter_w,
                       int32_t dilation_h, int32_t dilation_w) {
  constexpr int64_t kMaxExtent = int64_t{1} << 30;
  DLG_NODE_CHECK(ctx, node,
                 (int64_t{filter_h} - 1) * dilation_h < kMaxExtent &&
                     (int64_t{filter_w} - 1) * dilation_w < kMaxExtent,
                 "dilated filter extent (", filter_h, "x", filter_w, " filter, dilation ",
                 dilation_h, "x", dilation_w, ") is too large");
}

void CheckRank(KernelContext& ctx, const Node& node, const Tensor& t, const char* role,
               int rank) {
  DLG_NODE_CHECK(ctx, node, t.rank() == rank, role, " tensor \"", t.name, "\" must have rank ",
                 rank, ", has rank ", t.rank());
}

// Shared state of the three ops: requantization constants and the filter in
// the layout the kernels read (packed once here when constant, otherwise into
// scratch at every Eval).
struct QuantState {
  int32_t input_offset = 0, output_offset = 0, filter_offset = 0;
  ActivationRange act;
  std::vector<int32_t> multipliers, shifts;
  std::vector<double> output_scales;  // FULLY_CONNECTED
};

// ------------------------------------------------------------------ CONV_2D

struct ConvData {
  DataType type = DataType::kFloat32;
  reference::ConvGeometry geometry;
  QuantState q;
  bool filter_packed = false;
  std::vector<float> packed_float;
  std::vector<int16_t> packed_quant;  // uint8, int8: w - w_zp as int16
  // int16x8: the int8 weights themselves (their zero point is 0), half
  // packed_quant's bytes.
  std::vector<int8_t> packed_16x8;
  // The optimized kernel, when InterpreterOptions::kernels allows it and it
  // covers the node (quantized, ungrouped, constant filter and bias).
  std::unique_ptr<optimized::QuantConv> fast;
  // float32 with constant filter and bias, when allowed: 3x3 stride-1
  // layers where Winograd pays (FloatWinograd::Pays), the GEMM otherwise.
  std::unique_ptr<optimized::FloatWinograd> fast_winograd;
  std::unique_ptr<optimized::FloatConv> fast_float;
  // float32 grouped, the GEMM per group.
  std::unique_ptr<optimized::FloatGroupedConv> fast_grouped;
  // 8-bit grouped, the quantized GEMM per group (bit-exact).
  std::unique_ptr<optimized::QuantGroupedConv> fast_grouped8;
  // int16x8 with constant filter and bias, when allowed.
  std::unique_ptr<optimized::Conv16x8> fast16;
  std::unique_ptr<optimized::Conv16x8Grouped> fast16_grouped;  // grouped, per group
  // Hybrid: float input and output, constant int8 weights.
  bool hybrid = false;
  reference::HybridConvParams hybrid_params;
  std::vector<float> weight_scales;
  size_t scales_offset = 0, zero_points_offset = 0;  // in scratch, after the quantized input
  // Hybrid through the int16 GEMM (bit-exact), when allowed; its scratch
  // follows the zero points.
  std::unique_ptr<optimized::HybridConvKernel> fast_hybrid;
  // Grouped with per-channel weights: the same GEMM per group.
  std::unique_ptr<optimized::HybridGroupedConv> fast_hybrid_grouped;
  size_t fast_hybrid_offset = 0;
};

// The filter of type T packed into dst: float as float, int16x8's int8 as
// int8, uint8 and int8 as int16 with the filter offset added.
template <class T>
void PackConvFilterInto(const ConvData& d, const Tensor& filter, void* dst) {
  if constexpr (std::is_same_v<T, float>) {
    reference::PackConvFilter(d.geometry, filter.data_as<float>(), 0, static_cast<float*>(dst));
  } else if (d.type == DataType::kInt16) {
    reference::PackConvFilter(d.geometry, filter.data_as<int8_t>(), 0, static_cast<int8_t*>(dst));
  } else {
    reference::PackConvFilter(d.geometry, filter.data_as<T>(), d.q.filter_offset,
                              static_cast<int16_t*>(dst));
  }
}

void PackConv(ConvData& d, const Tensor& filter) {
  switch (d.type) {
    case DataType::kFloat32:
      d.packed_float.resize(d.geometry.packed_filter_elements());
      PackConvFilterInto<float>(d, filter, d.packed_float.data());
      break;
    case DataType::kUInt8:
      d.packed_quant.resize(d.geometry.packed_filter_elements());
      PackConvFilterInto<uint8_t>(d, filter, d.packed_quant.data());
      break;
    case DataType::kInt16:
      d.packed_16x8.resize(d.geometry.packed_filter_elements());
      PackConvFilterInto<int8_t>(d, filter, d.packed_16x8.data());
      break;
    default:
      d.packed_quant.resize(d.geometry.packed_filter_elements());
      PackConvFilterInto<int8_t>(d, filter, d.packed_quant.data());
      break;
  }
  d.filter_packed = true;
}

bool IsPadProducer(const Node::FusedProducer& fused) {
  return fused.producer_node != nullptr && fused.producer_node->kernel != nullptr &&
         fused.producer_node->kernel->builtin == BuiltinOp::kPad;
}

// A PAD folded in (Node::FusedProducer): its input is read instead of input 0,
// its pads added to the convolution's own. Hybrid kernels quantize the whole
// padded image (the padding counts in its range) and take none.
const Tensor& AcceptPadFusion(KernelContext& ctx, Node& node, bool hybrid) {
  Node::FusedProducer& fused = node.fused;
  // The source's dims are known now (its producer was prepared): NHWC only.
  fused.accepted = fused.source >= 0 && IsPadProducer(fused) && !hybrid &&
                   ctx.tensor(fused.source).rank() == 4;
  return fused.accepted ? ctx.tensor(fused.source) : ctx.input(node, 0);
}

const Tensor& ConvInput(KernelContext& ctx, const Node& node) {
  return node.fused.accepted ? ctx.tensor(node.fused.source) : ctx.in(node, 0);
}

// The output size and the top/left padding over the input extended by a
// folded PAD's pads.
template <class Geometry>
void SetWindow(const Node& node, Padding padding, Geometry& g) {
  const Node::FusedProducer& fused = node.fused;
  const bool extra = fused.accepted;
  const reference::Window2D window = reference::ComputeWindow2D(
      padding, g.stride_height, g.stride_width, g.dilation_height, g.dilation_width,
      g.input_height + (extra ? fused.top + fused.bottom : 0),
      g.input_width + (extra ? fused.left + fused.right : 0), g.filter_height, g.filter_width);
  g.output_height = window.out_height;
  g.output_width = window.out_width;
  g.pad_height = window.pad_height + (extra ? fused.top : 0);
  g.pad_width = window.pad_width + (extra ? fused.left : 0);
}

}  // namespace

void PrepareConv2D(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 3);
  ctx.CheckOutputCount(node, 1);
  const auto& params = ParamsOf<Conv2DParams>(ctx, node, "Conv2DOptions");
  const Tensor& filter = ctx.input(node, 1);
  const Tensor* bias = ctx.optional_input(node, 2);
  const Tensor& output = ctx.output(node, 0);
  const bool hybrid =
      ctx.input(node, 0).type == DataType::kFloat32 && filter.type == DataType::kInt8;
  const Tensor& input = AcceptPadFusion(ctx, node, hybrid);

  CheckRank(ctx, node, input, "input", 4);
  CheckRank(ctx, node, filter, "filter", 4);
  const DataType type =
      hybrid ? DataType::kFloat32 : CheckConvTypes(ctx, node, input, filter, output);
  CheckConstantSize(ctx, node, filter, "filter");

  auto d = std::make_shared<ConvData>();
  d->type = type;
  reference::ConvGeometry& g = d->geometry;
  g.batches = input.dim(0);
  g.input_height = input.dim(1);
  g.input_width = input.dim(2);
  g.input_depth = input.dim(3);
  g.output_depth = filter.dim(0);
  g.filter_height = filter.dim(1);
  g.filter_width = filter.dim(2);
  g.filter_depth = filter.dim(3);
  DLG_NODE_CHECK(ctx, node, g.filter_depth > 0, "filter tensor \"", filter.name,
                 "\" has no input channels");
  DLG_NODE_CHECK(ctx, node, g.input_depth % g.filter_depth == 0, "input tensor \"", input.name,
                 "\" has ", g.input_depth, " channels, not a multiple of the filter's ",
                 g.filter_depth, " input channels");
  DLG_NODE_CHECK(ctx, node, g.input_depth > 0, "input tensor \"", input.name,
                 "\" has no channels");
  DLG_NODE_CHECK(ctx, node, g.output_depth % g.groups() == 0, "filter tensor \"", filter.name,
                 "\" has ", g.output_depth, " output channels, not a multiple of the ",
                 g.groups(), " groups");
  DLG_NODE_CHECK(ctx, node, params.stride_h > 0 && params.stride_w > 0, "stride ",
                 params.stride_h, "x", params.stride_w, " must be positive");
  DLG_NODE_CHECK(ctx, node, params.dilation_h > 0 && params.dilation_w > 0, "dilation ",
                 params.dilation_h, "x", params.dilation_w, " must be positive");
  g.stride_height = params.stride_h;
  g.stride_width = params.stride_w;
  g.dilation_height = params.dilation_h;
  g.dilation_width = params.dilation_w;
  CheckWindowExtent(ctx, node, g.filter_height, g.filter_width, g.dilation_height,
                    g.dilation_width);
  SetWindow(node, params.padding, g);
  CheckBias(ctx, node, bias, type, g.output_depth,
            params.quantized_bias_type == DataType::kInt32);
  if (hybrid) {
    DLG_NODE_CHECK(ctx, node, output.type == DataType::kFloat32, "hybrid FLOAT32 input with ",
                   "INT8 filter needs a FLOAT32 output, output \"", output.name, "\" is ",
                   DataTypeName(output.type));
    // TFLite's hybrid convolution ignores dilation; groups only its
    // per-channel (reference) path takes.
    DLG_NODE_CHECK(ctx, node, g.dilation_height == 1 && g.dilation_width == 1,
                   "hybrid CONV_2D with dilation ", g.dilation_height, "x", g.dilation_width,
                   " is not supported");
    DLG_NODE_CHECK(ctx, node, filter.is_constant(), "hybrid filter tensor \"", filter.name,
                   "\" must be constant");
    const WeightQuant w =
        FilterQuant(ctx, node, filter, g.output_depth, /*require_zero_zero_points=*/true);
    DLG_NODE_CHECK(ctx, node, g.groups() == 1 || w.per_channel,
                   "hybrid grouped CONV_2D needs per-channel weights, filter \"", filter.name,
                   "\" is quantized per tensor");
    d->hybrid = true;
    d->weight_scales = w.scales;
    reference::HybridConvParams& p = d->hybrid_params;
    p.per_channel = w.per_channel;
    p.weight_scales = d->weight_scales.data();
    const bool ok = quant::ActivationRangeFloat(params.activation, &p.act_min, &p.act_max);
    DLG_NODE_CHECK(ctx, node, ok, "fused activation ", ActivationName(params.activation),
                   " is not supported");
    ctx.SetOutputDims(node, 0, {g.batches, g.output_height, g.output_width, g.output_depth});
    const size_t quantized_bytes =
        static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.input_depth;
    d->scales_offset = (quantized_bytes + 15) / 16 * 16;
    d->zero_points_offset = d->scales_offset + sizeof(float) * g.batches;
    node.scratch_bytes = d->zero_points_offset + sizeof(int32_t) * g.batches;
    // Per-tensor weights with groups were refused above.
    if (ctx.optimized() && optimized::HybridVectorIsa(optimized::SelectedIsa()) &&
        (optimized::HybridConvKernel::Covers(g) || optimized::HybridGroupedConv::Covers(g))) {
      optimized::HybridConvKernelParams kp;
      kp.geometry = g;
      kp.filter = filter.data_as<int8_t>();
      kp.per_channel = p.per_channel;
      kp.weight_scales = p.weight_scales;
      kp.act_min = p.act_min;
      kp.act_max = p.act_max;
      const optimized::Isa isa = optimized::SelectedIsa();
      const int threads = ctx.pool().num_threads();
      d->fast_hybrid_offset = (node.scratch_bytes + 63) / 64 * 64;
      if (g.groups() > 1) {
        d->fast_hybrid_grouped = std::make_unique<optimized::HybridGroupedConv>(kp, isa, threads);
        node.scratch_bytes = d->fast_hybrid_offset + d->fast_hybrid_grouped->scratch_bytes();
      } else {
        d->fast_hybrid = std::make_unique<optimized::HybridConvKernel>(kp, isa, threads);
        node.scratch_bytes = d->fast_hybrid_offset + d->fast_hybrid->scratch_bytes();
      }
    }
    node.op_data = std::move(d);
    return;
  }

  TensorQuant out_q;
  if (type != DataType::kFloat32) {
    const TensorQuant in_q = ActivationQuant(ctx, node, input, "input");
    out_q = ActivationQuant(ctx, node, output, "output");
    const WeightQuant w =
        FilterQuant(ctx, node, filter, g.output_depth,
                    /*require_zero_zero_points=*/type == DataType::kInt8 ||
                        type == DataType::kInt16);
    if (type == DataType::kUInt8)
      CheckLegacyBiasScale(ctx, node, bias, in_q.scale, w.scales[0], out_q.scale);
    ComputeConvMultipliers(ctx, node, type, in_q, w, out_q, g.output_depth, &d->q.multipliers,
                           &d->q.shifts);
    d->q.input_offset = -in_q.zero_point;
    d->q.output_offset = out_q.zero_point;
    d->q.filter_offset = -w.zero_point;
  }
  d->q.act = ComputeActivationRange(ctx, node, params.activation, type, out_q);

  ctx.SetOutputDims(node, 0, {g.batches, g.output_height, g.output_width, g.output_depth});
  if (ctx.optimized() && type != DataType::kFloat32 && type != DataType::kInt16 &&
      filter.is_constant() && (bias == nullptr || bias->is_constant()) &&
      (optimized::QuantConv::Covers(g) || optimized::QuantGroupedConv::Covers(g))) {
    optimized::QuantConvParams p;
    p.geometry = g;
    p.is_uint8 = type == DataType::kUInt8;
    p.input_zero_point = -d->q.input_offset;
    p.filter_zero_point = -d->q.filter_offset;
    p.output_zero_point = d->q.output_offset;
    p.act_min = d->q.act.quant_min;
    p.act_max = d->q.act.quant_max;
    p.multiplier = d->q.multipliers.data();
    p.shift = d->q.shifts.data();
    p.filter = filter.data;
    p.bias = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
    if (g.groups() > 1) {
      d->fast_grouped8 = std::make_unique<optimized::QuantGroupedConv>(
          p, optimized::SelectedIsa(), ctx.pool().num_threads());
      node.scratch_bytes = d->fast_grouped8->scratch_bytes();
    } else {
      d->fast = MakeQuantConv(ctx, node, p);
      node.scratch_bytes = d->fast->scratch_bytes();
    }
  } else if (type == DataType::kFloat32 && UseFloatFast(ctx) && filter.is_constant() &&
             (bias == nullptr || bias->is_constant()) &&
             (optimized::FloatConv::Covers(g) || optimized::FloatGroupedConv::Covers(g))) {
    optimized::FloatConvParams p;
    p.geometry = g;
    p.act_min = d->q.act.float_min;
    p.act_max = d->q.act.float_max;
    p.filter = filter.data_as<float>();
    p.bias = bias != nullptr ? bias->data_as<float>() : nullptr;
    const optimized::Isa isa = optimized::SelectedIsa();
    const int threads = ctx.pool().num_threads();
    if (g.groups() > 1) {
      d->fast_grouped = std::make_unique<optimized::FloatGroupedConv>(p, isa, threads);
      node.scratch_bytes = d->fast_grouped->scratch_bytes();
    } else if (optimized::FloatWinograd::Covers(g, isa) && optimized::FloatWinograd::Pays(g)) {
      d->fast_winograd = std::make_unique<optimized::FloatWinograd>(p, isa, threads);
      node.scratch_bytes = d->fast_winograd->scratch_bytes();
    } else {
      d->fast_float = std::make_unique<optimized::FloatConv>(p, isa, threads);
      node.scratch_bytes = d->fast_float->scratch_bytes();
    }
  } else if (type == DataType::kInt16 && ctx.optimized() && filter.is_constant() &&
             (bias == nullptr || bias->is_constant()) &&
             (optimized::Conv16x8::Covers(g, optimized::SelectedIsa()) ||
              optimized::Conv16x8Grouped::Covers(g, optimized::SelectedIsa()))) {
    optimized::Conv16x8Params p;
    p.geometry = g;
    p.filter = filter.data_as<int8_t>();
    if (bias != nullptr && bias->type == DataType::kInt32) {
      p.bias32 = bias->data_as<int32_t>();
      p.sums32 = true;
    } else if (bias != nullptr) {
      p.bias64 = bias->data_as<int64_t>();
    }
    p.multiplier = d->q.multipliers.data();
    p.shift = d->q.shifts.data();
    p.act_min = d->q.act.quant_min;
    p.act_max = d->q.act.quant_max;
    if (g.groups() > 1) {
      d->fast16_grouped = std::make_unique<optimized::Conv16x8Grouped>(p, ctx.pool().num_threads());
      node.scratch_bytes = d->fast16_grouped->scratch_bytes();
    } else {
      d->fast16 = std::make_unique<optimized::Conv16x8>(p, ctx.pool().num_threads());
      node.scratch_bytes = d->fast16->scratch_bytes();
    }
  } else if (filter.is_constant()) {
    PackConv(*d, filter);
  } else {
    node.scratch_bytes = g.packed_filter_elements() * (type == DataType::kFloat32 ? sizeof(float)
                                                       : type == DataType::kInt16 ? sizeof(int8_t)
                                                                                  : sizeof(int16_t));
  }
  node.op_data = std::move(d);
}

void EvalConv2D(KernelContext& ctx, const Node& node) {
  const ConvData& d = *node.data<ConvData>();
  const reference::ConvGeometry& g = d.geometry;
  const Tensor& input = ConvInput(ctx, node);
  const Tensor& filter = ctx.in(node, 1);
  const Tensor* bias =
      node.inputs.size() > 2 && node.inputs[2] >= 0 ? &ctx.in(node, 2) : nullptr;
  Tensor& output = ctx.out(node, 0);

  if (d.hybrid) {
    int8_t* quantized = reinterpret_cast<int8_t*>(node.scratch);
    float* scales = reinterpret_cast<float*>(node.scratch + d.scales_offset);
    int32_t* zero_points = reinterpret_cast<int32_t*>(node.scratch + d.zero_points_offset);
    const float* in = input.data_as<float>();
    const reference::HybridConvParams& p = d.hybrid_params;
    if (d.fast_hybrid != nullptr) {
      const optimized::HybridConvKernel& fast = *d.fast_hybrid;
      const int64_t image = static_cast<int64_t>(g.input_height) * g.input_width * g.input_depth;
      uint8_t* scratch = node.scratch + d.fast_hybrid_offset;
      ParallelRange(ctx, g.batches, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          // Per-channel weights: asymmetric; per-tensor: symmetric, the scale
          // times the weight scale (reference::QuantizeConvInput).
          optimized::HybridQuantizeRow(fast.isa(), in + b * image, static_cast<int32_t>(image),
                                       p.per_channel, quantized + b * image, &scales[b],
                                       &zero_points[b]);
          if (!p.per_channel) scales[b] *= p.weight_scales[0];
          fast.WidenImage(b, quantized + b * image, zero_points[b], scratch);
        }
      });
      const float* b = bias != nullptr ? bias->data_as<float>() : nullptr;
      float* out = output.data_as<float>();
      RunTasks(ctx, fast, scales, b, out, scratch);
      return;
    }
    if (d.fast_hybrid_grouped != nullptr) {
      // The whole image quantized per batch, as the reference does.
      const optimized::Isa isa = optimized::SelectedIsa();
      const int64_t image = static_cast<int64_t>(g.input_height) * g.input_width * g.input_depth;
      ParallelRange(ctx, g.batches, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b)
          optimized::HybridQuantizeRow(isa, in + b * image, static_cast<int32_t>(image),
                                       /*asymmetric=*/true, quantized + b * image, &scales[b],
                                       &zero_points[b]);
      });
      RunTasks(ctx, *d.fast_hybrid_grouped, static_cast<const int8_t*>(quantized),
               static_cast<const int32_t*>(zero_points), static_cast<const float*>(scales),
               bias != nullptr ? bias->data_as<float>() : nullptr, output.data_as<float>(),
               node.scratch + d.fast_hybrid_offset);
      return;
    }
    ParallelRange(ctx, g.batches, [&](int64_t begin, int64_t end) {
      reference::QuantizeConvInput(g, p.per_channel, p.weight_scales[0], in, quantized, scales,
                                   zero_points, begin, end);
    });
    const int8_t* f = filter.data_as<int8_t>();
    const float* b = bias != nullptr ? bias->data_as<float>() : nullptr;
    float* out = output.data_as<float>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::HybridConv(g, p, quantized, scales, zero_points, f, b, out, begin, end);
    });
    return;
  }

  if (d.fast != nullptr) {
    RunTasks(ctx, *d.fast, input.data, output.data, node.scratch);
    return;
  }
  if (d.fast_grouped8 != nullptr) {
    RunTasks(ctx, *d.fast_grouped8, input.data, output.data, node.scratch);
    return;
  }

  if (d.fast_float != nullptr) {
    RunTasks(ctx, *d.fast_float, input.data_as<float>(), output.data_as<float>(), node.scratch);
    return;
  }
  if (d.fast_winograd != nullptr) {
    RunTasks(ctx, *d.fast_winograd, input.data_as<float>(), output.data_as<float>(),
             node.scratch);
    return;
  }
  if (d.fast_grouped != nullptr) {
    RunTasks(ctx, *d.fast_grouped, input.data_as<float>(), output.data_as<float>(),
             node.scratch);
    return;
  }

  if (d.fast16_grouped != nullptr) {
    RunTasks(ctx, *d.fast16_grouped, input.data_as<int16_t>(), output.data_as<int16_t>(),
             node.scratch);
    return;
  }
  if (d.fast16 != nullptr) {
    RunTasks(ctx, *d.fast16, input.data_as<int16_t>(), output.data_as<int16_t>(), node.scratch);
    return;
  }

  if (d.type == DataType::kFloat32) {
    const float* packed = d.packed_float.data();
    if (!d.filter_packed) {
      PackConvFilterInto<float>(d, filter, node.scratch);
      packed = reinterpret_cast<const float*>(node.scratch);
    }
    const float* in = input.data_as<float>();
    const float* b = bias != nullptr ? bias->data_as<float>() : nullptr;
    float* out = output.data_as<float>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::ConvFloat(g, in, packed, b, d.q.act.float_min, d.q.act.float_max, out, begin,
                           end);
    });
    return;
  }

  const int16_t* packed = d.packed_quant.data();
  if (!d.filter_packed) {
    if (d.type == DataType::kUInt8)
      PackConvFilterInto<uint8_t>(d, filter, node.scratch);
    else
      PackConvFilterInto<int8_t>(d, filter, node.scratch);
    packed = reinterpret_cast<const int16_t*>(node.scratch);
  }
  reference::ConvQuantParams q;
  q.input_offset = d.q.input_offset;
  q.output_offset = d.q.output_offset;
  q.act_min = d.q.act.quant_min;
  q.act_max = d.q.act.quant_max;
  q.multiplier = d.q.multipliers.data();
  q.shift = d.q.shifts.data();
  if (d.type == DataType::kInt16) {
    const int8_t* packed8 =
        d.filter_packed ? d.packed_16x8.data() : reinterpret_cast<const int8_t*>(node.scratch);
    const int16_t* in = input.data_as<int16_t>();
    int16_t* out = output.data_as<int16_t>();
    if (bias != nullptr && bias->type == DataType::kInt32) {
      const int32_t* b = bias->data_as<int32_t>();
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        reference::Conv16x8(g, in, packed8, b, q, out, begin, end);
      });
    } else {
      const int64_t* b = bias != nullptr ? bias->data_as<int64_t>() : nullptr;
      ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
        reference::Conv16x8(g, in, packed8, b, q, out, begin, end);
      });
    }
    return;
  }
  const int32_t* b = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
  if (d.type == DataType::kUInt8) {
    const uint8_t* in = input.data_as<uint8_t>();
    uint8_t* out = output.data_as<uint8_t>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::ConvQuantized(g, in, packed, b, q, out, begin, end);
    });
  } else {
    const int8_t* in = input.data_as<int8_t>();
    int8_t* out = output.data_as<int8_t>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::ConvQuantized(g, in, packed, b, q, out, begin, end);
    });
  }
}

// -------------------------------------------------------- DEPTHWISE_CONV_2D

namespace {

struct DepthwiseData {
  DataType type = DataType::kFloat32;
  reference::DepthwiseGeometry geometry;
  QuantState q;
  bool filter_packed = false;  // float filters are read in place
  std::vector<int16_t> packed_quant;
  // The optimized kernel, when allowed and covering the node (quantized,
  // depth multiplier 1, constant filter and bias).
  std::unique_ptr<optimized::QuantDepthwise> fast;
  // float32, constant filter and bias, when allowed.
  std::unique_ptr<optimized::FloatDepthwise> fast_float;
  // int16x8 on AVX2 / AVX-512 / NEON (Depthwise16x8::Covers), when allowed (bit-exact).
  std::unique_ptr<optimized::Depthwise16x8> fast16;
  // With a depth multiplier above 1 (repeat > 1) fast_float and fast16 run on
  // the input's channels repeated into scratch (optimized::RepeatChannels).
  int repeat = 1;
  // Hybrid on AVX2 / AVX-512 / NEON, any depth multiplier, when allowed (bit-exact).
  std::unique_ptr<optimized::HybridDepthwiseKernel> fast_hybrid;
  // The float32 CONV_2D producing the input, run here band by band
  // (Node::FusedProducer); conv_data keeps its kernel alive.
  std::shared_ptr<void> conv_data;
  std::unique_ptr<optimized::FloatConvDepthwise> fused_float;
  // Hybrid: float input and output, int8 weights with one scale per channel.
  bool hybrid = false;
  reference::HybridDepthwiseParams hybrid_params;
  std::vector<float> channel_scales;
  // Scratch layout: quantized input, then per-batch scales and zero points,
  // then (fast_hybrid) the widened images.
  size_t scales_offset = 0, zero_points_offset = 0, fast_hybrid_offset = 0;
};

// A float32 or int16x8 depthwise layer runs a multiplier-1 kernel: on its
// input, or with a depth multiplier above 1 on its input's channels repeated
// into scratch (`element` bytes per value; optimized::RepeatedInputFits
// bounds that image).
bool MultiplierOneKernelFits(const reference::DepthwiseGeometry& g, size_t element) {
  return g.depth_multiplier == 1 ||
         optimized::RepeatedInputFits(g.batches, g.input_height, g.input_width, g.output_depth,
                                      g.stride_height, g.stride_width, element);
}

// The geometry that kernel runs over (the input's channels repeated).
reference::DepthwiseGeometry RepeatedGeometry(const reference::DepthwiseGeometry& g) {
  reference::DepthwiseGeometry r = g;
  r.input_depth = g.output_depth;
  r.depth_multiplier = 1;
  return r;
}

// With a depth multiplier above 1: the repeat, and the scratch holding the
// repeated input (RepeatedInput).
void PlanRepeatedInput(Node& node, DepthwiseData& d, size_t element) {
  const reference::DepthwiseGeometry& g = d.geometry;
  if (g.depth_multiplier == 1) return;
  d.repeat = g.depth_multiplier;
  node.scratch_bytes =
      static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.output_depth * element;
}

// A float32 CONV_2D offered as the producer (Node::FusedProducer), run
// band by band inside this node when both have vector kernels, the
// convolution did not take a PAD itself, and the image is large
// (optimized::FloatConvDepthwise::Fits).
void AcceptConvFusion(KernelContext& ctx, Node& node, DepthwiseData& d) {
  Node::FusedProducer& fused = node.fused;
  if (fused.source < 0 || fused.producer_node == nullptr) return;
  const Node& conv = *fused.producer_node;
  if (conv.kernel == nullptr || conv.kernel->builtin != BuiltinOp::kConv2d ||
      conv.fused.accepted || conv.op_data == nullptr || ctx.input(node, 0).is_constant())
    return;
  const ConvData& c = *conv.data<ConvData>();
  if (c.fast_float == nullptr ||
      !optimized::FloatConvDepthwise::Fits(*c.fast_float, *d.fast_float, ctx.pool().num_threads()))
    return;
  d.conv_data = conv.op_data;
  d.fused_float = std::make_unique<optimized::FloatConvDepthwise>(
      *c.fast_float, *d.fast_float, ctx.pool().num_threads());
  node.scratch_bytes = d.fused_float->scratch_bytes();
  fused.accepted = true;
}

void PackDepthwiseInto(const DepthwiseData& d, const Tensor& filter, int16_t* dst) {
  if (d.type == DataType::kUInt8)
    reference::PackDepthwiseFilter(d.geometry, filter.data_as<uint8_t>(), d.q.filter_offset, dst);
  else
    reference::PackDepthwiseFilter(d.geometry, filter.data_as<int8_t>(), d.q.filter_offset, dst);
}

}  // namespace

void PrepareDepthwiseConv2D(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 3);
  ctx.CheckOutputCount(node, 1);
  const auto& params = ParamsOf<DepthwiseConv2DParams>(ctx, node, "DepthwiseConv2DOptions");
  const Tensor& filter = ctx.input(node, 1);
  const Tensor* bias = ctx.optional_input(node, 2);
  const Tensor& output = ctx.output(node, 0);
  const bool hybrid =
      ctx.input(node, 0).type == DataType::kFloat32 && filter.type == DataType::kInt8;
  const Tensor& input = AcceptPadFusion(ctx, node, hybrid);

  CheckRank(ctx, node, input, "input", 4);
  CheckRank(ctx, node, filter, "filter", 4);
  const DataType type =
      hybrid ? DataType::kFloat32 : CheckConvTypes(ctx, node, input, filter, output);
  CheckConstantSize(ctx, node, filter, "filter");
  DLG_NODE_CHECK(ctx, node, filter.dim(0) == 1, "filter tensor \"", filter.name,
                 "\" must have shape [1, height, width, channels], dim 0 is ", filter.dim(0));

  auto d = std::make_shared<DepthwiseData>();
  d->type = type;
  reference::DepthwiseGeometry& g = d->geometry;
  g.batches = input.dim(0);
  g.input_height = input.dim(1);
  g.input_width = input.dim(2);
  g.input_depth = input.dim(3);
  g.filter_height = filter.dim(1);
  g.filter_width = filter.dim(2);
  g.output_depth = filter.dim(3);
  DLG_NODE_CHECK(ctx, node, g.input_depth > 0, "input tensor \"", input.name,
                 "\" has no channels");
  DLG_NODE_CHECK(ctx, node, g.output_depth % g.input_depth == 0, "filter tensor \"",
                 filter.name, "\" has ", g.output_depth,
                 " channels, not a multiple of the input's ", g.input_depth, " channels");
  // The shapes define the multiplier; the option is informational (as in TFLite).
  g.depth_multiplier = g.output_depth / g.input_depth;
  DLG_NODE_CHECK(ctx, node, params.stride_h > 0 && params.stride_w > 0, "stride ",
                 params.stride_h, "x", params.stride_w, " must be positive");
  DLG_NODE_CHECK(ctx, node, params.dilation_h > 0 && params.dilation_w > 0, "dilation ",
                 params.dilation_h, "x", params.dilation_w, " must be positive");
  g.stride_height = params.stride_h;
  g.stride_width = params.stride_w;
  g.dilation_height = params.dilation_h;
  g.dilation_width = params.dilation_w;
  CheckWindowExtent(ctx, node, g.filter_height, g.filter_width, g.dilation_height,
                    g.dilation_width);
  SetWindow(node, params.padding, g);
  if (bias != nullptr)
    DLG_NODE_CHECK(ctx, node, bias->rank() == 1, "bias tensor \"", bias->name,
                   "\" must have rank 1, has rank ", bias->rank());
  CheckBias(ctx, node, bias, type, g.output_depth);
  if (hybrid) {
    // TFLite's hybrid depthwise kernel: int8 weights with one scale per output
    // channel (quantized_dimension 3), float input, output and bias.
    DLG_NODE_CHECK(ctx, node, output.type == DataType::kFloat32, "hybrid FLOAT32 input with ",
                   "INT8 filter needs a FLOAT32 output, output \"", output.name, "\" is ",
                   DataTypeName(output.type));
    const Quantization& fq = *filter.quantization;
    DLG_NODE_CHECK(ctx, node, static_cast<int64_t>(fq.scale.size()) == g.output_depth,
                   "hybrid filter tensor \"", filter.name, "\" needs one scale per output channel (",
                   g.output_depth, "), has ", fq.scale.size());
    const WeightQuant w =
        FilterQuant(ctx, node, filter, g.output_depth, /*require_zero_zero_points=*/true);
    DLG_NODE_CHECK(ctx, node, filter.is_constant(), "hybrid filter tensor \"", filter.name,
                   "\" must be constant");
    d->hybrid = true;
    d->channel_scales = w.scales;
    d->hybrid_params.channel_scales = d->channel_scales.data();
    const bool ok = quant::ActivationRangeFloat(params.activation, &d->hybrid_params.act_min,
                                                &d->hybrid_params.act_max);
    DLG_NODE_CHECK(ctx, node, ok, "fused activation ", ActivationName(params.activation),
                   " is not supported");
    ctx.SetOutputDims(node, 0, {g.batches, g.output_height, g.output_width, g.output_depth});
    const size_t quantized_bytes =
        static_cast<size_t>(g.batches) * g.input_height * g.input_width * g.input_depth;
    d->scales_offset = (quantized_bytes + 15) / 16 * 16;
    d->zero_points_offset = d->scales_offset + sizeof(float) * g.batches;
    node.scratch_bytes = d->zero_points_offset + sizeof(int32_t) * g.batches;
    if (ctx.optimized() && optimized::HybridVectorIsa(optimized::SelectedIsa()) &&
        optimized::HybridDepthwiseKernel::Covers(g)) {
      d->fast_hybrid = std::make_unique<optimized::HybridDepthwiseKernel>(
          g, filter.data_as<int8_t>(), d->channel_scales.data(), d->hybrid_params.act_min,
          d->hybrid_params.act_max, optimized::SelectedIsa());
      d->fast_hybrid_offset = (node.scratch_bytes + 63) / 64 * 64;
      node.scratch_bytes = d->fast_hybrid_offset + d->fast_hybrid->scratch_bytes();
    }
    node.op_data = std::move(d);
    return;
  }

  TensorQuant out_q;
  if (type != DataType::kFloat32) {
    const TensorQuant in_q = ActivationQuant(ctx, node, input, "input");
    out_q = ActivationQuant(ctx, node, output, "output");
    const WeightQuant w =
        FilterQuant(ctx, node, filter, g.output_depth, /*require_zero_zero_points=*/false);
    if (type == DataType::kUInt8)
      CheckLegacyBiasScale(ctx, node, bias, in_q.scale, w.scales[0], out_q.scale);
    ComputeConvMultipliers(ctx, node, type, in_q, w, out_q, g.output_depth, &d->q.multipliers,
                           &d->q.shifts);
    d->q.input_offset = -in_q.zero_point;
    d->q.output_offset = out_q.zero_point;
    // The int8 kernel treats weights as symmetric and ignores their zero point.
    d->q.filter_offset = type == DataType::kUInt8 ? -w.zero_point : 0;
  }
  d->q.act = ComputeActivationRange(ctx, node, params.activation, type, out_q);

  ctx.SetOutputDims(node, 0, {g.batches, g.output_height, g.output_width, g.output_depth});
  if (ctx.optimized() && type != DataType::kFloat32 && type != DataType::kInt16 &&
      filter.is_constant() && (bias == nullptr || bias->is_constant()) &&
      optimized::QuantDepthwise::Covers(g)) {
    optimized::QuantDepthwiseParams p;
    p.geometry = g;
    p.is_uint8 = type == DataType::kUInt8;
    p.input_zero_point = -d->q.input_offset;
    p.filter_offset = d->q.filter_offset;
    p.output_zero_point = d->q.output_offset;
    p.act_min = d->q.act.quant_min;
    p.act_max = d->q.act.quant_max;
    p.multiplier = d->q.multipliers.data();
    p.shift = d->q.shifts.data();
    p.filter = filter.data;
    p.bias = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
    d->fast = std::make_unique<optimized::QuantDepthwise>(p, optimized::SelectedIsa());
  } else if (type == DataType::kFloat32 && UseFloatFast(ctx) && filter.is_constant() &&
             (bias == nullptr || bias->is_constant()) &&
             MultiplierOneKernelFits(g, sizeof(float)) &&
             optimized::FloatDepthwise::Covers(RepeatedGeometry(g))) {
    optimized::FloatDepthwiseParams p;
    p.geometry = RepeatedGeometry(g);
    p.act_min = d->q.act.float_min;
    p.act_max = d->q.act.float_max;
    p.filter = filter.data_as<float>();
    p.bias = bias != nullptr ? bias->data_as<float>() : nullptr;
    d->fast_float = std::make_unique<optimized::FloatDepthwise>(p, optimized::SelectedIsa());
    if (g.depth_multiplier == 1)
      AcceptConvFusion(ctx, node, *d);
    else
      PlanRepeatedInput(node, *d, sizeof(float));
  } else if (type == DataType::kInt16 && ctx.optimized() && filter.is_constant() &&
             (bias == nullptr || bias->is_constant()) &&
             MultiplierOneKernelFits(g, sizeof(int16_t)) &&
             optimized::Depthwise16x8::Covers(RepeatedGeometry(g), d->q.multipliers.data(),
                                              d->q.shifts.data(), optimized::SelectedIsa())) {
    optimized::Depthwise16x8Params p;
    p.geometry = RepeatedGeometry(g);
    PlanRepeatedInput(node, *d, sizeof(int16_t));
    p.filter = filter.data_as<int8_t>();
    p.bias = bias != nullptr ? bias->data_as<int64_t>() : nullptr;
    p.multiplier = d->q.multipliers.data();
    p.shift = d->q.shifts.data();
    p.act_min = d->q.act.quant_min;
    p.act_max = d->q.act.quant_max;
    d->fast16 = std::make_unique<optimized::Depthwise16x8>(p);
  } else if (type != DataType::kFloat32) {
    if (filter.is_constant()) {
      d->packed_quant.resize(g.filter_elements());
      PackDepthwiseInto(*d, filter, d->packed_quant.data());
      d->filter_packed = true;
    } else {
      node.scratch_bytes = g.filter_elements() * sizeof(int16_t);
    }
  }
  node.op_data = std::move(d);
}

// The input a multiplier-1 kernel reads: the node's own, or (d.repeat > 1)
// its channels repeated into scratch.
template <class T>
const T* RepeatedInput(const KernelContext& ctx, const DepthwiseData& d, const T* in,
                       uint8_t* scratch) {
  if (d.repeat == 1) return in;
  const reference::DepthwiseGeometry& g = d.geometry;
  T* repeated = reinterpret_cast<T*>(scratch);
  ParallelRange(ctx, int64_t{g.batches} * g.input_height * g.input_width,
                [&](int64_t begin, int64_t end) {
                  optimized::RepeatChannels(in, begin, end, g.input_depth, d.repeat, repeated);
                });
  return repeated;
}

void EvalDepthwiseConv2D(KernelContext& ctx, const Node& node) {
  const DepthwiseData& d = *node.data<DepthwiseData>();
  const reference::DepthwiseGeometry& g = d.geometry;
  const Tensor& input = ConvInput(ctx, node);
  const Tensor& filter = ctx.in(node, 1);
  const Tensor* bias =
      node.inputs.size() > 2 && node.inputs[2] >= 0 ? &ctx.in(node, 2) : nullptr;
  Tensor& output = ctx.out(node, 0);

  if (d.hybrid) {
    int8_t* quantized = reinterpret_cast<int8_t*>(node.scratch);
    float* scales = reinterpret_cast<float*>(node.scratch + d.scales_offset);
    int32_t* zero_points = reinterpret_cast<int32_t*>(node.scratch + d.zero_points_offset);
    const float* in = input.data_as<float>();
    const float* b = bias != nullptr ? bias->data_as<float>() : nullptr;
    float* out = output.data_as<float>();
    if (d.fast_hybrid != nullptr) {
      const optimized::HybridDepthwiseKernel& fast = *d.fast_hybrid;
      const int64_t image = static_cast<int64_t>(g.input_height) * g.input_width * g.input_depth;
      uint8_t* widened = node.scratch + d.fast_hybrid_offset;
      ParallelRange(ctx, g.batches, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {  // asymmetric, as QuantizeDepthwiseInput
          optimized::HybridQuantizeRow(optimized::SelectedIsa(), in + i * image,
                                       static_cast<int32_t>(image), /*asymmetric=*/true,
                                       quantized + i * image, &scales[i], &zero_points[i]);
          fast.WidenImage(i, quantized + i * image, zero_points[i], widened);
        }
      });
      // Below about 10 µs of work the hand-off costs more than it saves.
      constexpr int64_t kMinParallelMacs = int64_t{1} << 17;
      ParallelRange(
          ctx, g.output_rows(),
          [&](int64_t begin, int64_t end) { fast.Run(widened, scales, b, out, begin, end); },
          fast.macs() < kMinParallelMacs ? g.output_rows() + 1 : 2);
      return;
    }
    ParallelRange(ctx, g.batches, [&](int64_t begin, int64_t end) {
      reference::QuantizeDepthwiseInput(g, in, quantized, scales, zero_points, begin, end);
    });
    const int8_t* f = filter.data_as<int8_t>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::HybridDepthwiseConv(g, d.hybrid_params, quantized, scales, zero_points, f, b,
                                     out, begin, end);
    });
    return;
  }

  if (d.fast != nullptr) {
    RunDepthwiseRows(ctx, *d.fast, input.data, output.data);
    return;
  }

  if (d.fast16 != nullptr) {
    RunDepthwiseRows(ctx, *d.fast16, RepeatedInput(ctx, d, input.data_as<int16_t>(), node.scratch),
                     output.data_as<int16_t>());
    return;
  }

  if (d.fused_float != nullptr) {
    // `input`: the convolution's input (ConvInput).
    RunTasks(ctx, *d.fused_float, input.data_as<float>(), output.data_as<float>(), node.scratch);
    return;
  }

  if (d.fast_float != nullptr) {
    RunDepthwiseRows(ctx, *d.fast_float, RepeatedInput(ctx, d, input.data_as<float>(), node.scratch),
                     output.data_as<float>());
    return;
  }

  if (d.type == DataType::kFloat32) {
    const float* in = input.data_as<float>();
    const float* f = filter.data_as<float>();
    const float* b = bias != nullptr ? bias->data_as<float>() : nullptr;
    float* out = output.data_as<float>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::DepthwiseConvFloat(g, in, f, b, d.q.act.float_min, d.q.act.float_max, out,
                                    begin, end);
    });
    return;
  }

  const int16_t* packed = d.packed_quant.data();
  if (!d.filter_packed) {
    PackDepthwiseInto(d, filter, reinterpret_cast<int16_t*>(node.scratch));
    packed = reinterpret_cast<const int16_t*>(node.scratch);
  }
  reference::ConvQuantParams q;
  q.input_offset = d.q.input_offset;
  q.output_offset = d.q.output_offset;
  q.act_min = d.q.act.quant_min;
  q.act_max = d.q.act.quant_max;
  q.multiplier = d.q.multipliers.data();
  q.shift = d.q.shifts.data();
  if (d.type == DataType::kInt16) {
    const int16_t* in = input.data_as<int16_t>();
    int16_t* out = output.data_as<int16_t>();
    const int64_t* b = bias != nullptr ? bias->data_as<int64_t>() : nullptr;
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::DepthwiseConv16x8(g, in, packed, b, q, out, begin, end);
    });
    return;
  }
  const int32_t* b = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
  if (d.type == DataType::kUInt8) {
    const uint8_t* in = input.data_as<uint8_t>();
    uint8_t* out = output.data_as<uint8_t>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::DepthwiseConvQuantized(g, in, packed, b, q, out, begin, end);
    });
  } else {
    const int8_t* in = input.data_as<int8_t>();
    int8_t* out = output.data_as<int8_t>();
    ParallelRange(ctx, g.output_rows(), [&](int64_t begin, int64_t end) {
      reference::DepthwiseConvQuantized(g, in, packed, b, q, out, begin, end);
    });
  }
}

// ---------------------------------------------------------- FULLY_CONNECTED

namespace {

struct FullyConnectedData {
  DataType type = DataType::kFloat32;
  reference::FullyConnectedGeometry geometry;
  QuantState q;
  bool weights_packed = false;
  std::vector<float> packed_float;
  std::vector<int16_t> packed_quant;
  // The optimized kernel (the convolution GEMM in its double-rescale mode),
  // when allowed: quantized, constant weights and bias, symmetric int8 or
  // uint8 weights.
  std::unique_ptr<optimized::QuantConv> fast;
  // float32 with constant weights and bias, when allowed (the float GEMM).
  std::unique_ptr<optimized::FloatConv> fast_float;
  // int16x8 with constant int8 weights (zero point 0) and bias on AVX2 /
  // AVX-512, when allowed (bit-exact).
  std::unique_ptr<optimized::Conv16x8> fast16;
  // int16x8 with quantized_bias_type INT32: 32-bit sums, even without a bias.
  bool int32_accumulate = false;
  // Hybrid: float input and output, constant int8 weights.
  bool hybrid = false;
  bool hybrid_clamp = false;  // a fused activation (NONE leaves values as they are)
  reference::HybridFullyConnectedParams hybrid_params;
  std::vector<float> weight_scales;
  std::vector<int32_t> row_sums;
  // Hybrid through the int16 GEMM (bit-exact), when allowed: tasks of
  // batch rows, each with its own scratch.
  std::unique_ptr<optimized::HybridFullyConnectedKernel> fast_hybrid;
  int hybrid_tasks = 1;
  size_t hybrid_task_bytes = 0;
};

// Hybrid FULLY_CONNECTED: float input and output with constant symmetric
// int8 weights (per tensor or per output channel) and an optional float bias.
void PrepareHybridFullyConnected(KernelContext& ctx, Node& node,
                                 const FullyConnectedParams& params, const Tensor& weights,
                                 const Tensor* bias, const Tensor& output,
                                 FullyConnectedData& d) {
  const reference::FullyConnectedGeometry& g = d.geometry;
  DLG_NODE_CHECK(ctx, node, output.type == DataType::kFloat32, "hybrid FLOAT32 input with INT8 ",
                 "weights needs a FLOAT32 output, output \"", output.name, "\" is ",
                 DataTypeName(output.type));
  DLG_NODE_CHECK(ctx, node, weights.is_constant(), "hybrid weights tensor \"", weights.name,
                 "\" must be constant");
  CheckBias(ctx, node, bias, DataType::kFloat32, g.output_depth);
  const WeightQuant w =
      FilterQuant(ctx, node, weights, g.output_depth, /*require_zero_zero_points=*/true);
  d.hybrid = true;
  d.weight_scales = w.scales;
  reference::HybridFullyConnectedParams& p = d.hybrid_params;
  p.batches = g.batches;
  p.depth = g.accum_depth;
  p.units = g.output_depth;
  p.weights = weights.data_as<int8_t>();
  p.weight_scales = d.weight_scales.data();
  p.per_channel = w.per_channel;
  p.asymmetric = params.asymmetric_quantize_inputs;
  if (p.asymmetric) {
    d.row_sums.assign(g.output_depth, 0);
    for (int32_t u = 0; u < g.output_depth; ++u)
      for (int32_t k = 0; k < g.accum_depth; ++k)
        d.row_sums[u] += p.weights[static_cast<size_t>(u) * g.accum_depth + k];
    p.row_sums = d.row_sums.data();
  }
  d.hybrid_clamp = params.activation != Activation::kNone;
  const bool ok = quant::ActivationRangeFloat(params.activation, &p.act_min, &p.act_max);
  DLG_NODE_CHECK(ctx, node, ok, "fused activation ", ActivationName(params.activation),
                 " is not supported");
  node.scratch_bytes = static_cast<size_t>(g.batches) * g.accum_depth;
  if (ctx.optimized() && optimized::HybridVectorIsa(optimized::SelectedIsa()) &&
      g.accum_depth > 0 && g.output_depth > 0) {
    optimized::HybridFullyConnectedKernelParams kp;
    kp.depth = p.depth;
    kp.units = p.units;
    kp.weights = p.weights;
    kp.weight_scales = p.weight_scales;
    kp.per_channel = p.per_channel;
    kp.asymmetric = p.asymmetric;
    kp.clamp = d.hybrid_clamp;
    kp.act_min = p.act_min;
    kp.act_max = p.act_max;
    d.fast_hybrid =
        std::make_unique<optimized::HybridFullyConnectedKernel>(kp, optimized::SelectedIsa());
    constexpr int kRows = optimized::HybridFullyConnectedKernel::kBlockRows;
    d.hybrid_tasks = static_cast<int>(std::clamp<int64_t>(
        (int64_t{g.batches} + kRows - 1) / kRows, 1, std::max(1, ctx.pool().num_threads())));
    d.hybrid_task_bytes = (d.fast_hybrid->scratch_bytes(kRows) + 63) / 64 * 64;
    node.scratch_bytes = d.hybrid_task_bytes * d.hybrid_tasks;
  }
}

void PackFullyConnectedInto(const FullyConnectedData& d, const Tensor& weights, void* dst) {
  switch (d.type) {
    case DataType::kFloat32:
      reference::PackFullyConnectedWeights(d.geometry, weights.data_as<float>(), 0,
                                           static_cast<float*>(dst));
      break;
    case DataType::kUInt8:
      reference::PackFullyConnectedWeights(d.geometry, weights.data_as<uint8_t>(),
                                           d.q.filter_offset, static_cast<int16_t*>(dst));
      break;
    default:
      reference::PackFullyConnectedWeights(d.geometry, weights.data_as<int8_t>(),
                                           d.q.filter_offset, static_cast<int16_t*>(dst));
      break;
  }
}

}  // namespace

// FULLY_CONNECTED as the 1x1 convolution the optimized GEMMs run: one
// output pixel per batch row.
reference::ConvGeometry AsOneByOneConv(const reference::FullyConnectedGeometry& g) {
  reference::ConvGeometry cg;
  cg.batches = g.batches;
  cg.input_height = cg.input_width = cg.output_height = cg.output_width = 1;
  cg.filter_height = cg.filter_width = 1;
  cg.input_depth = cg.filter_depth = g.accum_depth;
  cg.output_depth = g.output_depth;
  return cg;
}

void PrepareFullyConnected(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 3);
  const auto& params = ParamsOf<FullyConnectedParams>(ctx, node, "FullyConnectedOptions");
  DLG_NODE_CHECK(ctx, node, params.weights_format == 0, "weights_format ",
                 static_cast<int>(params.weights_format),
                 " (SHUFFLED4x16INT8) is not supported; only DEFAULT weights are");
  ctx.CheckOutputCount(node, 1);
  const Tensor& input = ctx.input(node, 0);
  const Tensor& weights = ctx.input(node, 1);
  const Tensor* bias = ctx.optional_input(node, 2);
  const Tensor& output = ctx.output(node, 0);

  const bool hybrid = input.type == DataType::kFloat32 && weights.type == DataType::kInt8;
  const DataType type =
      hybrid ? DataType::kFloat32 : CheckConvTypes(ctx, node, input, weights, output);
  const Activation act = params.activation;
  DLG_NODE_CHECK(ctx, node,
                 act == Activation::kNone || act == Activation::kRelu ||
                     act == Activation::kReluN1To1 || act == Activation::kRelu6,
                 "fused activation ", ActivationName(act), " is not supported");
  CheckRank(ctx, node, weights, "weights", 2);
  CheckConstantSize(ctx, node, weights, "weights");
  DLG_NODE_CHECK(ctx, node, input.rank() >= 1, "input tensor \"", input.name,
                 "\" must have rank >= 1");

  auto d = std::make_shared<FullyConnectedData>();
  d->type = type;
  reference::FullyConnectedGeometry& g = d->geometry;
  g.output_depth = weights.dim(0);
  g.accum_depth = weights.dim(1);
  const int64_t input_size = input.NumElements();
  int64_t batches = 0;
  if (g.accum_depth == 0) {
    // No inputs per output: every output is its bias.
    batches = 1;
    for (int i = 0; i + 1 < input.rank(); ++i) batches *= input.dim(i);
  } else {
    DLG_NODE_CHECK(ctx, node, input_size % g.accum_depth == 0, "input tensor \"", input.name,
                   "\" has ", input_size, " elements, not a multiple of the weights' depth ",
                   g.accum_depth);
    batches = input_size / g.accum_depth;
  }
  DLG_NODE_CHECK(ctx, node, batches <= std::numeric_limits<int32_t>::max(), "batch count ",
                 batches, " is too large");
  g.batches = static_cast<int32_t>(batches);
  if (hybrid) {
    PrepareHybridFullyConnected(ctx, node, params, weights, bias, output, *d);
  } else {
    CheckBias(ctx, node, bias, type, g.output_depth,
              params.quantized_bias_type == DataType::kInt32);
    d->int32_accumulate = type == DataType::kInt16 &&
                          (params.quantized_bias_type == DataType::kInt32 ||
                           (bias != nullptr && bias->type == DataType::kInt32));
  }

  std::vector<int32_t> out_dims;
  if (params.keep_num_dims) {
    DLG_NODE_CHECK(ctx, node, input.dim(input.rank() - 1) == g.accum_depth,
                   "keep_num_dims needs the input's last dimension (",
                   input.dim(input.rank() - 1), ") to equal the weights' depth (", g.accum_depth,
                   ")");
    out_dims = input.dims;
    out_dims.back() = g.output_depth;
  } else {
    out_dims = {g.batches, g.output_depth};
  }
  if (hybrid) {
    ctx.SetOutputDims(node, 0, std::move(out_dims));
    node.op_data = std::move(d);
    return;
  }

  TensorQuant out_q;
  if (type != DataType::kFloat32) {
    const TensorQuant in_q = ActivationQuant(ctx, node, input, "input");
    out_q = ActivationQuant(ctx, node, output, "output");
    const WeightQuant w =
        FilterQuant(ctx, node, weights, g.output_depth, /*require_zero_zero_points=*/false);
    if (!w.per_channel)
      CheckLegacyBiasScale(ctx, node, bias, in_q.scale, w.scales[0], out_q.scale);
    d->q.output_scales.resize(g.output_depth);
    for (int32_t c = 0; c < g.output_depth; ++c) {
      const float filter_scale = w.per_channel ? w.scales[c] : w.scales[0];
      d->q.output_scales[c] = static_cast<double>(in_q.scale) *
                              static_cast<double>(filter_scale) /
                              static_cast<double>(out_q.scale);
    }
    d->q.input_offset = -in_q.zero_point;
    d->q.output_offset = out_q.zero_point;
    // Per-channel weights are symmetric by definition; the per-tensor zero
    // point is still applied, as TFLite does for compatibility.
    d->q.filter_offset = w.per_channel ? 0 : -w.zero_point;
  }
  d->q.act = ComputeActivationRange(ctx, node, act, type, out_q);

  ctx.SetOutputDims(node, 0, std::move(out_dims));
  const size_t element_size = type == DataType::kFloat32 ? sizeof(float) : sizeof(int16_t);
  if (ctx.optimized() && type != DataType::kFloat32 && type != DataType::kInt16 &&
      weights.is_constant() &&
      (bias == nullptr || bias->is_constant()) &&
      (type == DataType::kUInt8 || d->q.filter_offset == 0) && g.accum_depth > 0 &&
      g.batches > 0 && g.output_depth > 0) {
    optimized::QuantConvParams p;
    p.geometry = AsOneByOneConv(g);
    p.is_uint8 = type == DataType::kUInt8;
    p.input_zero_point = -d->q.input_offset;
    p.filter_zero_point = -d->q.filter_offset;
    p.output_zero_point = d->q.output_offset;
    p.act_min = d->q.act.quant_min;
    p.act_max = d->q.act.quant_max;
    p.output_scale = d->q.output_scales.data();
    p.filter = weights.data;
    p.bias = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
    if (optimized::QuantConv::Covers(p.geometry)) {
      d->fast = MakeQuantConv(ctx, node, p);
      node.scratch_bytes = d->fast->scratch_bytes();
      node.op_data = std::move(d);
      return;
    }
  }
  if (type == DataType::kFloat32 && UseFloatFast(ctx) && weights.is_constant() &&
      (bias == nullptr || bias->is_constant()) && g.accum_depth > 0 && g.batches > 0 &&
      g.output_depth > 0) {
    optimized::FloatConvParams p;
    p.geometry = AsOneByOneConv(g);
    p.act_min = d->q.act.float_min;
    p.act_max = d->q.act.float_max;
    p.filter = weights.data_as<float>();
    p.bias = bias != nullptr ? bias->data_as<float>() : nullptr;
    if (optimized::FloatConv::Covers(p.geometry)) {
      d->fast_float = std::make_unique<optimized::FloatConv>(p, optimized::SelectedIsa(),
                                                             ctx.pool().num_threads());
      node.scratch_bytes = d->fast_float->scratch_bytes();
      node.op_data = std::move(d);
      return;
    }
  }
  if (ctx.optimized() && type == DataType::kInt16 && weights.type == DataType::kInt8 &&
      weights.is_constant() && (bias == nullptr || bias->is_constant()) &&
      d->q.filter_offset == 0 && g.accum_depth > 0 && g.batches > 0 && g.output_depth > 0) {
    optimized::Conv16x8Params p;
    p.geometry = AsOneByOneConv(g);
    p.filter = weights.data_as<int8_t>();
    if (bias != nullptr && bias->type == DataType::kInt32)
      p.bias32 = bias->data_as<int32_t>();
    else if (bias != nullptr)
      p.bias64 = bias->data_as<int64_t>();
    p.sums32 = d->int32_accumulate;
    p.output_scale = d->q.output_scales.data();
    p.act_min = d->q.act.quant_min;
    p.act_max = d->q.act.quant_max;
    if (optimized::Conv16x8::Covers(p.geometry, optimized::SelectedIsa())) {
      d->fast16 = std::make_unique<optimized::Conv16x8>(p, ctx.pool().num_threads());
      node.scratch_bytes = d->fast16->scratch_bytes();
      node.op_data = std::move(d);
      return;
    }
  }
  if (weights.is_constant()) {
    if (type == DataType::kFloat32) {
      d->packed_float.resize(g.weight_elements());
      PackFullyConnectedInto(*d, weights, d->packed_float.data());
    } else {
      d->packed_quant.resize(g.weight_elements());
      PackFullyConnectedInto(*d, weights, d->packed_quant.data());
    }
    d->weights_packed = true;
  } else {
    node.scratch_bytes = g.weight_elements() * element_size;
  }
  node.op_data = std::move(d);
}

void EvalFullyConnected(KernelContext& ctx, const Node& node) {
  const FullyConnectedData& d = *node.data<FullyConnectedData>();
  const reference::FullyConnectedGeometry& g = d.geometry;
  const Tensor& input = ctx.in(node, 0);
  const Tensor& weights = ctx.in(node, 1);
  const Tensor* bias =
      node.inputs.size() > 2 && node.inputs[2] >= 0 ? &ctx.in(node, 2) : nullptr;
  Tensor& output = ctx.out(node, 0);
  if (d.hybrid) {
    const reference::HybridFullyConnectedParams& p = d.hybrid_params;
    const float* in = input.data_as<float>();
    const float* b = bias != nullptr ? bias->data_as<float>() : nullptr;
    float* out = output.data_as<float>();
    const int64_t total = static_cast<int64_t>(p.batches) * p.depth;
    // An all-zero input skips the product, as TFLite does: the output is the bias.
    if (std::all_of(in, in + total, [](float x) { return x == 0.0f; })) {
      for (int32_t r = 0; r < p.batches; ++r)
        for (int32_t u = 0; u < p.units; ++u) {
          const float v = b != nullptr ? b[u] : 0.0f;
          out[static_cast<size_t>(r) * p.units + u] =
              d.hybrid_clamp ? std::min(std::max(v, p.act_min), p.act_max) : v;
        }
      return;
    }
    if (d.fast_hybrid != nullptr) {
      const optimized::HybridFullyConnectedKernel& fast = *d.fast_hybrid;
      const int64_t tasks = d.hybrid_tasks;
      uint8_t* scratch = node.scratch;
      ParallelRange(ctx, tasks, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t)
          fast.Run(in, b, out, p.batches * t / tasks, p.batches * (t + 1) / tasks,
                   scratch + d.hybrid_task_bytes * t);
      });
      return;
    }
    int8_t* quantized = reinterpret_cast<int8_t*>(node.scratch);
    ParallelRange(ctx, p.batches, [&](int64_t begin, int64_t end) {
      reference::HybridFullyConnected(p, in, b, quantized, out, begin, end, d.hybrid_clamp);
    });
    return;
  }
  if (d.fast != nullptr) {
    RunTasks(ctx, *d.fast, input.data, output.data, node.scratch);
    return;
  }
  if (d.fast_float != nullptr) {
    RunTasks(ctx, *d.fast_float, input.data_as<float>(), output.data_as<float>(), node.scratch);
    return;
  }
  if (d.fast16 != nullptr) {
    RunTasks(ctx, *d.fast16, input.data_as<int16_t>(), output.data_as<int16_t>(), node.scratch);
    return;
  }

  if (!d.weights_packed) PackFullyConnectedInto(d, weights, node.scratch);

  if (d.type == DataType::kFloat32) {
    const float* packed = d.weights_packed ? d.packed_float.data()
                                           : reinterpret_cast<const float*>(node.scratch);
    const float* in = input.data_as<float>();
    const float* b = bias != nullptr ? bias->data_as<float>() : nullptr;
    float* out = output.data_as<float>();
    ParallelRange(ctx, g.work_units(), [&](int64_t begin, int64_t end) {
      reference::FullyConnectedFloat(g, in, packed, b, d.q.act.float_min, d.q.act.float_max, out,
                                     begin, end);
    });
    return;
  }

  const int16_t* packed = d.weights_packed ? d.packed_quant.data()
                                           : reinterpret_cast<const int16_t*>(node.scratch);
  reference::FullyConnectedQuantParams q;
  q.input_offset = d.q.input_offset;
  q.output_offset = d.q.output_offset;
  q.act_min = d.q.act.quant_min;
  q.act_max = d.q.act.quant_max;
  q.output_scale = d.q.output_scales.data();
  if (d.type == DataType::kInt16) {
    const int16_t* in = input.data_as<int16_t>();
    int16_t* out = output.data_as<int16_t>();
    if (d.int32_accumulate) {
      const int32_t* b = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
      ParallelRange(ctx, g.work_units(), [&](int64_t begin, int64_t end) {
        reference::FullyConnected16x8(g, in, packed, b, q, out, begin, end);
      });
    } else {
      const int64_t* b = bias != nullptr ? bias->data_as<int64_t>() : nullptr;
      ParallelRange(ctx, g.work_units(), [&](int64_t begin, int64_t end) {
        reference::FullyConnected16x8(g, in, packed, b, q, out, begin, end);
      });
    }
    return;
  }
  const int32_t* b = bias != nullptr ? bias->data_as<int32_t>() : nullptr;
  if (d.type == DataType::kUInt8) {
    const uint8_t* in = input.data_as<uint8_t>();
    uint8_t* out = output.data_as<uint8_t>();
    ParallelRange(ctx, g.work_units(), [&](int64_t begin, int64_t end) {
      reference::FullyConnectedQuantized(g, in, packed, b, q, out, begin, end);
    });
  } else {
    const int8_t* in = input.data_as<int8_t>();
    int8_t* out = output.data_as<int8_t>();
    ParallelRange(ctx, g.work_units(), [&](int64_t begin, int64_t end) {
      reference::FullyConnectedQuantized(g, in, packed, b, q, out, begin, end);
    });
  }
}

}  // namespace delegato
