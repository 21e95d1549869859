// Element-wise ops: ADD, SUB, MUL, DIV, FLOOR_DIV (with broadcasting), SQRT,
// RELU, RELU6, LOGISTIC, TANH, SOFTMAX, QUANTIZE, DEQUANTIZE and CAST.
// Prepare mirrors the checks and parameter derivations of TFLite's kernels
// (and rejects the inputs on which TFLite would abort or misbehave); Eval
// calls the pure functions in kernels/reference/.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "kernels/fixed_point.h"
#include "kernels/optimized/float_activations.h"
#include "kernels/optimized/float_binary.h"
#include "kernels/optimized/quant_binary.h"
#include "kernels/optimized/activations16.h"
#include "kernels/optimized/quant_binary16.h"
#include "kernels/optimized/quantize.h"
#include "kernels/optimized/softmax8.h"
#include "kernels/quantization.h"
#include "kernels/reference/activations.h"
#include "kernels/reference/activations16.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/quantize.h"
#include "kernels/reference/softmax.h"
#include "kernels/reference/softmax16.h"
#include "ops/kernel.h"

namespace delegato {

namespace {

using reference::BinaryOp;

// The node's params, or defaults when the file carried no options table.
template <class P>
P ParamsOrDefault(const Node& node) {
  if (const P* p = std::get_if<P>(&node.def->params)) return *p;
  return P{};
}

std::string DimsText(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

// Below this many elements a kernel runs on the calling thread only.
constexpr int64_t kMinParallelElements = 4096;
// The same for the float vector loops of ADD/SUB/MUL/DIV, which pass over
// memory at a few bytes per cycle: below about 1-2 µs of work another
// thread costs more than it saves. Operands written by a layer split across
// threads lie half in the other core's cache, which an ADD run by the caller
// alone then fetches (2^15 before: float32 MobileNet V2's residual ADDs ran
// slower at 2 threads than at 1).
constexpr int64_t kMinParallelVectorElements = int64_t{1} << 13;

template <class Fn>
void ParallelElements(const KernelContext& ctx, int64_t n, const Fn& fn) {
  ParallelRange(ctx, n, fn, kMinParallelElements);
}

bool IsQuantizedType(DataType t) {
  return t == DataType::kUInt8 || t == DataType::kInt8 || t == DataType::kInt16;
}

int32_t TypeMin(DataType t) {
  switch (t) {
    case DataType::kUInt8: return 0;
    case DataType::kInt8: return -128;
    case DataType::kInt16: return -32768;
    default: return std::numeric_limits<int32_t>::min();
  }
}
int32_t TypeMax(DataType t) {
  switch (t) {
    case DataType::kUInt8: return 255;
    case DataType::kInt8: return 127;
    case DataType::kInt16: return 32767;
    default: return std::numeric_limits<int32_t>::max();
  }
}

// Per-tensor quantization parameters of an 8/16-bit tensor, validated: a
// single positive finite scale and a zero point inside the type's range.
struct QuantParams {
  float scale = 0.0f;
  int32_t zero_point = 0;
};

QuantParams PerTensorParams(const KernelContext& ctx, const Node& node, const Tensor& t,
                            const char* role) {
  const Quantization& q = *t.quantization;
  DLG_NODE_CHECK(ctx, node, !q.scale.empty(), role, " (tensor \"", t.name, "\", ",
                 DataTypeName(t.type), ") has no quantization parameters");
  DLG_NODE_CHECK(ctx, node, q.scale.size() == 1, role, " (tensor \"", t.name,
                 "\") must be quantized per tensor, has ", q.scale.size(), " scales");
  DLG_NODE_CHECK(ctx, node, std::isfinite(q.scale[0]) && q.scale[0] > 0.0f, role, " (tensor \"",
                 t.name, "\") has invalid scale ", q.scale[0]);
  const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
  DLG_NODE_CHECK(ctx, node, zp >= TypeMin(t.type) && zp <= TypeMax(t.type), role, " (tensor \"",
                 t.name, "\") has zero point ", zp, " outside the range of ",
                 DataTypeName(t.type));
  return QuantParams{q.scale[0], static_cast<int32_t>(zp)};
}

// QuantizeMultiplier, failing on a ratio that is not a finite non-negative
// number. Huge ratios (shifts of 32 bits or more, as traffic_model's 3e-35
// MUL output scale gives) are accepted: quant::MultiplyByQuantizedMultiplier
// reproduces what TFLite computes for them.
void QuantizeMultiplierChecked(const KernelContext& ctx, const Node& node, double real,
                               int32_t* multiplier, int* shift, const char* what) {
  DLG_NODE_CHECK(ctx, node, std::isfinite(real) && real >= 0.0, what, " ", real,
                 " is not a valid rescaling factor");
  quant::QuantizeMultiplier(real, multiplier, shift);
}

// TFLite's QuantizeMultiplierSmallerThanOneExp, which aborts outside (0, 1).
void QuantizeMultiplierBelowOne(const KernelContext& ctx, const Node& node, double real,
                                int32_t* multiplier, int* shift, const char* what) {
  DLG_NODE_CHECK(ctx, node, real > 0.0 && real < 1.0, what, " ", real,
                 " must lie in (0, 1) for this op's fixed-point scheme (check the scales)");
  quant::QuantizeMultiplier(real, multiplier, shift);
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

// Clamp of a quantized output for a fused activation.
void QuantizedActivationRange(const KernelContext& ctx, const Node& node, Activation act,
                              const Tensor& out, const QuantParams& q, int32_t* lo,
                              int32_t* hi) {
  bool ok = false;
  switch (out.type) {
    case DataType::kUInt8:
      ok = quant::ActivationRangeQuantized<uint8_t>(act, q.scale, q.zero_point, lo, hi);
      break;
    case DataType::kInt8:
      ok = quant::ActivationRangeQuantized<int8_t>(act, q.scale, q.zero_point, lo, hi);
      break;
    case DataType::kInt16:
      ok = quant::ActivationRangeQuantized<int16_t>(act, q.scale, q.zero_point, lo, hi);
      break;
    default: break;
  }
  DLG_NODE_CHECK(ctx, node, ok, "fused activation ", ActivationName(act),
                 " is not supported on a quantized output");
}

// Clamp of an unquantized output (TFLite's CalculateActivationRange: fused
// activations that are not clamps leave the range open).
template <class T>
reference::ActivationRange<T> PlainActivationRange(Activation act) {
  reference::ActivationRange<T> r;
  switch (act) {
    case Activation::kRelu: r.min = 0; break;
    case Activation::kRelu6: r.min = 0; r.max = 6; break;
    case Activation::kReluN1To1: r.min = -1; r.max = 1; break;
    default: break;
  }
  return r;
}

// Everything Eval of a binary op needs.
struct BinaryData {
  BinaryOp op = BinaryOp::kAdd;
  DataType type = DataType::kFloat32;
  bool quantized = false;
  reference::BroadcastPlan plan;
  reference::ActivationRange<float> float_range;
  reference::ActivationRange<int32_t> int32_range;
  reference::ActivationRange<int64_t> int64_range;
  reference::ActivationRange<int16_t> int16_range;
  reference::QuantizedAddParams add;
  reference::QuantizedMulDivParams mul_div;
  // Divisions check the divisor for this raw value before computing.
  bool check_divisor = false;
  int32_t divisor_zero = 0;
  // The optimized kernel (8-bit quantized ADD, SUB, MUL), when allowed.
  std::unique_ptr<optimized::QuantBinary> fast;
  // int16 MUL, ADD and SUB in vectors (optimized::QuantMul16 /
  // QuantAddSub16), when allowed.
  bool fast_mul16 = false, fast_add_sub16 = false;
  // float32 ADD/SUB/MUL/DIV in vectors (bit-exact), when allowed.
  bool fast_float = false;
  optimized::Isa isa = optimized::Isa::kScalar;
  // 8-bit MUL(x, LOGISTIC(x)) (swish) with the LOGISTIC taken in
  // (AcceptSwishFusion): the output byte of each byte of x, computed by the
  // reference LOGISTIC and MUL in Prepare.
  optimized::RequantizeTable8 swish;
  bool swish_fused = false;
  // float32 MUL(x, LOGISTIC(x)) with the LOGISTIC taken in: one pass of
  // optimized::FloatSwish (the same two roundings).
  bool swish_float = false;
};

// The 8-bit LOGISTIC node's table (its output byte per input byte), or null.
const uint8_t* LogisticTable(const Node& node);
// Whether the node is a float32 LOGISTIC computed by optimized::FloatLogistic.
bool VectorFloatLogistic(const Node& node);

const char* BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "ADD";
    case BinaryOp::kSub: return "SUB";
    case BinaryOp::kMul: return "MUL";
    case BinaryOp::kDiv: return "DIV";
    case BinaryOp::kFloorDiv: return "FLOOR_DIV";
    case BinaryOp::kSquaredDifference: return "SQUARED_DIFFERENCE";
  }
  return "?";
}

bool BinarySupports(BinaryOp op, DataType t, bool quantized) {
  switch (op) {
    case BinaryOp::kAdd:
    case BinaryOp::kMul:
      return t == DataType::kFloat32 || t == DataType::kInt32 || t == DataType::kInt64 ||
             t == DataType::kUInt8 || t == DataType::kInt8 || t == DataType::kInt16;
    case BinaryOp::kSub:
      return t == DataType::kFloat32 || t == DataType::kInt32 || t == DataType::kInt64 ||
             t == DataType::kUInt8 || t == DataType::kInt8 || (t == DataType::kInt16 && quantized);
    case BinaryOp::kDiv:
      return t == DataType::kFloat32 || t == DataType::kInt32 || t == DataType::kUInt8 ||
             t == DataType::kInt8;
    case BinaryOp::kFloorDiv:
      return t == DataType::kFloat32 || t == DataType::kInt32 || t == DataType::kInt16 ||
             t == DataType::kInt8;
    case BinaryOp::kSquaredDifference:
      return false;  // its own node type (ops/compare.cc)
  }
  return false;
}

// TFLite's CheckedLog2: a scale counts as a power of two when its log2 is
// within 1e-3 of an integer.
bool IsPowerOfTwo(float scale) {
  const float log2 = std::log(scale) * (1.0f / std::log(2.0f));
  return std::fabs(log2 - std::round(log2)) < 1e-3f;
}

// Quantized ADD/SUB: TFLite's general 8/16-bit rescaling path.
void PrepareQuantizedAddSub(const KernelContext& ctx, const Node& node, const Tensor& in1,
                            const Tensor& in2, const Tensor& out, Activation act,
                            BinaryData* data) {
  const QuantParams q1 = PerTensorParams(ctx, node, in1, "input 1");
  const QuantParams q2 = PerTensorParams(ctx, node, in2, "input 2");
  const QuantParams qo = PerTensorParams(ctx, node, out, "output");
  if (out.type == DataType::kInt16) {
    const ElementwiseParams params = ParamsOrDefault<ElementwiseParams>(node);
    if (data->op == BinaryOp::kAdd)
      DLG_NODE_CHECK(ctx, node, q1.zero_point == 0 && q2.zero_point == 0 && qo.zero_point == 0,
                     "INT16 ADD needs zero points 0");
    DLG_NODE_CHECK(ctx, node,
                   !(params.pot_scale_int16 && IsPowerOfTwo(q1.scale) && IsPowerOfTwo(q2.scale) &&
                     IsPowerOfTwo(qo.scale)),
                   "INT16 ", BinaryOpName(data->op),
                   " with power-of-two scales (the LSTM-only path) is not supported");
  }
  reference::QuantizedAddParams& p = data->add;
  p.input1_offset = -q1.zero_point;
  p.input2_offset = -q2.zero_point;
  p.output_offset = qo.zero_point;
  p.left_shift = out.type == DataType::kInt16 ? 15 : 20;
  const double twice_max_input_scale = 2 * static_cast<double>(std::max(q1.scale, q2.scale));
  const double real_input1 = static_cast<double>(q1.scale) / twice_max_input_scale;
  const double real_input2 = static_cast<double>(q2.scale) / twice_max_input_scale;
  const double real_output =
      twice_max_input_scale /
      (static_cast<double>(1 << p.left_shift) * static_cast<double>(qo.scale));
  QuantizeMultiplierBelowOne(ctx, node, real_input1, &p.input1_multiplier, &p.input1_shift,
                             "input 1 rescale");
  QuantizeMultiplierBelowOne(ctx, node, real_input2, &p.input2_multiplier, &p.input2_shift,
                             "input 2 rescale");
  QuantizeMultiplierBelowOne(ctx, node, real_output, &p.output_multiplier, &p.output_shift,
                             "output rescale");
  QuantizedActivationRange(ctx, node, act, out, qo, &p.act_min, &p.act_max);
}

// Quantized MUL / DIV: one multiplier from the three scales (computed in
// float, as TFLite does).
void PrepareQuantizedMulDiv(const KernelContext& ctx, const Node& node, const Tensor& in1,
                            const Tensor& in2, const Tensor& out, Activation act,
                            BinaryData* data) {
  const QuantParams q1 = PerTensorParams(ctx, node, in1, "input 1");
  const QuantParams q2 = PerTensorParams(ctx, node, in2, "input 2");
  const QuantParams qo = PerTensorParams(ctx, node, out, "output");
  reference::QuantizedMulDivParams& p = data->mul_div;
  p.input1_offset = -q1.zero_point;
  p.input2_offset = -q2.zero_point;
  p.output_offset = qo.zero_point;
  float real;
  if (data->op == BinaryOp::kMul) {
    if (out.type == DataType::kInt16)
      DLG_NODE_CHECK(ctx, node, q1.zero_point == 0 && q2.zero_point == 0 && qo.zero_point == 0,
                     "INT16 MUL needs zero points 0");
    real = q1.scale * q2.scale / qo.scale;
  } else {
    real = q1.scale / (q2.scale * qo.scale);
  }
  QuantizeMultiplierChecked(ctx, node, real, &p.output_multiplier, &p.output_shift,
                            "output multiplier");
  QuantizedActivationRange(ctx, node, act, out, qo, &p.act_min, &p.act_max);
  if (data->op == BinaryOp::kDiv) {
    data->check_divisor = true;
    data->divisor_zero = q2.zero_point;
  }
}

template <class T>
bool HasZeroDivisor(const Tensor& divisor, int32_t zero) {
  return reference::ContainsValue(divisor.data_as<T>(), divisor.NumElements(),
                                  static_cast<T>(zero));
}

bool DivisorHasZero(DataType type, const Tensor& divisor, int32_t zero) {
  switch (type) {
    case DataType::kFloat32: return HasZeroDivisor<float>(divisor, zero);
    case DataType::kInt32: return HasZeroDivisor<int32_t>(divisor, zero);
    case DataType::kInt16: return HasZeroDivisor<int16_t>(divisor, zero);
    case DataType::kInt8: return HasZeroDivisor<int8_t>(divisor, zero);
    case DataType::kUInt8: return HasZeroDivisor<uint8_t>(divisor, zero);
    default: return false;
  }
}

// An ADD/SUB/MUL by a constant right after another (Node::FusedProducer,
// offered by the interpreter): when both are tabulated, one composed table
// read from the first node's input. Not after a node that itself took in its
// producer (its input is then never written).
void AcceptTableFusion(Node& node, BinaryData& d) {
  Node::FusedProducer& fused = node.fused;
  if (fused.source < 0 || fused.producer_node == nullptr || fused.producer_node->fused.accepted)
    return;
  const BinaryData* first = fused.producer_node->data<BinaryData>();
  if (first == nullptr || first->fast == nullptr || !first->fast->tabulated() ||
      !d.fast->tabulated() || first->plan.num_elements != d.plan.num_elements)
    return;
  fused.accepted = d.fast->ComposeAfter(*first->fast);
}

// Whether the interpreter offered this MUL its producer as MUL(x,
// LOGISTIC(x)) of one shape: the producer (in input `slot`) reads the MUL's
// other input and took in nothing itself. Then the caller may check it is a
// LOGISTIC it can fold.
bool SwishOffered(const Node& node, const Tensor& in1, const Tensor& in2) {
  const Node::FusedProducer& fused = node.fused;
  return fused.source >= 0 && fused.producer_node != nullptr &&
         !fused.producer_node->fused.accepted && in1.dims == in2.dims &&
         node.inputs[1 - fused.slot] == fused.source;
}

// 8-bit MUL(x, LOGISTIC(x)) (SwishOffered): every output is a function of
// one byte of x, so one table of the reference's results replaces both
// nodes; the interpreter then skips the LOGISTIC.
template <class T>
void AcceptSwishFusion(Node& node, const Tensor& in1, const Tensor& in2, BinaryData& d) {
  Node::FusedProducer& fused = node.fused;
  if (!SwishOffered(node, in1, in2)) return;
  const uint8_t* logistic = LogisticTable(*fused.producer_node);
  if (logistic == nullptr) return;
  uint8_t x[256], l[256];
  for (int v = 0; v < 256; ++v) {
    x[v] = static_cast<uint8_t>(v);
    l[v] = logistic[v];
  }
  const uint8_t* a = fused.slot == 0 ? l : x;
  const uint8_t* b = fused.slot == 0 ? x : l;
  const reference::BroadcastPlan plan = reference::MakeBroadcastPlan({256}, {256}, {256});
  reference::QuantizedMulBroadcast(plan, reinterpret_cast<const T*>(a),
                                   reinterpret_cast<const T*>(b),
                                   reinterpret_cast<T*>(d.swish.table), d.mul_div, 0, 256);
  d.swish.SelectLookup();
  d.swish_fused = true;
  fused.accepted = true;
}

void PrepareBinary(KernelContext& ctx, Node& node, BinaryOp op) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in1 = ctx.input(node, 0);
  const Tensor& in2 = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, in1.type == in2.type, "input types differ: tensor \"", in1.name,
                 "\" is ", DataTypeName(in1.type), ", tensor \"", in2.name, "\" is ",
                 DataTypeName(in2.type));
  DLG_NODE_CHECK(ctx, node, out.type == in1.type, "output (tensor \"", out.name, "\") is ",
                 DataTypeName(out.type), ", inputs are ", DataTypeName(in1.type));
  const bool quantized =
      IsQuantizedType(in1.type) && !(in1.type == DataType::kInt16 && in1.quantization->empty() &&
                                     out.quantization->empty());
  DLG_NODE_CHECK(ctx, node, BinarySupports(op, in1.type, quantized), DataTypeName(in1.type),
                 quantized && in1.type == DataType::kInt16 ? " (quantized)" : "",
                 " inputs are not supported");

  std::vector<int32_t> out_dims;
  DLG_NODE_CHECK(ctx, node, reference::BroadcastShapes(in1.dims, in2.dims, &out_dims),
                 "cannot broadcast input shapes ", DimsText(in1.dims), " (tensor \"", in1.name,
                 "\") and ", DimsText(in2.dims), " (tensor \"", in2.name, "\")",
                 in1.rank() > reference::kMaxBroadcastRank ||
                         in2.rank() > reference::kMaxBroadcastRank
                     ? " (rank above 8)"
                     : "");
  ctx.SetOutputDims(node, 0, out_dims);

  auto data = std::make_shared<BinaryData>();
  data->op = op;
  data->type = in1.type;
  data->quantized = quantized && op != BinaryOp::kFloorDiv;
  data->plan = reference::MakeBroadcastPlan(in1.dims, in2.dims, out_dims);

  const Activation act =
      op == BinaryOp::kFloorDiv ? Activation::kNone : ParamsOrDefault<ElementwiseParams>(node).activation;
  if (data->quantized) {
    if (op == BinaryOp::kAdd || op == BinaryOp::kSub)
      PrepareQuantizedAddSub(ctx, node, in1, in2, out, act, data.get());
    else
      PrepareQuantizedMulDiv(ctx, node, in1, in2, out, act, data.get());
    const bool eight_bit = in1.type == DataType::kUInt8 || in1.type == DataType::kInt8;
    const bool add_sub = op == BinaryOp::kAdd || op == BinaryOp::kSub;
    const bool int16 = ctx.optimized() && in1.type == DataType::kInt16;
    data->fast_mul16 = int16 && op == BinaryOp::kMul &&
                       optimized::QuantMul16Covers(data->mul_div, optimized::SelectedIsa());
    data->fast_add_sub16 =
        int16 && add_sub && optimized::QuantAddSub16Covers(data->add, optimized::SelectedIsa());
    if (ctx.optimized() && eight_bit &&
        ((add_sub && optimized::QuantBinary::CoversAddSub(data->add)) ||
         (op == BinaryOp::kMul && optimized::QuantBinary::CoversMul(data->mul_div)))) {
      const auto kind = op == BinaryOp::kAdd   ? optimized::QuantBinary::Kind::kAdd
                        : op == BinaryOp::kSub ? optimized::QuantBinary::Kind::kSub
                                               : optimized::QuantBinary::Kind::kMul;
      data->fast = std::make_unique<optimized::QuantBinary>(
          kind, in1.type == DataType::kUInt8, data->add, data->mul_div, optimized::SelectedIsa());
      // A constant per-channel operand (a batch norm's scale or shift): every
      // output tabulated now.
      if (in1.is_constant() != in2.is_constant()) {
        const Tensor& constant = in1.is_constant() ? in1 : in2;
        if (constant.bytes >= static_cast<size_t>(constant.NumElements()))
          data->fast->TabulateConstant(data->plan, constant.data, in1.is_constant());
      }
      if (op == BinaryOp::kMul && !in1.is_constant() && !in2.is_constant()) {
        if (in1.type == DataType::kUInt8)
          AcceptSwishFusion<uint8_t>(node, in1, in2, *data);
        else
          AcceptSwishFusion<int8_t>(node, in1, in2, *data);
      } else {
        AcceptTableFusion(node, *data);
      }
    }
  } else {
    data->float_range = PlainActivationRange<float>(act);
    data->int32_range = PlainActivationRange<int32_t>(act);
    data->int64_range = PlainActivationRange<int64_t>(act);
    data->int16_range = PlainActivationRange<int16_t>(act);
    if (in1.type == DataType::kFloat32 && op != BinaryOp::kFloorDiv && ctx.optimized()) {
      data->isa = optimized::SelectedIsa();
      data->fast_float = optimized::HasFloatBinary(data->isa);
      // MUL(x, LOGISTIC(x)) without an activation (Node::FusedProducer):
      // both in one pass.
      if (op == BinaryOp::kMul && act == Activation::kNone && SwishOffered(node, in1, in2) &&
          VectorFloatLogistic(*node.fused.producer_node) &&
          optimized::HasFloatLogistic(data->isa)) {
        data->swish_float = true;
        node.fused.accepted = true;
      }
    }
    if (op == BinaryOp::kFloorDiv || (op == BinaryOp::kDiv && in1.type == DataType::kInt32)) {
      data->check_divisor = true;
      data->divisor_zero = 0;
    }
  }
  // A constant divisor is checked once, here; others before every Eval.
  if (data->check_divisor && in2.is_constant()) {
    DLG_NODE_CHECK(ctx, node, !DivisorHasZero(in1.type, in2, data->divisor_zero),
                   "division by zero: constant divisor (tensor \"", in2.name,
                   "\") holds a zero");
    data->check_divisor = false;
  }
  node.op_data = std::move(data);
}

template <class T>
void EvalPlainBinary(const KernelContext& ctx, const BinaryData& d, const Tensor& a,
                     const Tensor& b, Tensor& out, reference::ActivationRange<T> range) {
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* po = out.data_as<T>();
  if constexpr (std::is_same_v<T, float>) {
    if (d.fast_float) {
      ParallelRange(
          ctx, d.plan.num_elements,
          [&](int64_t begin, int64_t end) {
            optimized::FloatBinary(d.isa, d.op, d.plan, pa, pb, po, range.min, range.max, begin,
                                   end);
          },
          kMinParallelVectorElements);
      return;
    }
  }
  ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
    reference::BinaryArithmetic<T>(d.op, d.plan, pa, pb, po, range, begin, end);
  });
}

template <class T>
void EvalQuantizedBinary(const KernelContext& ctx, const BinaryData& d, const Tensor& a,
                         const Tensor& b, Tensor& out) {
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* po = out.data_as<T>();
  ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
    switch (d.op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
        reference::QuantizedAdd(d.plan, pa, pb, po, d.add, d.op == BinaryOp::kSub, begin, end);
        break;
      case BinaryOp::kMul:
        reference::QuantizedMulBroadcast(d.plan, pa, pb, po, d.mul_div, begin, end);
        break;
      case BinaryOp::kDiv:
        reference::QuantizedDivBroadcast(d.plan, pa, pb, po, d.mul_div, begin, end);
        break;
      case BinaryOp::kFloorDiv:           // not quantized (Prepare)
      case BinaryOp::kSquaredDifference:  // its own node type (ops/compare.cc)
        break;
    }
  });
}

void EvalBinary(KernelContext& ctx, const Node& node) {
  const BinaryData& d = *node.data<BinaryData>();
  if (d.swish_float) {
    const float* x = ctx.tensor(node.fused.source).data_as<float>();
    float* out = ctx.out(node, 0).data_as<float>();
    ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
      optimized::FloatSwish(d.isa, x, out, begin, end);
    });
    return;
  }
  if (d.swish_fused) {
    const uint8_t* x = ctx.tensor(node.fused.source).data;
    uint8_t* out = ctx.out(node, 0).data;
    ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
      d.swish.Run(x, out, begin, end);
    });
    return;
  }
  // With a fused producer (AcceptTableFusion) its input takes that input's place.
  const Node::FusedProducer& fused = node.fused;
  const Tensor& a = fused.accepted && fused.slot == 0 ? ctx.tensor(fused.source) : ctx.in(node, 0);
  const Tensor& b = fused.accepted && fused.slot == 1 ? ctx.tensor(fused.source) : ctx.in(node, 1);
  Tensor& out = ctx.out(node, 0);
  if (d.check_divisor && DivisorHasZero(d.type, b, d.divisor_zero)) {
    ctx.SetEvalError(node, "division by zero: the divisor (input 2) holds a zero");
    return;
  }
  if (d.fast != nullptr) {
    const optimized::QuantBinary& fast = *d.fast;
    const void* pa = a.data;
    const void* pb = b.data;
    void* po = out.data;
    ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
      fast.Run(d.plan, pa, pb, po, begin, end);
    });
    return;
  }
  if (d.fast_mul16 || d.fast_add_sub16) {
    const int16_t* pa = a.data_as<int16_t>();
    const int16_t* pb = b.data_as<int16_t>();
    int16_t* po = out.data_as<int16_t>();
    ParallelRange(
        ctx, d.plan.num_elements,
        [&](int64_t begin, int64_t end) {
          if (d.fast_mul16)
            optimized::QuantMul16(d.plan, pa, pb, po, d.mul_div, begin, end);
          else
            optimized::QuantAddSub16(d.plan, pa, pb, po, d.add, d.op == BinaryOp::kSub, begin,
                                     end);
        },
        kMinParallelVectorElements);
    return;
  }
  if (d.quantized) {
    switch (d.type) {
      case DataType::kUInt8: EvalQuantizedBinary<uint8_t>(ctx, d, a, b, out); return;
      case DataType::kInt8: EvalQuantizedBinary<int8_t>(ctx, d, a, b, out); return;
      case DataType::kInt16: EvalQuantizedBinary<int16_t>(ctx, d, a, b, out); return;
      default: return;
    }
  }
  switch (d.type) {
    case DataType::kFloat32: EvalPlainBinary<float>(ctx, d, a, b, out, d.float_range); return;
    case DataType::kInt32: EvalPlainBinary<int32_t>(ctx, d, a, b, out, d.int32_range); return;
    case DataType::kInt64: EvalPlainBinary<int64_t>(ctx, d, a, b, out, d.int64_range); return;
    case DataType::kInt16: EvalPlainBinary<int16_t>(ctx, d, a, b, out, d.int16_range); return;
    case DataType::kInt8:
      EvalPlainBinary<int8_t>(ctx, d, a, b, out, reference::ActivationRange<int8_t>{});
      return;
    default: return;
  }
}

// Checks shared by one-input, one-output ops whose output has the input's dims.
void PrepareUnaryShape(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  ctx.output(node, 0);
  ctx.SetOutputDims(node, 0, in.dims);
}

void CheckSameType(const KernelContext& ctx, const Node& node, const Tensor& in,
                   const Tensor& out) {
  DLG_NODE_CHECK(ctx, node, in.type == out.type, "output (tensor \"", out.name, "\") is ",
                 DataTypeName(out.type), ", input (tensor \"", in.name, "\") is ",
                 DataTypeName(in.type));
}

// ------------------------------------------------------------ activations

enum class ActivationKind { kRelu, kRelu6, kLogistic, kTanh };

struct ActivationData {
  ActivationKind kind = ActivationKind::kRelu;
  DataType type = DataType::kFloat32;
  reference::QuantizedReluParams relu;
  // The output byte for each input byte: 8-bit LOGISTIC/TANH (their
  // reference algorithm) and, with the optimized kernel set, RELU/RELU6
  // (the reference's outputs); int8 entries stored as bytes.
  optimized::RequantizeTable8 lookup;
  bool fast_lookup = false;  // optimized kernel set: every 8-bit case through lookup.Run
  reference::Int16ActivationParams int16;  // int16 LOGISTIC/TANH
  bool fast_int16 = false;  // int16 LOGISTIC/TANH through optimized::Int16SigmoidTanh
  // float32 LOGISTIC and TANH through the vector exp, when allowed (see
  // float_activations.h).
  bool fast_logistic = false;
  optimized::Isa isa = optimized::Isa::kScalar;
};

// TFLite's CheckedLog2: log2(x) in float, rounded; true when x is within
// 1e-3 (in the exponent) of a power of two.
bool CheckedLog2(float x, int* log2_result) {
  const float x_log2 = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(x_log2);
  *log2_result = static_cast<int>(rounded);
  return std::abs(x_log2 - rounded) < 1e-3f;
}

// int16 LOGISTIC/TANH input scaling as TFLite's Prepare computes it: a
// power-of-two scale of 2^-12 (TANH also 2^-13) uses the exact shift path;
// any other scale a multiplier taking it to 1 / (3 * 4096), at most 15 bits.
void PrepareInt16Activation(KernelContext& ctx, const Node& node, ActivationKind kind,
                            const QuantParams& qi, const QuantParams& qo, const Tensor& out,
                            reference::Int16ActivationParams* p) {
  DLG_NODE_CHECK(ctx, node, qi.zero_point == 0 && qo.zero_point == 0,
                 "INT16 input and output need zero point 0");
  constexpr int kInputIntegerBits = 3;
  int input_log2 = 0;
  bool pot = CheckedLog2(qi.scale, &input_log2);
  p->left_shift = (15 - kInputIntegerBits) + input_log2;
  pot = pot && (p->left_shift == 0 || (kind == ActivationKind::kTanh && p->left_shift == 1));
  p->multiplier = 0;
  if (!pot) {
    double multiplier = static_cast<double>(qi.scale) * 4096.0 * 3.0;
    p->left_shift = 0;
    while (multiplier <= 32767.0 / 2.0 && p->left_shift <= 30) {
      ++p->left_shift;
      multiplier *= 2.0;
    }
    DLG_NODE_CHECK(ctx, node, multiplier <= 32767.0, "input scale ", qi.scale,
                   " is too large for INT16 ", kind == ActivationKind::kTanh ? "TANH" : "LOGISTIC");
    p->multiplier = static_cast<int32_t>(multiplier);
  }
  int output_log2 = 0;
  DLG_NODE_CHECK(ctx, node, CheckedLog2(qo.scale, &output_log2) && output_log2 == -15,
                 "output (tensor \"", out.name, "\") must have scale 2^-15, has ", qo.scale);
  if (kind == ActivationKind::kLogistic)
    DLG_NODE_CHECK(ctx, node, qo.scale == 1.0f / 32768, "output (tensor \"", out.name,
                   "\") must have scale 1/32768, has ", qo.scale);
}

void PrepareActivation(KernelContext& ctx, Node& node, ActivationKind kind) {
  PrepareUnaryShape(ctx, node);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  CheckSameType(ctx, node, in, out);
  auto data = std::make_shared<ActivationData>();
  data->kind = kind;
  data->type = in.type;
  if (in.type == DataType::kFloat32 &&
      (kind == ActivationKind::kLogistic || kind == ActivationKind::kTanh) && ctx.optimized()) {
    data->isa = optimized::SelectedIsa();
    data->fast_logistic = optimized::HasFloatLogistic(data->isa);
  }
  const bool relu = kind == ActivationKind::kRelu || kind == ActivationKind::kRelu6;
  const bool type_ok = in.type == DataType::kFloat32 || in.type == DataType::kUInt8 ||
                       in.type == DataType::kInt8 || in.type == DataType::kInt16;
  DLG_NODE_CHECK(ctx, node, type_ok, DataTypeName(in.type), " input (tensor \"", in.name,
                 "\") is not supported");
  if (in.type != DataType::kFloat32) {
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    if (relu) {
      if (in.type == DataType::kInt16)
        DLG_NODE_CHECK(ctx, node, qi.zero_point == 0 && qo.zero_point == 0,
                       "INT16 input and output need zero point 0");
      reference::QuantizedReluParams& p = data->relu;
      p.input_zero_point = qi.zero_point;
      p.output_zero_point = qo.zero_point;
      const float ratio = qi.scale / qo.scale;  // float division, as TFLite
      QuantizeMultiplierChecked(ctx, node, ratio, &p.output_multiplier, &p.output_shift,
                                "input/output scale ratio");
      // zero_point + round(bound / scale), clamped to the type.
      auto quantize = [&](float bound) {
        return fixed_point::WrappingAdd(
            qo.zero_point, fixed_point::TruncateToInt32(std::round(bound / qo.scale)));
      };
      p.act_min = std::max(TypeMin(in.type), quantize(0.0f));
      p.act_max = kind == ActivationKind::kRelu ? TypeMax(in.type)
                                                : std::min(TypeMax(in.type), quantize(6.0f));
      if (ctx.optimized() && (in.type == DataType::kUInt8 || in.type == DataType::kInt8)) {
        uint8_t bytes[256];
        for (int v = 0; v < 256; ++v) bytes[v] = static_cast<uint8_t>(v);
        uint8_t* table = data->lookup.table;
        if (in.type == DataType::kUInt8)
          reference::QuantizedRelu(p, bytes, table, 0, 256);
        else
          reference::QuantizedRelu(p, reinterpret_cast<const int8_t*>(bytes),
                                   reinterpret_cast<int8_t*>(table), 0, 256);
        data->fast_lookup = true;
      }
    } else if (in.type == DataType::kInt16) {
      PrepareInt16Activation(ctx, node, kind, qi, qo, out, &data->int16);
      data->isa = optimized::SelectedIsa();
      data->fast_int16 = ctx.optimized() &&
                         (kind == ActivationKind::kLogistic || kind == ActivationKind::kTanh) &&
                         optimized::Int16SigmoidTanhCovers(data->isa);
    } else {
      if (kind == ActivationKind::kLogistic)
        DLG_NODE_CHECK(ctx, node, qo.scale == 1.0f / 256, "output (tensor \"", out.name,
                       "\") must have scale 1/256, has ", qo.scale);
      auto fn = kind == ActivationKind::kLogistic ? reference::LogisticForTable
                                                  : reference::TanhForTable;
      if (in.type == DataType::kUInt8)
        reference::PopulateLookupTable<uint8_t>(qi.scale, qi.zero_point, qo.scale,
                                                qo.zero_point, fn, data->lookup.table);
      else
        reference::PopulateLookupTable<int8_t>(qi.scale, qi.zero_point, qo.scale, qo.zero_point,
                                               fn, reinterpret_cast<int8_t*>(data->lookup.table));
      data->fast_lookup = ctx.optimized();
    }
  }
  if (data->fast_lookup) data->lookup.SelectLookup();
  node.op_data = std::move(data);
}

// A prepared LOGISTIC node's data, or null for any other node.
const ActivationData* LogisticData(const Node& node) {
  if (node.kernel == nullptr || node.kernel->custom_code != nullptr ||
      node.kernel->builtin != BuiltinOp::kLogistic)
    return nullptr;
  const ActivationData* d = node.data<ActivationData>();
  return d != nullptr && d->kind == ActivationKind::kLogistic ? d : nullptr;
}

const uint8_t* LogisticTable(const Node& node) {
  const ActivationData* d = LogisticData(node);
  return d != nullptr && (d->type == DataType::kUInt8 || d->type == DataType::kInt8)
             ? d->lookup.table
             : nullptr;
}

bool VectorFloatLogistic(const Node& node) {
  const ActivationData* d = LogisticData(node);
  return d != nullptr && d->type == DataType::kFloat32 && d->fast_logistic;
}

void EvalActivation(KernelContext& ctx, const Node& node) {
  const ActivationData& d = *node.data<ActivationData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  const int64_t n = in.NumElements();
  if (d.type == DataType::kFloat32) {
    const float* x = in.data_as<float>();
    float* y = out.data_as<float>();
    ParallelElements(ctx, n, [&](int64_t begin, int64_t end) {
      switch (d.kind) {
        case ActivationKind::kRelu: reference::ReluFloat(x, y, begin, end); break;
        case ActivationKind::kRelu6: reference::Relu6Float(x, y, begin, end); break;
        case ActivationKind::kLogistic:
          if (d.fast_logistic)
            optimized::FloatLogistic(d.isa, x, y, begin, end);
          else
            reference::LogisticFloat(x, y, begin, end);
          break;
        case ActivationKind::kTanh:
          if (d.fast_logistic)
            optimized::FloatTanh(d.isa, x, y, begin, end);
          else
            reference::TanhFloat(x, y, begin, end);
          break;
      }
    });
    return;
  }
  const bool relu = d.kind == ActivationKind::kRelu || d.kind == ActivationKind::kRelu6;
  ParallelElements(ctx, n, [&](int64_t begin, int64_t end) {
    if (d.fast_lookup) {
      d.lookup.Run(in.data, out.data, begin, end);
      return;
    }
    switch (d.type) {
      case DataType::kUInt8:
        if (relu)
          reference::QuantizedRelu(d.relu, in.data_as<uint8_t>(), out.data_as<uint8_t>(), begin,
                                   end);
        else
          reference::LookupTable(d.lookup.table, in.data_as<uint8_t>(), out.data_as<uint8_t>(),
                                 begin, end);
        break;
      case DataType::kInt8:
        if (relu)
          reference::QuantizedRelu(d.relu, in.data_as<int8_t>(), out.data_as<int8_t>(), begin,
                                   end);
        else
          reference::LookupTable(reinterpret_cast<const int8_t*>(d.lookup.table),
                                 in.data_as<int8_t>(), out.data_as<int8_t>(), begin, end);
        break;
      case DataType::kInt16:
        if (relu)
          reference::QuantizedRelu(d.relu, in.data_as<int16_t>(), out.data_as<int16_t>(), begin,
                                   end);
        else if (d.fast_int16)
          optimized::Int16SigmoidTanh(d.isa, d.kind == ActivationKind::kTanh, d.int16,
                                      in.data_as<int16_t>(), out.data_as<int16_t>(), begin, end);
        else if (d.kind == ActivationKind::kLogistic)
          reference::LogisticInt16(d.int16, in.data_as<int16_t>(), out.data_as<int16_t>(), begin,
                                   end);
        else
          reference::TanhInt16(d.int16, in.data_as<int16_t>(), out.data_as<int16_t>(), begin,
                               end);
        break;
      default: break;
    }
  });
}

// ------------------------------------------------------------ softmax

struct SoftmaxData {
  DataType in_type = DataType::kFloat32;
  DataType out_type = DataType::kFloat32;
  float beta = 1.0f;
  reference::QuantizedSoftmaxParams params;
  int64_t depth = 0;
  int64_t rows = 0;
  // 8-bit input: the exp table kernel (kernel set allowing it).
  bool use_table = false;
  optimized::QuantSoftmax8 table;
  reference::SoftmaxInt16Params int16;  // INT16 input and output
  // float32 with the vector exp (see float_activations.h), when allowed.
  bool fast_float = false;
  optimized::Isa isa = optimized::Isa::kScalar;
};

// ------------------------------------------------------------ quantize / dequantize / cast

// Per-axis quantization of `t` validated against its dims: one scale per
// channel of the quantized dimension, zero points one per channel or a single
// shared one (TFLite broadcasts the first).
struct PerAxisParams {
  reference::PerAxisLayout layout;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
};

PerAxisParams ReadPerAxisParams(const KernelContext& ctx, const Node& node, const Tensor& t,
                                const char* role) {
  const Quantization& q = *t.quantization;
  const int axis = q.quantized_dimension;
  DLG_NODE_CHECK(ctx, node, axis >= 0 && axis < t.rank(), role, " (tensor \"", t.name,
                 "\") has quantized dimension ", axis, " outside its rank ", t.rank());
  const int64_t channels = t.dims[axis];
  DLG_NODE_CHECK(ctx, node, static_cast<int64_t>(q.scale.size()) == channels, role,
                 " (tensor \"", t.name, "\") has ", q.scale.size(), " scales for ", channels,
                 " channels");
  DLG_NODE_CHECK(ctx, node, q.zero_point.size() == q.scale.size() || q.zero_point.size() == 1,
                 role, " (tensor \"", t.name, "\") has ", q.zero_point.size(),
                 " zero points for ", q.scale.size(), " scales");
  PerAxisParams p;
  p.layout.channels = channels;
  p.layout.inner = 1;
  for (int d = axis + 1; d < t.rank(); ++d) p.layout.inner *= t.dims[d];
  p.scales = q.scale;
  for (size_t c = 0; c < q.scale.size(); ++c) {
    const int64_t zp = q.zero_point.size() == 1 ? q.zero_point[0] : q.zero_point[c];
    DLG_NODE_CHECK(ctx, node, zp >= TypeMin(t.type) && zp <= TypeMax(t.type), role,
                   " (tensor \"", t.name, "\") has zero point ", zp, " outside the range of ",
                   DataTypeName(t.type));
    p.zero_points.push_back(static_cast<int32_t>(zp));
  }
  return p;
}

struct QuantizeData {
  DataType in_type = DataType::kFloat32;
  DataType out_type = DataType::kFloat32;
  bool per_axis = false;
  QuantParams in, out;  // per-tensor parameters
  PerAxisParams axis;   // when per_axis
  int32_t multiplier = 0;  // requantization in_scale / out_scale
  int shift = 0;
  // Optimized paths (kernel set allowing): 8-bit -> 8-bit through a table,
  // float32 -> 8-bit per tensor vectorized.
  bool use_table = false;
  optimized::RequantizeTable8 table;
  bool use_float8 = false;
  optimized::QuantizeFloat8 float8;
};

template <class Out>
void RunQuantizeFromFloat(const QuantizeData& d, const float* x, Out* y, int64_t begin,
                          int64_t end) {
  if (d.per_axis)
    reference::PerAxisQuantize(d.axis.layout, d.axis.scales.data(), d.axis.zero_points.data(), x,
                               y, begin, end);
  else
    reference::AffineQuantize(d.out.scale, d.out.zero_point, x, y, begin, end);
}

template <class In, class Out>
void RunRequantize(const QuantizeData& d, const In* x, Out* y, int64_t begin, int64_t end) {
  reference::Requantize(x, y, d.multiplier, d.shift, d.in.zero_point, d.out.zero_point, begin,
                        end);
}

template <class In>
void RunRequantizeFrom(const QuantizeData& d, const In* x, void* y, int64_t begin, int64_t end) {
  switch (d.out_type) {
    case DataType::kUInt8: RunRequantize(d, x, static_cast<uint8_t*>(y), begin, end); break;
    case DataType::kInt8: RunRequantize(d, x, static_cast<int8_t*>(y), begin, end); break;
    case DataType::kInt16: RunRequantize(d, x, static_cast<int16_t*>(y), begin, end); break;
    case DataType::kInt32: RunRequantize(d, x, static_cast<int32_t*>(y), begin, end); break;
    default: break;
  }
}

struct DequantizeData {
  DataType in_type = DataType::kUInt8;
  bool per_axis = false;
  float scale = 0.0f;
  int32_t zero_point = 0;
  PerAxisParams axis;
};

bool CastSupports(DataType t) {
  switch (t) {
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kBool:
    case DataType::kFloat64:
      return true;
    default:
      return false;
  }
}

template <class From, class To>
void CastRange(const void* in, void* out, int64_t begin, int64_t end) {
  reference::Cast(static_cast<const From*>(in), static_cast<To*>(out), begin, end);
}

template <class From>
void CastFrom(DataType to, const void* in, void* out, int64_t begin, int64_t end) {
  switch (to) {
    case DataType::kFloat32: CastRange<From, float>(in, out, begin, end); break;
    case DataType::kFloat64: CastRange<From, double>(in, out, begin, end); break;
    case DataType::kInt32: CastRange<From, int32_t>(in, out, begin, end); break;
    case DataType::kInt64: CastRange<From, int64_t>(in, out, begin, end); break;
    case DataType::kUInt8: CastRange<From, uint8_t>(in, out, begin, end); break;
    case DataType::kInt8: CastRange<From, int8_t>(in, out, begin, end); break;
    case DataType::kInt16: CastRange<From, int16_t>(in, out, begin, end); break;
    case DataType::kUInt16: CastRange<From, uint16_t>(in, out, begin, end); break;
    case DataType::kUInt32: CastRange<From, uint32_t>(in, out, begin, end); break;
    case DataType::kBool: CastRange<From, bool>(in, out, begin, end); break;
    default: break;
  }
}

void CastAny(DataType from, DataType to, const void* in, void* out, int64_t begin,
             int64_t end) {
  switch (from) {
    case DataType::kFloat32: CastFrom<float>(to, in, out, begin, end); break;
    case DataType::kFloat64: CastFrom<double>(to, in, out, begin, end); break;
    case DataType::kInt32: CastFrom<int32_t>(to, in, out, begin, end); break;
    case DataType::kInt64: CastFrom<int64_t>(to, in, out, begin, end); break;
    case DataType::kUInt8: CastFrom<uint8_t>(to, in, out, begin, end); break;
    case DataType::kInt8: CastFrom<int8_t>(to, in, out, begin, end); break;
    case DataType::kInt16: CastFrom<int16_t>(to, in, out, begin, end); break;
    case DataType::kUInt16: CastFrom<uint16_t>(to, in, out, begin, end); break;
    case DataType::kUInt32: CastFrom<uint32_t>(to, in, out, begin, end); break;
    case DataType::kBool: CastFrom<bool>(to, in, out, begin, end); break;
    default: break;
  }
}

struct CastData {
  DataType from = DataType::kFloat32;
  DataType to = DataType::kFloat32;
};

}  // namespace

// ------------------------------------------------------------ op entry points

void PrepareAdd(KernelContext& ctx, Node& node) { PrepareBinary(ctx, node, BinaryOp::kAdd); }
void EvalAdd(KernelContext& ctx, const Node& node) { EvalBinary(ctx, node); }
void PrepareSub(KernelContext& ctx, Node& node) { PrepareBinary(ctx, node, BinaryOp::kSub); }
void EvalSub(KernelContext& ctx, const Node& node) { EvalBinary(ctx, node); }
void PrepareMul(KernelContext& ctx, Node& node) { PrepareBinary(ctx, node, BinaryOp::kMul); }
void EvalMul(KernelContext& ctx, const Node& node) { EvalBinary(ctx, node); }
void PrepareDiv(KernelContext& ctx, Node& node) { PrepareBinary(ctx, node, BinaryOp::kDiv); }
void EvalDiv(KernelContext& ctx, const Node& node) { EvalBinary(ctx, node); }
void PrepareFloorDiv(KernelContext& ctx, Node& node) {
  PrepareBinary(ctx, node, BinaryOp::kFloorDiv);
}
void EvalFloorDiv(KernelContext& ctx, const Node& node) { EvalBinary(ctx, node); }

void PrepareSqrt(KernelContext& ctx, Node& node) {
  PrepareUnaryShape(ctx, node);
  const Tensor& in = ctx.input(node, 0);
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  DLG_NODE_CHECK(ctx, node, in.type == DataType::kFloat32, DataTypeName(in.type),
                 " input (tensor \"", in.name, "\") is not supported, only FLOAT32");
}
void EvalSqrt(KernelContext& ctx, const Node& node) {
  const float* x = ctx.in(node, 0).data_as<float>();
  float* y = ctx.out(node, 0).data_as<float>();
  ParallelElements(ctx, ctx.in(node, 0).NumElements(),
                   [&](int64_t begin, int64_t end) { reference::Sqrt(x, y, begin, end); });
}

void PrepareRelu(KernelContext& ctx, Node& node) {
  PrepareActivation(ctx, node, ActivationKind::kRelu);
}
void EvalRelu(KernelContext& ctx, const Node& node) { EvalActivation(ctx, node); }
void PrepareRelu6(KernelContext& ctx, Node& node) {
  PrepareActivation(ctx, node, ActivationKind::kRelu6);
}
void EvalRelu6(KernelContext& ctx, const Node& node) { EvalActivation(ctx, node); }
void PrepareLogistic(KernelContext& ctx, Node& node) {
  PrepareActivation(ctx, node, ActivationKind::kLogistic);
}
void EvalLogistic(KernelContext& ctx, const Node& node) { EvalActivation(ctx, node); }
void PrepareTanh(KernelContext& ctx, Node& node) {
  PrepareActivation(ctx, node, ActivationKind::kTanh);
}
void EvalTanh(KernelContext& ctx, const Node& node) { EvalActivation(ctx, node); }

void PrepareSoftmax(KernelContext& ctx, Node& node) {
  PrepareUnaryShape(ctx, node);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, in.rank() >= 1, "input (tensor \"", in.name,
                 "\") must have rank >= 1");
  auto data = std::make_shared<SoftmaxData>();
  data->in_type = in.type;
  data->out_type = out.type;
  data->beta = ParamsOrDefault<SoftmaxParams>(node).beta;
  if (in.type == DataType::kFloat32 && ctx.optimized()) {
    data->isa = optimized::SelectedIsa();
    data->fast_float = optimized::HasFloatLogistic(data->isa);
  }
  data->depth = in.dims.back();
  data->rows = data->depth == 0 ? 0 : in.NumElements() / data->depth;
  if (in.type == DataType::kFloat32) {
    CheckSameType(ctx, node, in, out);
  } else if (in.type == DataType::kInt16) {
    DLG_NODE_CHECK(ctx, node, out.type == DataType::kInt16, "INT16 input with ",
                   DataTypeName(out.type), " output is not supported");
    // LiteRT's int16 kernel stops at rank 4 too.
    DLG_NODE_CHECK(ctx, node, in.rank() <= 4, "INT16 input (tensor \"", in.name,
                   "\") must have rank 1 to 4, has rank ", in.rank());
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    DLG_NODE_CHECK(ctx, node, qi.zero_point == 0 && qo.zero_point == 0,
                   "INT16 input and output need zero point 0");
    DLG_NODE_CHECK(ctx, node, reference::PrepareSoftmaxInt16(qi.scale, data->beta, &data->int16),
                   "beta ", data->beta, " times input scale ", qi.scale,
                   " cannot be requantized for the INT16 softmax");
  } else {
    const bool types_ok =
        (in.type == DataType::kUInt8 &&
         (out.type == DataType::kUInt8 || out.type == DataType::kInt16)) ||
        (in.type == DataType::kInt8 && (out.type == DataType::kInt8 || out.type == DataType::kInt16));
    DLG_NODE_CHECK(ctx, node, types_ok, DataTypeName(in.type), " input with ",
                   DataTypeName(out.type), " output is not supported");
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    if (out.type == DataType::kInt8) {
      DLG_NODE_CHECK(ctx, node, qo.zero_point == -128, "output (tensor \"", out.name,
                     "\") must have zero point -128, has ", qo.zero_point);
      DLG_NODE_CHECK(ctx, node, std::fabs(qo.scale - 1.0f / 256) <= 0.001f * 1.0f / 256,
                     "output (tensor \"", out.name, "\") must have scale 1/256, has ", qo.scale);
    }
    DLG_NODE_CHECK(ctx, node,
                   reference::PrepareQuantizedSoftmax(data->beta, qi.scale, &data->params),
                   "beta ", data->beta, " times input scale ", qi.scale,
                   " is too small for the fixed-point softmax");
    if (ctx.optimized()) {
      data->use_table = true;
      data->table.Build(data->params, in.type == DataType::kInt8,
                        out.type == DataType::kInt16  ? optimized::QuantSoftmax8::Output::kInt16
                        : out.type == DataType::kInt8 ? optimized::QuantSoftmax8::Output::kInt8
                                                      : optimized::QuantSoftmax8::Output::kUInt8);
    }
  }
  node.op_data = std::move(data);
}

void EvalSoftmax(KernelContext& ctx, const Node& node) {
  const SoftmaxData& d = *node.data<SoftmaxData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  // Split by rows; aim for chunks of kMinParallelElements elements.
  const int64_t min_rows = std::max<int64_t>(1, kMinParallelElements / std::max<int64_t>(1, d.depth));
  auto run = [&](int64_t begin, int64_t end) {
    if (d.use_table) {
      d.table.Run(in.data, out.data, d.depth, begin, end);
    } else if (d.in_type == DataType::kInt16) {
      reference::SoftmaxInt16(d.int16, in.data_as<int16_t>(), out.data_as<int16_t>(), d.depth,
                              begin, end);
    } else if (d.in_type == DataType::kFloat32) {
      if (d.fast_float)
        optimized::FloatSoftmax(d.isa, d.beta, in.data_as<float>(), out.data_as<float>(),
                                d.depth, begin, end);
      else
        reference::SoftmaxFloat(d.beta, in.data_as<float>(), out.data_as<float>(), d.depth,
                                begin, end);
    } else if (d.in_type == DataType::kUInt8) {
      if (d.out_type == DataType::kUInt8)
        reference::SoftmaxQuantized(d.params, in.data_as<uint8_t>(), out.data_as<uint8_t>(),
                                    d.depth, begin, end);
      else
        reference::SoftmaxQuantized(d.params, in.data_as<uint8_t>(), out.data_as<int16_t>(),
                                    d.depth, begin, end);
    } else {
      if (d.out_type == DataType::kInt8)
        reference::SoftmaxQuantized(d.params, in.data_as<int8_t>(), out.data_as<int8_t>(),
                                    d.depth, begin, end);
      else
        reference::SoftmaxQuantized(d.params, in.data_as<int8_t>(), out.data_as<int16_t>(),
                                    d.depth, begin, end);
    }
  };
  ParallelRange(ctx, d.rows, run, min_rows);
}

void PrepareQuantize(KernelContext& ctx, Node& node) {
  PrepareUnaryShape(ctx, node);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  auto data = std::make_shared<QuantizeData>();
  data->in_type = in.type;
  data->out_type = out.type;
  DLG_NODE_CHECK(ctx, node, !out.quantization->empty(), "output (tensor \"", out.name,
                 "\") has no quantization parameters");
  if (in.type == DataType::kFloat32) {
    DLG_NODE_CHECK(ctx, node,
                   out.type == DataType::kUInt8 || out.type == DataType::kInt8 ||
                       out.type == DataType::kInt16,
                   "quantizing FLOAT32 to ", DataTypeName(out.type), " is not supported");
    if (out.quantization->per_axis()) {
      data->per_axis = true;
      data->axis = ReadPerAxisParams(ctx, node, out, "output");
      for (float s : data->axis.scales)
        DLG_NODE_CHECK(ctx, node, std::isfinite(s) && s > 0.0f, "output (tensor \"", out.name,
                       "\") has invalid scale ", s);
    } else {
      data->out = PerTensorParams(ctx, node, out, "output");
    }
  } else {
    const bool types_ok =
        ((in.type == DataType::kUInt8 || in.type == DataType::kInt8) &&
         (out.type == DataType::kUInt8 || out.type == DataType::kInt8)) ||
        (in.type == DataType::kInt16 &&
         (out.type == DataType::kInt8 || out.type == DataType::kInt16 ||
          out.type == DataType::kInt32)) ||
        (in.type == DataType::kInt32 &&
         (out.type == DataType::kInt8 || out.type == DataType::kInt16));
    DLG_NODE_CHECK(ctx, node, types_ok, "requantizing ", DataTypeName(in.type), " to ",
                   DataTypeName(out.type), " is not supported");
    auto params_of = [&](const Tensor& t, const char* role) {
      if (t.type != DataType::kInt32) return PerTensorParams(ctx, node, t, role);
      // INT32 has no narrow range to check; only the scale must be usable.
      DLG_NODE_CHECK(ctx, node, t.quantization->scale.size() == 1, role, " (tensor \"", t.name,
                     "\") must be quantized per tensor");
      const float s = t.quantization->scale[0];
      DLG_NODE_CHECK(ctx, node, std::isfinite(s) && s > 0.0f, role, " (tensor \"", t.name,
                     "\") has invalid scale ", s);
      return QuantParams{s, t.zero_point()};
    };
    data->in = params_of(in, "input");
    data->out = params_of(out, "output");
    if (in.type == DataType::kInt16 && out.type == DataType::kInt16)
      DLG_NODE_CHECK(ctx, node, data->in.zero_point == 0 && data->out.zero_point == 0,
                     "INT16 requantization needs zero points 0");
    QuantizeMultiplierChecked(
        ctx, node, static_cast<double>(data->in.scale) / static_cast<double>(data->out.scale),
        &data->multiplier, &data->shift, "input/output scale ratio");
  }
  const bool in8 = in.type == DataType::kUInt8 || in.type == DataType::kInt8;
  const bool out8 = out.type == DataType::kUInt8 || out.type == DataType::kInt8;
  // The reference kernel's sign flip (int8 <-> uint8, same scale) is a
  // vectorized loop: several times faster than table lookups without AVX-512
  // VBMI.
  const bool sign_flip = in.type != out.type &&
                         reference::RequantizeIsSignFlip(in.type == DataType::kUInt8,
                                                         data->multiplier, data->shift,
                                                         data->in.zero_point, data->out.zero_point);
  if (ctx.optimized() && in8 && out8 && !sign_flip) {
    data->use_table = true;
    data->table.Build(in.type == DataType::kInt8, out.type == DataType::kInt8, data->multiplier,
                      data->shift, data->in.zero_point, data->out.zero_point);
  } else if (ctx.optimized() && in.type == DataType::kFloat32 && out8 && !data->per_axis) {
    data->use_float8 = true;
    data->float8.scale = data->out.scale;
    data->float8.zero_point = data->out.zero_point;
    data->float8.out_signed = out.type == DataType::kInt8;
    data->float8.isa = optimized::SelectedIsa();
  }
  node.op_data = std::move(data);
}

void EvalQuantize(KernelContext& ctx, const Node& node) {
  const QuantizeData& d = *node.data<QuantizeData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  if (d.use_table) {
    ParallelElements(ctx, in.NumElements(), [&](int64_t begin, int64_t end) {
      d.table.Run(in.data, out.data, begin, end);
    });
    return;
  }
  if (d.use_float8) {
    ParallelElements(ctx, in.NumElements(), [&](int64_t begin, int64_t end) {
      d.float8.Run(in.data_as<float>(), out.data, begin, end);
    });
    return;
  }
  ParallelElements(ctx, in.NumElements(), [&](int64_t begin, int64_t end) {
    void* y = out.data;
    switch (d.in_type) {
      case DataType::kFloat32: {
        const float* x = in.data_as<float>();
        if (d.out_type == DataType::kUInt8)
          RunQuantizeFromFloat(d, x, static_cast<uint8_t*>(y), begin, end);
        else if (d.out_type == DataType::kInt8)
          RunQuantizeFromFloat(d, x, static_cast<int8_t*>(y), begin, end);
        else
          RunQuantizeFromFloat(d, x, static_cast<int16_t*>(y), begin, end);
        break;
      }
      case DataType::kUInt8: RunRequantizeFrom(d, in.data_as<uint8_t>(), y, begin, end); break;
      case DataType::kInt8: RunRequantizeFrom(d, in.data_as<int8_t>(), y, begin, end); break;
      case DataType::kInt16: RunRequantizeFrom(d, in.data_as<int16_t>(), y, begin, end); break;
      case DataType::kInt32: RunRequantizeFrom(d, in.data_as<int32_t>(), y, begin, end); break;
      default: break;
    }
  });
}

void PrepareDequantize(KernelContext& ctx, Node& node) {
  PrepareUnaryShape(ctx, node);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, out.type == DataType::kFloat32, "output (tensor \"", out.name,
                 "\") must be FLOAT32, is ", DataTypeName(out.type));
  DLG_NODE_CHECK(ctx, node,
                 in.type == DataType::kUInt8 || in.type == DataType::kInt8 ||
                     in.type == DataType::kInt16 || in.type == DataType::kFloat16,
                 "dequantizing ", DataTypeName(in.type), " is not supported");
  auto data = std::make_shared<DequantizeData>();
  data->in_type = in.type;
  if (in.type != DataType::kFloat16) {
    if (in.quantization->per_axis()) {
      DLG_NODE_CHECK(ctx, node, in.type != DataType::kInt16,
                     "per-axis dequantization of INT16 is not supported");
      data->per_axis = true;
      data->axis = ReadPerAxisParams(ctx, node, in, "input");
    } else {
      // Like TFLite, missing parameters mean scale 0 (the output is all zeros).
      data->scale = in.scale();
      data->zero_point = in.zero_point();
    }
  }
  node.op_data = std::move(data);
}

void EvalDequantize(KernelContext& ctx, const Node& node) {
  const DequantizeData& d = *node.data<DequantizeData>();
  const Tensor& in = ctx.in(node, 0);
  float* y = ctx.out(node, 0).data_as<float>();
  ParallelElements(ctx, in.NumElements(), [&](int64_t begin, int64_t end) {
    switch (d.in_type) {
      case DataType::kUInt8:
        if (d.per_axis)
          reference::PerAxisDequantize(d.axis.layout, d.axis.scales.data(),
                                       d.axis.zero_points.data(), in.data_as<uint8_t>(), y,
                                       begin, end);
        else
          reference::Dequantize(d.scale, d.zero_point, in.data_as<uint8_t>(), y, begin, end);
        break;
      case DataType::kInt8:
        if (d.per_axis)
          reference::PerAxisDequantize(d.axis.layout, d.axis.scales.data(),
                                       d.axis.zero_points.data(), in.data_as<int8_t>(), y, begin,
                                       end);
        else
          reference::Dequantize(d.scale, d.zero_point, in.data_as<int8_t>(), y, begin, end);
        break;
      case DataType::kInt16:
        reference::Dequantize(d.scale, d.zero_point, in.data_as<int16_t>(), y, begin, end);
        break;
      case DataType::kFloat16:
        reference::DequantizeHalf(in.data_as<uint16_t>(), y, begin, end);
        break;
      default: break;
    }
  });
}

void PrepareCast(KernelContext& ctx, Node& node) {
  PrepareUnaryShape(ctx, node);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, CastSupports(in.type), "casting from ", DataTypeName(in.type),
                 " (tensor \"", in.name, "\") is not supported");
  DLG_NODE_CHECK(ctx, node, CastSupports(out.type), "casting to ", DataTypeName(out.type),
                 " (tensor \"", out.name, "\") is not supported");
  auto data = std::make_shared<CastData>();
  data->from = in.type;
  data->to = out.type;
  node.op_data = std::move(data);
}

void EvalCast(KernelContext& ctx, const Node& node) {
  const CastData& d = *node.data<CastData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  ParallelElements(ctx, in.NumElements(), [&](int64_t begin, int64_t end) {
    CastAny(d.from, d.to, in.data, out.data, begin, end);
  });
}

}  // namespace delegato
