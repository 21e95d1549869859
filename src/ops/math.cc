// Activations and unary math: HARD_SWISH, LEAKY_RELU, PRELU, RELU_N1_TO_1,
// RELU_0_TO_1, GELU, EXP, LOG, RSQRT, SQUARE, ABS, NEG, SIN, COS, FLOOR, SIGN.
// Prepare applies the type and quantization checks of TFLite's kernels and
// precomputes multipliers and lookup tables; Eval calls kernels/reference/math.h.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kernels/fixed_point.h"
#include "kernels/optimized/float_activations.h"
#include "kernels/quantization.h"
#include "kernels/reference/activations.h"
#include "kernels/reference/elementwise.h"
#include "kernels/reference/math.h"
#include "kernels/reference/normalization.h"
#include "ops/kernel.h"

namespace delegato {

namespace {

using reference::UnaryMath;

constexpr int64_t kMinParallelElements = 4096;

template <class Fn>
void ParallelElements(const KernelContext& ctx, int64_t n, const Fn& fn) {
  ParallelRange(ctx, n, fn, kMinParallelElements);
}

template <class P>
P ParamsOrDefault(const Node& node) {
  if (const P* p = std::get_if<P>(&node.def->params)) return *p;
  return P{};
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

struct QuantParams {
  float scale = 0.0f;
  int32_t zero_point = 0;
};

// A single positive finite scale and a zero point inside the type's range.
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

void Multiplier(const KernelContext& ctx, const Node& node, double real, int32_t* multiplier,
                int* shift, const char* what) {
  DLG_NODE_CHECK(ctx, node, std::isfinite(real), what, " ", real,
                 " is not a valid rescaling factor");
  quant::QuantizeMultiplier(real, multiplier, shift);
}

// One input, one output of the same type and dims; returns the input.
const Tensor& PrepareSameShape(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, in.type == out.type, "output (tensor \"", out.name, "\") is ",
                 DataTypeName(out.type), ", input (tensor \"", in.name, "\") is ",
                 DataTypeName(in.type));
  ctx.SetOutputDims(node, 0, in.dims);
  return in;
}

[[noreturn]] void FailType(const KernelContext& ctx, const Node& node, const Tensor& t,
                           const char* supported) {
  ctx.Fail(node, DataTypeName(t.type), " input (tensor \"", t.name,
           "\") is not supported, only ", supported);
}

// ------------------------------------------------------------ one op family per data struct

enum class Kind {
  kHardSwish,
  kLeakyRelu,
  kReluN1To1,
  kRelu0To1,
  kGelu,
  kExp,    // float32 EXP with the vector exp
  kTable,  // 8-bit lookup table (GELU, EXP, LOG)
  kUnary,  // UnaryMath on float / integer values
  kAbsQuantized,
  kRsqrtQuantized,
};

struct MathData {
  Kind kind = Kind::kUnary;
  DataType type = DataType::kFloat32;
  UnaryMath unary = UnaryMath::kExp;
  float alpha = 0.0f;
  bool approximate = false;
  reference::QuantizedHardSwishParams hard_swish;
  reference::QuantizedLeakyReluParams leaky;
  reference::QuantizedReluParams relu;
  reference::QuantizedAbsParams abs;
  reference::QuantizedRsqrtParams rsqrt;
  uint8_t table[256] = {};  // int8 entries stored as bytes
  int16_t table16[513] = {};  // int16 inputs (kTable with type INT16)
  // float32 HARD_SWISH (bit-exact), GELU and EXP in vectors, when the kernel
  // set allows it.
  optimized::Isa isa = optimized::Isa::kScalar;
};

template <class Fn>
void BuildTable(const Tensor& in, const QuantParams& qi, const QuantParams& qo, Fn fn,
                MathData* d) {
  if (in.type == DataType::kUInt8)
    reference::PopulateLookupTable<uint8_t>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, fn,
                                            d->table);
  else
    reference::PopulateLookupTable<int8_t>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, fn,
                                           reinterpret_cast<int8_t*>(d->table));
  d->kind = Kind::kTable;
}

template <class T>
void RunTyped(const MathData& d, const void* x, void* y, int64_t begin, int64_t end) {
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  if constexpr (std::is_same_v<T, float>) {
    switch (d.kind) {
      case Kind::kHardSwish: optimized::FloatHardSwish(d.isa, in, out, begin, end); return;
      case Kind::kLeakyRelu: reference::LeakyReluFloat(d.alpha, in, out, begin, end); return;
      case Kind::kReluN1To1: reference::ReluN1To1Float(in, out, begin, end); return;
      case Kind::kRelu0To1: reference::Relu0To1Float(in, out, begin, end); return;
      case Kind::kGelu: optimized::FloatGelu(d.isa, d.approximate, in, out, begin, end); return;
      case Kind::kExp: optimized::FloatExp(d.isa, in, out, begin, end); return;
      case Kind::kUnary: reference::UnaryMathRange(d.unary, in, out, begin, end); return;
      default: return;
    }
  } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
    reference::UnaryMathRange(d.unary, in, out, begin, end);
  } else {
    switch (d.kind) {
      case Kind::kHardSwish:
        if constexpr (!std::is_same_v<T, int16_t>)
          reference::QuantizedHardSwish(d.hard_swish, in, out, begin, end);
        return;
      case Kind::kLeakyRelu: reference::QuantizedLeakyRelu(d.leaky, in, out, begin, end); return;
      case Kind::kReluN1To1:
      case Kind::kRelu0To1: reference::QuantizedRelu(d.relu, in, out, begin, end); return;
      case Kind::kTable:
        if constexpr (std::is_same_v<T, int16_t>)
          reference::LookupTable16(d.table16, in, out, begin, end);
        else
          reference::LookupTable(reinterpret_cast<const T*>(d.table), in, out, begin, end);
        return;
      case Kind::kAbsQuantized: reference::QuantizedAbs(d.abs, in, out, begin, end); return;
      case Kind::kRsqrtQuantized:
        if constexpr (std::is_same_v<T, int8_t>)
          reference::QuantizedRsqrt(d.rsqrt, reference::InvSqrtMultiplier, in, out, begin, end);
        return;
      case Kind::kUnary: reference::UnaryMathRange(d.unary, in, out, begin, end); return;
      default: return;
    }
  }
}

void EvalMath(KernelContext& ctx, const Node& node) {
  const MathData& d = *node.data<MathData>();
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  const void* x = in.data;
  void* y = out.data;
  ParallelElements(ctx, in.NumElements(), [&](int64_t begin, int64_t end) {
    switch (d.type) {
      case DataType::kFloat32: RunTyped<float>(d, x, y, begin, end); break;
      case DataType::kUInt8: RunTyped<uint8_t>(d, x, y, begin, end); break;
      case DataType::kInt8: RunTyped<int8_t>(d, x, y, begin, end); break;
      case DataType::kInt16: RunTyped<int16_t>(d, x, y, begin, end); break;
      case DataType::kInt32: RunTyped<int32_t>(d, x, y, begin, end); break;
      case DataType::kInt64: RunTyped<int64_t>(d, x, y, begin, end); break;
      default: break;
    }
  });
}

bool IsEightBit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

std::shared_ptr<MathData> NewData(const Tensor& in, Kind kind) {
  auto d = std::make_shared<MathData>();
  d->type = in.type;
  d->kind = kind;
  return d;
}

// RELU_N1_TO_1 / RELU_0_TO_1: float clamps; 8-bit as a requantization and a
// clamp to the bounds quantized on the output scale.
void PrepareClamp(KernelContext& ctx, Node& node, Kind kind, float lower) {
  const Tensor& in = PrepareSameShape(ctx, node);
  const Tensor& out = ctx.output(node, 0);
  auto d = NewData(in, kind);
  if (in.type != DataType::kFloat32) {
    if (!IsEightBit(in.type)) FailType(ctx, node, in, "FLOAT32, UINT8, INT8");
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    reference::QuantizedReluParams& p = d->relu;
    p.input_zero_point = qi.zero_point;
    p.output_zero_point = qo.zero_point;
    Multiplier(ctx, node, qi.scale / qo.scale, &p.output_multiplier, &p.output_shift,
               "input/output scale ratio");
    // zero_point + round(bound / scale) as x86 computes it on extreme scales.
    auto quantize = [&](float bound) {
      return fixed_point::WrappingAdd(
          qo.zero_point, fixed_point::TruncateToInt32(std::round(bound / qo.scale)));
    };
    p.act_min = std::max(TypeMin(in.type), quantize(lower));
    p.act_max = std::min(TypeMax(in.type), quantize(1.0f));
  }
  node.op_data = std::move(d);
}

// EXP, LOG, SQUARE, SIN, COS, FLOOR, RSQRT, NEG, SIGN on unquantized values.
void PrepareUnary(KernelContext& ctx, Node& node, UnaryMath op, bool allow_int32,
                  bool allow_int64, const char* supported) {
  const Tensor& in = PrepareSameShape(ctx, node);
  const bool ok = in.type == DataType::kFloat32 || (allow_int32 && in.type == DataType::kInt32) ||
                  (allow_int64 && in.type == DataType::kInt64);
  if (!ok) FailType(ctx, node, in, supported);
  auto d = NewData(in, Kind::kUnary);
  d->unary = op;
  node.op_data = std::move(d);
}

// EXP, LOG, GELU on 8-bit values: the float function through a 256-entry table.
// INT16 uses TFLite's interpolating 513-entry table, with zero points 0.
template <class Fn>
void PrepareTable(KernelContext& ctx, Node& node, const Tensor& in, Fn fn) {
  const QuantParams qi = PerTensorParams(ctx, node, in, "input");
  const QuantParams qo = PerTensorParams(ctx, node, ctx.output(node, 0), "output");
  auto d = NewData(in, Kind::kTable);
  if (in.type == DataType::kInt16) {
    DLG_NODE_CHECK(ctx, node, qi.zero_point == 0 && qo.zero_point == 0,
                   "INT16 input and output need zero point 0");
    reference::PopulateLookupTable16(qi.scale, qi.zero_point, qo.scale, qo.zero_point, fn,
                                     d->table16);
  } else {
    BuildTable(in, qi, qo, fn, d.get());
  }
  node.op_data = std::move(d);
}

}  // namespace

// ------------------------------------------------------------ HARD_SWISH

void PrepareHardSwish(KernelContext& ctx, Node& node) {
  const Tensor& in = PrepareSameShape(ctx, node);
  const Tensor& out = ctx.output(node, 0);
  auto d = NewData(in, Kind::kHardSwish);
  if (in.type == DataType::kFloat32 && ctx.optimized()) d->isa = optimized::SelectedIsa();
  if (in.type != DataType::kFloat32) {
    if (!IsEightBit(in.type)) FailType(ctx, node, in, "FLOAT32, UINT8, INT8");
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    reference::QuantizedHardSwishParams& p = d->hard_swish;
    p.input_zero_point = qi.zero_point;
    p.output_zero_point = qo.zero_point;
    // Float arithmetic, as TFLite computes these ratios.
    const float hires_input_scale = (1.0f / 128.0f) * qi.scale;
    const float reluish_scale = 3.0f / 32768.0f;
    int32_t multiplier;
    Multiplier(ctx, node, hires_input_scale / qo.scale, &multiplier, &p.output_exponent,
               "output multiplier");
    DLG_NODE_CHECK(ctx, node, p.output_exponent <= 0, "input scale ", qi.scale,
                   " is too large against output scale ", qo.scale,
                   " for the fixed-point hard-swish (input/output ratio must stay below 128)");
    p.output_multiplier = reference::DownScaleMultiplierToInt16(multiplier);
    Multiplier(ctx, node, hires_input_scale / reluish_scale, &multiplier, &p.reluish_exponent,
               "ramp multiplier");
    p.reluish_multiplier = reference::DownScaleMultiplierToInt16(multiplier);
    // The output depends only on the input byte: the optimized set looks it
    // up in a table filled by the reference function itself, so it is
    // bit-exact by construction (about 1 ns per element instead of a dozen
    // fixed-point steps).
    if (ctx.optimized()) {
      for (int32_t i = 0; i < 256; ++i) {
        if (in.type == DataType::kUInt8) {
          d->table[i] = reference::QuantizedHardSwishValue(p, static_cast<uint8_t>(i));
        } else {
          const auto x = static_cast<int8_t>(i - 128);
          d->table[static_cast<uint8_t>(x)] =
              static_cast<uint8_t>(reference::QuantizedHardSwishValue(p, x));
        }
      }
      d->kind = Kind::kTable;
    }
  }
  node.op_data = std::move(d);
}
void EvalHardSwish(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

// ------------------------------------------------------------ LEAKY_RELU

void PrepareLeakyRelu(KernelContext& ctx, Node& node) {
  const Tensor& in = PrepareSameShape(ctx, node);
  const Tensor& out = ctx.output(node, 0);
  auto d = NewData(in, Kind::kLeakyRelu);
  d->alpha = ParamsOrDefault<LeakyReluParams>(node).alpha;
  if (in.type != DataType::kFloat32) {
    if (!IsEightBit(in.type) && in.type != DataType::kInt16)
      FailType(ctx, node, in, "FLOAT32, UINT8, INT8, INT16");
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    if (in.type == DataType::kInt16)
      DLG_NODE_CHECK(ctx, node, qi.zero_point == 0 && qo.zero_point == 0,
                     "INT16 input and output need zero point 0");
    reference::QuantizedLeakyReluParams& p = d->leaky;
    p.input_zero_point = qi.zero_point;
    p.output_zero_point = qo.zero_point;
    Multiplier(ctx, node, qi.scale * d->alpha / qo.scale, &p.alpha_multiplier, &p.alpha_shift,
               "alpha multiplier");
    // A negative alpha is applied by magnitude; -2^31 has none in 32 bits.
    DLG_NODE_CHECK(ctx, node, p.alpha_multiplier != std::numeric_limits<int32_t>::min(),
                   "alpha ", d->alpha, " rounds to a multiplier of -1, not representable");
    Multiplier(ctx, node, qi.scale / qo.scale, &p.identity_multiplier, &p.identity_shift,
               "input/output scale ratio");
  }
  node.op_data = std::move(d);
}
void EvalLeakyRelu(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

// ------------------------------------------------------------ PRELU

namespace {
struct PreluData {
  DataType type = DataType::kFloat32;
  reference::BroadcastPlan plan;
  reference::QuantizedPreluParams q;
};
}  // namespace

void PreparePrelu(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& alpha = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, in.type == alpha.type, "alpha (tensor \"", alpha.name, "\") is ",
                 DataTypeName(alpha.type), ", input (tensor \"", in.name, "\") is ",
                 DataTypeName(in.type));
  DLG_NODE_CHECK(ctx, node, out.type == in.type, "output (tensor \"", out.name, "\") is ",
                 DataTypeName(out.type), ", input is ", DataTypeName(in.type));
  if (in.type != DataType::kFloat32 && !IsEightBit(in.type))
    FailType(ctx, node, in, "FLOAT32, UINT8, INT8");
  std::vector<int32_t> out_dims;
  DLG_NODE_CHECK(ctx, node, reference::BroadcastShapes(in.dims, alpha.dims, &out_dims),
                 "alpha (tensor \"", alpha.name, "\") does not broadcast against the input");
  DLG_NODE_CHECK(ctx, node, out_dims == in.dims, "alpha (tensor \"", alpha.name,
                 "\") would broadcast the output beyond the input's shape");
  // TFLite's broadcasting PRELU kernels stop at four dimensions.
  DLG_NODE_CHECK(ctx, node, in.dims == alpha.dims || in.rank() <= 4,
                 "broadcasting alpha over an input of rank ", in.rank(),
                 " is not supported (at most 4)");
  ctx.SetOutputDims(node, 0, out_dims);
  auto d = std::make_shared<PreluData>();
  d->type = in.type;
  d->plan = reference::MakeBroadcastPlan(in.dims, alpha.dims, out_dims);
  if (in.type != DataType::kFloat32) {
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qa = PerTensorParams(ctx, node, alpha, "alpha");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    reference::QuantizedPreluParams& p = d->q;
    p.input_offset = -qi.zero_point;
    p.alpha_offset = -qa.zero_point;
    p.output_offset = qo.zero_point;
    Multiplier(ctx, node, qi.scale / qo.scale, &p.positive_multiplier, &p.positive_shift,
               "input/output scale ratio");
    Multiplier(ctx, node, qi.scale * qa.scale / qo.scale, &p.negative_multiplier,
               &p.negative_shift, "alpha multiplier");
  }
  node.op_data = std::move(d);
}

void EvalPrelu(KernelContext& ctx, const Node& node) {
  const PreluData& d = *node.data<PreluData>();
  const Tensor& in = ctx.in(node, 0);
  const Tensor& alpha = ctx.in(node, 1);
  Tensor& out = ctx.out(node, 0);
  ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
    switch (d.type) {
      case DataType::kFloat32:
        reference::PreluFloat(d.plan, in.data_as<float>(), alpha.data_as<float>(),
                              out.data_as<float>(), begin, end);
        break;
      case DataType::kUInt8:
        reference::QuantizedPrelu(d.q, d.plan, in.data_as<uint8_t>(), alpha.data_as<uint8_t>(),
                                  out.data_as<uint8_t>(), begin, end);
        break;
      case DataType::kInt8:
        reference::QuantizedPrelu(d.q, d.plan, in.data_as<int8_t>(), alpha.data_as<int8_t>(),
                                  out.data_as<int8_t>(), begin, end);
        break;
      default: break;
    }
  });
}

// ------------------------------------------------------------ clamps

void PrepareReluN1To1(KernelContext& ctx, Node& node) {
  PrepareClamp(ctx, node, Kind::kReluN1To1, -1.0f);
}
void EvalReluN1To1(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }
void PrepareRelu0To1(KernelContext& ctx, Node& node) {
  PrepareClamp(ctx, node, Kind::kRelu0To1, 0.0f);
}
void EvalRelu0To1(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

// ------------------------------------------------------------ GELU

void PrepareGelu(KernelContext& ctx, Node& node) {
  const Tensor& in = PrepareSameShape(ctx, node);
  const bool approximate = ParamsOrDefault<GeluParams>(node).approximate;
  if (in.type == DataType::kFloat32) {
    auto d = NewData(in, Kind::kGelu);
    d->approximate = approximate;
    // The vector GELU differs from the reference by rounding; scalar runs it.
    if (ctx.optimized() && optimized::HasFloatLogistic(optimized::SelectedIsa()))
      d->isa = optimized::SelectedIsa();
    node.op_data = std::move(d);
    return;
  }
  if (!IsEightBit(in.type)) FailType(ctx, node, in, "FLOAT32, UINT8, INT8");
  if (approximate)
    PrepareTable(ctx, node, in, reference::GeluApproximateValue);
  else
    PrepareTable(ctx, node, in, reference::GeluValue);
}
void EvalGelu(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

// ------------------------------------------------------------ EXP, LOG

void PrepareExp(KernelContext& ctx, Node& node) {
  const Tensor& in = ctx.input(node, 0);
  if (in.type == DataType::kInt8 || in.type == DataType::kInt16) {
    PrepareSameShape(ctx, node);
    PrepareTable(ctx, node, in, [](float v) { return std::exp(v); });
    return;
  }
  PrepareUnary(ctx, node, UnaryMath::kExp, false, false, "FLOAT32, INT8, INT16");
  // The vector exp differs from std::exp by rounding; the reference set keeps std::exp.
  if (ctx.optimized() && optimized::HasFloatLogistic(optimized::SelectedIsa())) {
    MathData& d = *node.data<MathData>();
    d.kind = Kind::kExp;
    d.isa = optimized::SelectedIsa();
  }
}
void EvalExp(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

void PrepareLog(KernelContext& ctx, Node& node) {
  const Tensor& in = ctx.input(node, 0);
  if (in.type == DataType::kInt8 || in.type == DataType::kInt16) {
    PrepareSameShape(ctx, node);
    const Tensor& out = ctx.output(node, 0);
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    // Non-positive inputs give the lowest representable output.
    const int32_t lowest = in.type == DataType::kInt8 ? -128 : -32768;
    const float output_min = static_cast<float>(lowest - qo.zero_point) * qo.scale;
    PrepareTable(ctx, node, in,
                 [output_min](float v) { return v <= 0.0f ? output_min : std::log(v); });
    return;
  }
  PrepareUnary(ctx, node, UnaryMath::kLog, false, false, "FLOAT32, INT8, INT16");
}
void EvalLog(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

// ------------------------------------------------------------ float-only and integer math

// RSQRT: float; int8 in fixed point (inputs below the zero point, i.e.
// negative values, stop Eval with an error as in TFLite).
void PrepareRsqrt(KernelContext& ctx, Node& node) {
  const Tensor& in = ctx.input(node, 0);
  if (in.type == DataType::kInt16) {
    PrepareSameShape(ctx, node);
    const float output_scale = PerTensorParams(ctx, node, ctx.output(node, 0), "output").scale;
    // Non-positive inputs (only 0 passes Eval's check) give the largest output.
    PrepareTable(ctx, node, in, [output_scale](float v) {
      return v <= 0.0f ? 32767 * output_scale : 1.0f / std::sqrt(v);
    });
    return;
  }
  if (in.type != DataType::kInt8) {
    PrepareUnary(ctx, node, UnaryMath::kRsqrt, false, false, "FLOAT32, INT8, INT16");
    return;
  }
  PrepareSameShape(ctx, node);
  const QuantParams qi = PerTensorParams(ctx, node, in, "input");
  const QuantParams qo = PerTensorParams(ctx, node, ctx.output(node, 0), "output");
  auto d = NewData(in, Kind::kRsqrtQuantized);
  reference::QuantizedRsqrtParams& p = d->rsqrt;
  p.input_zero_point = qi.zero_point;
  p.output_zero_point = qo.zero_point;
  Multiplier(ctx, node, 1.0 / (std::sqrt(qi.scale) * qo.scale), &p.multiplier, &p.shift,
             "output multiplier");
  node.op_data = std::move(d);
}
void EvalRsqrt(KernelContext& ctx, const Node& node) {
  const MathData& d = *node.data<MathData>();
  const Tensor& in = ctx.in(node, 0);
  auto has_negative = [&](auto* x, int32_t zero_point) {
    for (int64_t i = 0, n = in.NumElements(); i < n; ++i)
      if (x[i] < zero_point) return true;
    return false;
  };
  if ((d.kind == Kind::kRsqrtQuantized &&
       has_negative(in.data_as<int8_t>(), d.rsqrt.input_zero_point)) ||
      (d.type == DataType::kInt16 && has_negative(in.data_as<int16_t>(), 0))) {
    ctx.SetEvalError(node, "RSQRT of a negative value (input below its zero point)");
    return;
  }
  EvalMath(ctx, node);
}
void PrepareSquare(KernelContext& ctx, Node& node) {
  PrepareUnary(ctx, node, UnaryMath::kSquare, false, false, "FLOAT32");
}
void EvalSquare(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }
void PrepareSin(KernelContext& ctx, Node& node) {
  PrepareUnary(ctx, node, UnaryMath::kSin, false, false, "FLOAT32");
}
void EvalSin(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }
void PrepareCos(KernelContext& ctx, Node& node) {
  PrepareUnary(ctx, node, UnaryMath::kCos, false, false, "FLOAT32");
}
void EvalCos(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }
void PrepareFloor(KernelContext& ctx, Node& node) {
  PrepareUnary(ctx, node, UnaryMath::kFloor, false, false, "FLOAT32");
}
void EvalFloor(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }
void PrepareNeg(KernelContext& ctx, Node& node) {
  PrepareUnary(ctx, node, UnaryMath::kNeg, true, true, "FLOAT32, INT32, INT64");
}
void EvalNeg(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }
void PrepareSign(KernelContext& ctx, Node& node) {
  PrepareUnary(ctx, node, UnaryMath::kSign, true, false, "FLOAT32, INT32");
}
void EvalSign(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

// ABS: float and int32 directly; int8 and quantized int16 on the quantized
// values (rescaled when the scales differ); unquantized int16 directly.
void PrepareAbs(KernelContext& ctx, Node& node) {
  const Tensor& in = PrepareSameShape(ctx, node);
  const Tensor& out = ctx.output(node, 0);
  auto d = NewData(in, Kind::kUnary);
  d->unary = UnaryMath::kAbs;
  const bool quantized = in.type == DataType::kInt8 ||
                         (in.type == DataType::kInt16 && !in.quantization->empty());
  if (quantized) {
    const QuantParams qi = PerTensorParams(ctx, node, in, "input");
    const QuantParams qo = PerTensorParams(ctx, node, out, "output");
    if (in.type == DataType::kInt16)
      DLG_NODE_CHECK(ctx, node, qi.zero_point == 0 && qo.zero_point == 0,
                     "INT16 input and output need zero point 0");
    d->kind = Kind::kAbsQuantized;
    reference::QuantizedAbsParams& p = d->abs;
    p.input_zero_point = qi.zero_point;
    p.output_zero_point = qo.zero_point;
    p.rescale = qi.scale != qo.scale;
    if (p.rescale)
      Multiplier(ctx, node, qi.scale / qo.scale, &p.multiplier, &p.shift,
                 "input/output scale ratio");
  } else if (in.type != DataType::kFloat32 && in.type != DataType::kInt32 &&
             in.type != DataType::kInt16) {
    FailType(ctx, node, in, "FLOAT32, INT8, INT16, INT32");
  }
  node.op_data = std::move(d);
}
void EvalAbs(KernelContext& ctx, const Node& node) { EvalMath(ctx, node); }

}  // namespace delegato
