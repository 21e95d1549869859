// Binary math and logic with broadcasting: EQUAL, NOT_EQUAL, LESS,
// LESS_EQUAL, GREATER, GREATER_EQUAL, MINIMUM, MAXIMUM, SQUARED_DIFFERENCE,
// POW, FLOOR_MOD, LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT, SELECT, SELECT_V2,
// RIGHT_SHIFT, BITWISE_XOR, ATAN2, ADD_N.
// Prepare applies TFLite's type rules and precomputes the broadcast walk and
// quantized rescaling; Eval calls kernels/reference/compare.h (int8
// SQUARED_DIFFERENCE: kernels/optimized/squared_difference8.h, float32
// SQUARED_DIFFERENCE: kernels/optimized/float_binary.h, with the optimized
// kernel set).
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/optimized/float_binary.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/squared_difference8.h"
#include "kernels/quantization.h"
#include "kernels/reference/compare.h"
#include "kernels/reference/elementwise.h"
#include "ops/kernel.h"

namespace delegato {

namespace {

using reference::CompareOp;

constexpr int64_t kMinParallelElements = 4096;

template <class Fn>
void ParallelElements(const KernelContext& ctx, int64_t n, const Fn& fn) {
  ParallelRange(ctx, n, fn, kMinParallelElements);
}

std::string DimsText(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

bool HasQuantization(const Tensor& t) { return !t.quantization->scale.empty(); }

struct QuantParams {
  float scale = 0.0f;
  int32_t zero_point = 0;
};

QuantParams PerTensorParams(const KernelContext& ctx, const Node& node, const Tensor& t,
                            const char* role, int32_t type_min, int32_t type_max) {
  const Quantization& q = *t.quantization;
  DLG_NODE_CHECK(ctx, node, q.scale.size() == 1, role, " (tensor \"", t.name, "\", ",
                 DataTypeName(t.type), ") must be quantized per tensor, has ", q.scale.size(),
                 " scales");
  DLG_NODE_CHECK(ctx, node, std::isfinite(q.scale[0]) && q.scale[0] > 0.0f, role, " (tensor \"",
                 t.name, "\") has invalid scale ", q.scale[0]);
  const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[0];
  DLG_NODE_CHECK(ctx, node, zp >= type_min && zp <= type_max, role, " (tensor \"", t.name,
                 "\") has zero point ", zp, " outside the range of ", DataTypeName(t.type));
  return QuantParams{q.scale[0], static_cast<int32_t>(zp)};
}

int32_t TypeMin(DataType t) {
  return t == DataType::kUInt8 ? 0 : t == DataType::kInt8 ? -128 : -32768;
}
int32_t TypeMax(DataType t) {
  return t == DataType::kUInt8 ? 255 : t == DataType::kInt8 ? 127 : 32767;
}

// A multiplier TFLite's QuantizeMultiplierSmallerThanOneExp accepts: (0, 1).
void MultiplierBelowOne(const KernelContext& ctx, const Node& node, double real,
                        int32_t* multiplier, int* shift, const char* what) {
  DLG_NODE_CHECK(ctx, node, real > 0.0 && real < 1.0, what, " ", real,
                 " must lie in (0, 1) for this op's fixed-point scheme (check the scales)");
  quant::QuantizeMultiplier(real, multiplier, shift);
}

// Two inputs of one type broadcast together; returns the output dims.
std::vector<int32_t> PrepareBroadcastPair(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& a = ctx.input(node, 0);
  const Tensor& b = ctx.input(node, 1);
  ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, a.type == b.type, "input types differ: tensor \"", a.name, "\" is ",
                 DataTypeName(a.type), ", tensor \"", b.name, "\" is ", DataTypeName(b.type));
  std::vector<int32_t> out_dims;
  DLG_NODE_CHECK(ctx, node, reference::BroadcastShapes(a.dims, b.dims, &out_dims),
                 "cannot broadcast input shapes ", DimsText(a.dims), " (tensor \"", a.name,
                 "\") and ", DimsText(b.dims), " (tensor \"", b.name, "\")");
  ctx.SetOutputDims(node, 0, out_dims);
  return out_dims;
}

void CheckOutputType(const KernelContext& ctx, const Node& node, DataType expected) {
  const Tensor& out = ctx.tensor(node.outputs[0]);
  DLG_NODE_CHECK(ctx, node, out.type == expected, "output (tensor \"", out.name, "\") is ",
                 DataTypeName(out.type), ", expected ", DataTypeName(expected));
}

[[noreturn]] void FailType(const KernelContext& ctx, const Node& node, const Tensor& t,
                           const char* supported) {
  ctx.Fail(node, DataTypeName(t.type), " inputs (tensor \"", t.name,
           "\") are not supported, only ", supported);
}

// ------------------------------------------------------------ comparisons

struct CompareData {
  CompareOp op = CompareOp::kEqual;
  DataType type = DataType::kFloat32;
  bool quantized = false;
  reference::BroadcastPlan plan;
  reference::QuantizedCompareParams q;
};

void PrepareCompare(KernelContext& ctx, Node& node, CompareOp op) {
  const std::vector<int32_t> out_dims = PrepareBroadcastPair(ctx, node);
  const Tensor& a = ctx.input(node, 0);
  const Tensor& b = ctx.input(node, 1);
  CheckOutputType(ctx, node, DataType::kBool);
  const bool equality = op == CompareOp::kEqual || op == CompareOp::kNotEqual;
  auto d = std::make_shared<CompareData>();
  d->op = op;
  d->type = a.type;
  d->plan = reference::MakeBroadcastPlan(a.dims, b.dims, out_dims);
  switch (a.type) {
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kInt64: break;
    case DataType::kBool:
      if (!equality) FailType(ctx, node, a, "FLOAT32, INT16, INT32, INT64, UINT8, INT8");
      break;
    case DataType::kUInt8:
    case DataType::kInt8: d->quantized = true; break;
    case DataType::kInt16:
      // Ordering ops compare raw INT16 values; equality rescales quantized ones
      // (and TFLite's NOT_EQUAL leaves unquantized INT16 undefined).
      if (equality) {
        d->quantized = HasQuantization(a);
        DLG_NODE_CHECK(ctx, node, d->quantized || op == CompareOp::kEqual,
                       "unquantized INT16 inputs are not supported");
      }
      break;
    default:
      FailType(ctx, node, a,
               equality ? "BOOL, FLOAT32, INT16, INT32, INT64, UINT8, INT8"
                        : "FLOAT32, INT16, INT32, INT64, UINT8, INT8");
  }
  if (d->quantized) {
    const int32_t lo = TypeMin(a.type), hi = TypeMax(a.type);
    const QuantParams q1 = PerTensorParams(ctx, node, a, "input 1", lo, hi);
    const QuantParams q2 = PerTensorParams(ctx, node, b, "input 2", lo, hi);
    d->q.input1_offset = -q1.zero_point;
    d->q.input2_offset = -q2.zero_point;
    MultiplierBelowOne(ctx, node, q1.scale, &d->q.input1_multiplier, &d->q.input1_shift,
                       "input 1 scale");
    MultiplierBelowOne(ctx, node, q2.scale, &d->q.input2_multiplier, &d->q.input2_shift,
                       "input 2 scale");
  }
  node.op_data = std::move(d);
}

template <class T>
void RunCompare(const CompareData& d, const void* a, const void* b, bool* out, int64_t begin,
                int64_t end) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> ||
                std::is_same_v<T, int16_t>) {
    if (d.quantized) {
      reference::QuantizedCompare(d.op, d.q, d.plan, pa, pb, out, begin, end);
      return;
    }
  }
  reference::Compare(d.op, d.plan, pa, pb, out, begin, end);
}

void EvalCompare(KernelContext& ctx, const Node& node) {
  const CompareData& d = *node.data<CompareData>();
  const void* a = ctx.in(node, 0).data;
  const void* b = ctx.in(node, 1).data;
  bool* out = ctx.out(node, 0).data_as<bool>();
  ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
    switch (d.type) {
      case DataType::kFloat32: RunCompare<float>(d, a, b, out, begin, end); break;
      case DataType::kInt32: RunCompare<int32_t>(d, a, b, out, begin, end); break;
      case DataType::kInt64: RunCompare<int64_t>(d, a, b, out, begin, end); break;
      case DataType::kBool: RunCompare<bool>(d, a, b, out, begin, end); break;
      case DataType::kUInt8: RunCompare<uint8_t>(d, a, b, out, begin, end); break;
      case DataType::kInt8: RunCompare<int8_t>(d, a, b, out, begin, end); break;
      case DataType::kInt16: RunCompare<int16_t>(d, a, b, out, begin, end); break;
      default: break;
    }
  });
}

// ------------------------------------------------------------ arithmetic

enum class Arith {
  kMinimum,
  kMaximum,
  kSquaredDifference,
  kPow,
  kFloorMod,
  kRightShift,
  kBitwiseXor,
};

struct ArithData {
  Arith op = Arith::kMinimum;
  DataType type = DataType::kFloat32;
  reference::BroadcastPlan plan;
  bool quantized = false;  // int8 SQUARED_DIFFERENCE
  reference::QuantizedSquaredDifferenceParams sq;
  std::optional<optimized::QuantSquaredDifference8> fast_sq;
  bool check_divisor = false;  // integer FLOOR_MOD
  // float32 SQUARED_DIFFERENCE in vectors (optimized::FloatBinary); the same
  // IEEE subtract and multiply as the reference.
  bool fast_float = false;
  optimized::Isa isa = optimized::Isa::kScalar;
};

void PrepareArith(KernelContext& ctx, Node& node, Arith op) {
  const std::vector<int32_t> out_dims = PrepareBroadcastPair(ctx, node);
  const Tensor& a = ctx.input(node, 0);
  const Tensor& b = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  CheckOutputType(ctx, node, a.type);
  auto d = std::make_shared<ArithData>();
  d->op = op;
  d->type = a.type;
  d->plan = reference::MakeBroadcastPlan(a.dims, b.dims, out_dims);
  const DataType t = a.type;
  switch (op) {
    case Arith::kMinimum:
    case Arith::kMaximum:
      if (t != DataType::kFloat32 && t != DataType::kUInt8 && t != DataType::kInt8 &&
          t != DataType::kInt16 && t != DataType::kInt32 && t != DataType::kInt64)
        FailType(ctx, node, a, "FLOAT32, UINT8, INT8, INT16, INT32, INT64");
      break;
    case Arith::kSquaredDifference:
      if (t == DataType::kInt8) {
        d->quantized = true;
        const QuantParams q1 = PerTensorParams(ctx, node, a, "input 1", -128, 127);
        const QuantParams q2 = PerTensorParams(ctx, node, b, "input 2", -128, 127);
        const QuantParams qo = PerTensorParams(ctx, node, out, "output", -128, 127);
        reference::QuantizedSquaredDifferenceParams& p = d->sq;
        p.input1_offset = -q1.zero_point;
        p.input2_offset = -q2.zero_point;
        p.output_offset = qo.zero_point;
        const double twice_max = 2 * std::max(q1.scale, q2.scale);
        MultiplierBelowOne(ctx, node, q1.scale / twice_max, &p.input1_multiplier,
                           &p.input1_shift, "input 1 rescale");
        MultiplierBelowOne(ctx, node, q2.scale / twice_max, &p.input2_multiplier,
                           &p.input2_shift, "input 2 rescale");
        MultiplierBelowOne(ctx, node, twice_max * twice_max / ((1 << 14) * qo.scale),
                           &p.output_multiplier, &p.output_shift, "output rescale");
        if (ctx.optimized()) d->fast_sq.emplace(p, optimized::SelectedIsa());
      } else if (t != DataType::kFloat32 && t != DataType::kInt32) {
        FailType(ctx, node, a, "FLOAT32, INT32, INT8");
      } else if (t == DataType::kFloat32 && ctx.optimized()) {
        d->isa = optimized::SelectedIsa();
        d->fast_float = optimized::HasFloatBinary(d->isa);
      }
      break;
    case Arith::kPow:
      if (t != DataType::kFloat32 && t != DataType::kInt32)
        FailType(ctx, node, a, "FLOAT32, INT32");
      break;
    case Arith::kFloorMod:
      if (t != DataType::kFloat32 && t != DataType::kInt8 && t != DataType::kInt16 &&
          t != DataType::kInt32 && t != DataType::kInt64)
        FailType(ctx, node, a, "FLOAT32, INT8, INT16, INT32, INT64");
      d->check_divisor = t != DataType::kFloat32;
      break;
    case Arith::kRightShift:
    case Arith::kBitwiseXor:
      if (t != DataType::kInt8 && t != DataType::kUInt8 && t != DataType::kInt16 &&
          t != DataType::kUInt16 && t != DataType::kInt32 && t != DataType::kUInt32)
        FailType(ctx, node, a, "INT8, UINT8, INT16, UINT16, INT32, UINT32");
      break;
  }
  node.op_data = std::move(d);
}

template <class T>
bool HasZero(const Tensor& t) {
  return reference::ContainsValue(t.data_as<T>(), t.NumElements(), T{0});
}

template <class T>
void RunArith(const ArithData& d, const void* a, const void* b, void* y, int64_t begin,
              int64_t end) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* out = static_cast<T*>(y);
  switch (d.op) {
    case Arith::kMinimum: reference::Minimum(d.plan, pa, pb, out, begin, end); return;
    case Arith::kMaximum: reference::Maximum(d.plan, pa, pb, out, begin, end); return;
    case Arith::kSquaredDifference:
      if constexpr (std::is_same_v<T, int8_t>) {
        if (d.fast_sq)
          d.fast_sq->Run(d.plan, pa, pb, out, begin, end);
        else
          reference::QuantizedSquaredDifference(d.sq, d.plan, pa, pb, out, begin, end);
      }
      else if constexpr (std::is_same_v<T, float>) {
        if (d.fast_float) {
          // The widest range: the clamp leaves every value (inf, NaN) as it is.
          constexpr float kInf = std::numeric_limits<float>::infinity();
          optimized::FloatBinary(d.isa, reference::BinaryOp::kSquaredDifference, d.plan, pa, pb,
                                 out, -kInf, kInf, begin, end);
        } else {
          reference::SquaredDifference(d.plan, pa, pb, out, begin, end);
        }
      } else {
        reference::SquaredDifference(d.plan, pa, pb, out, begin, end);
      }
      return;
    case Arith::kPow:
      if constexpr (std::is_same_v<T, float>) reference::PowFloat(d.plan, pa, pb, out, begin, end);
      if constexpr (std::is_same_v<T, int32_t>)
        reference::PowInt32(d.plan, pa, pb, out, begin, end);
      return;
    case Arith::kFloorMod:
      if constexpr (!std::is_same_v<T, uint8_t> && !std::is_same_v<T, uint16_t> &&
                    !std::is_same_v<T, uint32_t>)
        reference::FloorModBroadcast(d.plan, pa, pb, out, begin, end);
      return;
    case Arith::kRightShift:
      if constexpr (std::is_integral_v<T>)
        reference::RightShiftBroadcast(d.plan, pa, pb, out, begin, end);
      return;
    case Arith::kBitwiseXor:
      if constexpr (std::is_integral_v<T>) reference::BitwiseXor(d.plan, pa, pb, out, begin, end);
      return;
  }
}

void EvalArith(KernelContext& ctx, const Node& node) {
  const ArithData& d = *node.data<ArithData>();
  const Tensor& a = ctx.in(node, 0);
  const Tensor& b = ctx.in(node, 1);
  void* y = ctx.out(node, 0).data;
  if (d.check_divisor) {
    bool zero = false;
    switch (d.type) {
      case DataType::kInt8: zero = HasZero<int8_t>(b); break;
      case DataType::kInt16: zero = HasZero<int16_t>(b); break;
      case DataType::kInt32: zero = HasZero<int32_t>(b); break;
      case DataType::kInt64: zero = HasZero<int64_t>(b); break;
      default: break;
    }
    if (zero) {
      ctx.SetEvalError(node, "division by zero: the divisor (input 2) holds a zero");
      return;
    }
  }
  if (d.op == Arith::kPow && d.type == DataType::kInt32) {
    const int32_t* e = b.data_as<int32_t>();
    for (int64_t i = 0, n = b.NumElements(); i < n; ++i) {
      if (e[i] < 0) {
        ctx.SetEvalError(node, "integer POW needs non-negative exponents (input 2)");
        return;
      }
    }
  }
  ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
    switch (d.type) {
      case DataType::kFloat32: RunArith<float>(d, a.data, b.data, y, begin, end); break;
      case DataType::kUInt8: RunArith<uint8_t>(d, a.data, b.data, y, begin, end); break;
      case DataType::kInt8: RunArith<int8_t>(d, a.data, b.data, y, begin, end); break;
      case DataType::kInt16: RunArith<int16_t>(d, a.data, b.data, y, begin, end); break;
      case DataType::kInt32: RunArith<int32_t>(d, a.data, b.data, y, begin, end); break;
      case DataType::kInt64: RunArith<int64_t>(d, a.data, b.data, y, begin, end); break;
      case DataType::kUInt16: RunArith<uint16_t>(d, a.data, b.data, y, begin, end); break;
      case DataType::kUInt32: RunArith<uint32_t>(d, a.data, b.data, y, begin, end); break;
      default: break;
    }
  });
}

// ------------------------------------------------------------ logic

struct LogicData {
  bool is_and = true;
  reference::BroadcastPlan plan;
};

void PrepareLogical(KernelContext& ctx, Node& node, bool is_and) {
  const std::vector<int32_t> out_dims = PrepareBroadcastPair(ctx, node);
  const Tensor& a = ctx.input(node, 0);
  if (a.type != DataType::kBool) FailType(ctx, node, a, "BOOL");
  CheckOutputType(ctx, node, DataType::kBool);
  auto d = std::make_shared<LogicData>();
  d->is_and = is_and;
  d->plan = reference::MakeBroadcastPlan(a.dims, ctx.input(node, 1).dims, out_dims);
  node.op_data = std::move(d);
}

void EvalLogical(KernelContext& ctx, const Node& node) {
  const LogicData& d = *node.data<LogicData>();
  const bool* a = ctx.in(node, 0).data_as<bool>();
  const bool* b = ctx.in(node, 1).data_as<bool>();
  bool* out = ctx.out(node, 0).data_as<bool>();
  ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
    if (d.is_and)
      reference::LogicalAnd(d.plan, a, b, out, begin, end);
    else
      reference::LogicalOr(d.plan, a, b, out, begin, end);
  });
}

// ------------------------------------------------------------ select

struct SelectData {
  DataType type = DataType::kFloat32;
  reference::Broadcast3Plan plan;
};

void PrepareSelectCommon(KernelContext& ctx, Node& node, bool v2) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& cond = ctx.input(node, 0);
  const Tensor& x = ctx.input(node, 1);
  const Tensor& y = ctx.input(node, 2);
  ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, cond.type == DataType::kBool, "condition (tensor \"", cond.name,
                 "\") must be BOOL, is ", DataTypeName(cond.type));
  DLG_NODE_CHECK(ctx, node, x.type == y.type, "input types differ: tensor \"", x.name, "\" is ",
                 DataTypeName(x.type), ", tensor \"", y.name, "\" is ", DataTypeName(y.type));
  switch (x.type) {
    case DataType::kBool:
    case DataType::kFloat32:
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64: break;
    default: FailType(ctx, node, x, "BOOL, FLOAT32, UINT8, INT8, INT16, INT32, INT64");
  }
  CheckOutputType(ctx, node, x.type);
  std::vector<int32_t> cond_dims = cond.dims;
  std::vector<int32_t> out_dims;
  if (!v2) {
    // SELECT: condition of x's shape, a scalar, or a vector over x's first dimension.
    DLG_NODE_CHECK(ctx, node, x.dims == y.dims, "x (tensor \"", x.name, "\") ", DimsText(x.dims),
                   " and y (tensor \"", y.name, "\") ", DimsText(y.dims), " must have one shape");
    const bool rank_one = cond.rank() == 1 && x.rank() >= 1 && cond.dims[0] == x.dims[0];
    DLG_NODE_CHECK(ctx, node, cond.dims == x.dims || cond.rank() == 0 || rank_one,
                   "condition shape ", DimsText(cond.dims), " must equal x's ", DimsText(x.dims),
                   ", be a scalar, or a vector over x's first dimension");
    if (rank_one && cond.dims != x.dims) {
      cond_dims.assign(x.dims.size(), 1);
      cond_dims[0] = cond.dims[0];
    }
    out_dims = x.dims;
  } else {
    std::vector<int32_t> partial;
    const bool ok = reference::BroadcastShapes(cond.dims, x.dims, &partial) &&
                    reference::BroadcastShapes(partial, y.dims, &out_dims);
    DLG_NODE_CHECK(ctx, node, ok, "cannot broadcast condition ", DimsText(cond.dims), ", x ",
                   DimsText(x.dims), " and y ", DimsText(y.dims));
  }
  ctx.SetOutputDims(node, 0, out_dims);
  auto d = std::make_shared<SelectData>();
  d->type = x.type;
  const std::vector<int32_t>* inputs[3] = {&cond_dims, &x.dims, &y.dims};
  d->plan = reference::MakeBroadcast3Plan(inputs, out_dims);
  node.op_data = std::move(d);
}

template <class T>
void RunSelect(const SelectData& d, const bool* c, const void* x, const void* y, void* out,
               int64_t begin, int64_t end) {
  reference::Select(d.plan, c, static_cast<const T*>(x), static_cast<const T*>(y),
                    static_cast<T*>(out), begin, end);
}

void EvalSelectCommon(KernelContext& ctx, const Node& node) {
  const SelectData& d = *node.data<SelectData>();
  const bool* c = ctx.in(node, 0).data_as<bool>();
  const void* x = ctx.in(node, 1).data;
  const void* y = ctx.in(node, 2).data;
  void* out = ctx.out(node, 0).data;
  ParallelElements(ctx, d.plan.num_elements, [&](int64_t begin, int64_t end) {
    switch (d.type) {
      case DataType::kBool: RunSelect<bool>(d, c, x, y, out, begin, end); break;
      case DataType::kFloat32: RunSelect<float>(d, c, x, y, out, begin, end); break;
      case DataType::kUInt8: RunSelect<uint8_t>(d, c, x, y, out, begin, end); break;
      case DataType::kInt8: RunSelect<int8_t>(d, c, x, y, out, begin, end); break;
      case DataType::kInt16: RunSelect<int16_t>(d, c, x, y, out, begin, end); break;
      case DataType::kInt32: RunSelect<int32_t>(d, c, x, y, out, begin, end); break;
      case DataType::kInt64: RunSelect<int64_t>(d, c, x, y, out, begin, end); break;
      default: break;
    }
  });
}

}  // namespace

#define DLG_COMPARE_OP(Name, op)                                                       \
  void Prepare##Name(KernelContext& ctx, Node& node) { PrepareCompare(ctx, node, op); } \
  void Eval##Name(KernelContext& ctx, const Node& node) { EvalCompare(ctx, node); }
DLG_COMPARE_OP(Equal, CompareOp::kEqual)
DLG_COMPARE_OP(NotEqual, CompareOp::kNotEqual)
DLG_COMPARE_OP(Less, CompareOp::kLess)
DLG_COMPARE_OP(LessEqual, CompareOp::kLessEqual)
DLG_COMPARE_OP(Greater, CompareOp::kGreater)
DLG_COMPARE_OP(GreaterEqual, CompareOp::kGreaterEqual)
#undef DLG_COMPARE_OP

#define DLG_ARITH_OP(Name, op)                                                       \
  void Prepare##Name(KernelContext& ctx, Node& node) { PrepareArith(ctx, node, op); } \
  void Eval##Name(KernelContext& ctx, const Node& node) { EvalArith(ctx, node); }
DLG_ARITH_OP(Minimum, Arith::kMinimum)
DLG_ARITH_OP(Maximum, Arith::kMaximum)
DLG_ARITH_OP(SquaredDifference, Arith::kSquaredDifference)
DLG_ARITH_OP(Pow, Arith::kPow)
DLG_ARITH_OP(FloorMod, Arith::kFloorMod)
DLG_ARITH_OP(RightShift, Arith::kRightShift)
DLG_ARITH_OP(BitwiseXor, Arith::kBitwiseXor)
#undef DLG_ARITH_OP

void PrepareLogicalAnd(KernelContext& ctx, Node& node) { PrepareLogical(ctx, node, true); }
void EvalLogicalAnd(KernelContext& ctx, const Node& node) { EvalLogical(ctx, node); }
void PrepareLogicalOr(KernelContext& ctx, Node& node) { PrepareLogical(ctx, node, false); }
void EvalLogicalOr(KernelContext& ctx, const Node& node) { EvalLogical(ctx, node); }

void PrepareLogicalNot(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  if (in.type != DataType::kBool) FailType(ctx, node, in, "BOOL");
  CheckOutputType(ctx, node, DataType::kBool);
  ctx.SetOutputDims(node, 0, in.dims);
}
void EvalLogicalNot(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  const bool* x = in.data_as<bool>();
  bool* y = ctx.out(node, 0).data_as<bool>();
  ParallelElements(ctx, in.NumElements(),
                   [&](int64_t begin, int64_t end) { reference::LogicalNot(x, y, begin, end); });
}

// ATAN2(y, x): float, element-wise on one shape (no broadcasting).
void PrepareAtan2(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& y = ctx.input(node, 0);
  const Tensor& x = ctx.input(node, 1);
  ctx.output(node, 0);
  DLG_NODE_CHECK(ctx, node, y.type == x.type, "input types differ: tensor \"", y.name, "\" is ",
                 DataTypeName(y.type), ", tensor \"", x.name, "\" is ", DataTypeName(x.type));
  if (y.type != DataType::kFloat32) FailType(ctx, node, y, "FLOAT32");
  CheckOutputType(ctx, node, y.type);
  DLG_NODE_CHECK(ctx, node, y.dims == x.dims, "input shapes ", DimsText(y.dims), " and ",
                 DimsText(x.dims), " differ (ATAN2 does not broadcast)");
  ctx.SetOutputDims(node, 0, y.dims);
}
void EvalAtan2(KernelContext& ctx, const Node& node) {
  const Tensor& y = ctx.in(node, 0);
  const float* py = y.data_as<float>();
  const float* px = ctx.in(node, 1).data_as<float>();
  float* out = ctx.out(node, 0).data_as<float>();
  ParallelElements(ctx, y.NumElements(),
                   [&](int64_t begin, int64_t end) { reference::Atan2(py, px, out, begin, end); });
}

// ADD_N: float or int32 inputs of one shape, summed.
void PrepareAddN(KernelContext& ctx, Node& node) {
  DLG_NODE_CHECK(ctx, node, node.inputs.size() >= 1, "needs at least one input");
  ctx.CheckInputCount(node, 1, static_cast<int>(node.inputs.size()));
  ctx.CheckOutputCount(node, 1);
  const Tensor& first = ctx.input(node, 0);
  if (first.type != DataType::kFloat32 && first.type != DataType::kInt32)
    FailType(ctx, node, first, "FLOAT32, INT32");
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const Tensor& t = ctx.input(node, static_cast<int>(i));
    DLG_NODE_CHECK(ctx, node, t.type == first.type && t.dims == first.dims, "input ", i,
                   " (tensor \"", t.name, "\", ", DataTypeName(t.type), " ", DimsText(t.dims),
                   ") differs from input 0 (", DataTypeName(first.type), " ",
                   DimsText(first.dims), ")");
  }
  ctx.output(node, 0);
  CheckOutputType(ctx, node, first.type);
  ctx.SetOutputDims(node, 0, first.dims);
  // Eval gathers the input pointers here.
  node.scratch_bytes = node.inputs.size() * sizeof(void*);
}
void EvalAddN(KernelContext& ctx, const Node& node) {
  const int count = static_cast<int>(node.inputs.size());
  const void** inputs = reinterpret_cast<const void**>(node.scratch);
  for (int k = 0; k < count; ++k) inputs[k] = ctx.in(node, k).data;
  const Tensor& first = ctx.in(node, 0);
  void* out = ctx.out(node, 0).data;
  const bool is_float = first.type == DataType::kFloat32;
  ParallelElements(ctx, first.NumElements(), [&](int64_t begin, int64_t end) {
    if (is_float)
      reference::AddN(reinterpret_cast<const float* const*>(inputs), count,
                      static_cast<float*>(out), begin, end);
    else
      reference::AddN(reinterpret_cast<const int32_t* const*>(inputs), count,
                      static_cast<int32_t*>(out), begin, end);
  });
}

void PrepareSelect(KernelContext& ctx, Node& node) { PrepareSelectCommon(ctx, node, false); }
void EvalSelect(KernelContext& ctx, const Node& node) { EvalSelectCommon(ctx, node); }
void PrepareSelectV2(KernelContext& ctx, Node& node) { PrepareSelectCommon(ctx, node, true); }
void EvalSelectV2(KernelContext& ctx, const Node& node) { EvalSelectCommon(ctx, node); }

}  // namespace delegato
