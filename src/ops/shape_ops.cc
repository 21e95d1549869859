// Shape and data-movement ops: RESHAPE, SQUEEZE, CONCATENATION, PACK, SPLIT,
// SPLIT_V, UNPACK, PAD, PADV2, TRANSPOSE, STRIDED_SLICE.
// Every output shape is decided in Prepare: tensors whose values decide shapes
// (shape, axis, paddings, perm, begin/end/strides) must be constants.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kernels/optimized/join_bytes.h"
#include "kernels/optimized/transpose.h"
#include "kernels/quantization.h"
#include "kernels/reference/shape_ops.h"
#include "ops/kernel.h"
#include "ops/shape_ops_util.h"

namespace delegato {

using shape_ops::CheckPlainType;
using shape_ops::CheckSameType;
using shape_ops::ConstIntegers;
using shape_ops::ConstScalar;
using shape_ops::MakeOpData;
using shape_ops::Product;
using shape_ops::ResolveAxis;

namespace {

// The node's params, or defaults when the file carried no options table.
template <class P>
P ParamsOrDefault(const Node& node) {
  if (const P* p = std::get_if<P>(&node.def->params)) return *p;
  return P{};
}

std::string DimsText(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

// Outputs that are a byte copy of input 0 (RESHAPE, SQUEEZE).
void EvalCopy(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  if (in.bytes != 0) std::memcpy(out.data, in.data, in.bytes);
}

}  // namespace

// ------------------------------------------------------------------ RESHAPE

void PrepareReshape(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  Tensor& out = ctx.output(node, 0);
  CheckPlainType(ctx, node, in);
  CheckSameType(ctx, node, in, out);

  // The shape comes from a 1-D INT32 second input when there is one, else
  // from the options (where [0] is the legacy spelling of a scalar).
  std::vector<int64_t> shape;
  const Tensor* shape_tensor = ctx.optional_input(node, 1);
  if (shape_tensor != nullptr && shape_tensor->rank() == 1 &&
      shape_tensor->type == DataType::kInt32) {
    shape = ConstIntegers(ctx, node, *shape_tensor, "shape input");
  } else {
    // Without options the shape is empty: a scalar.
    const ReshapeParams params = ParamsOrDefault<ReshapeParams>(node);
    shape.assign(params.new_shape.begin(), params.new_shape.end());
    if (shape.size() == 1 && shape[0] == 0) shape.clear();
  }

  const int64_t input_count = in.NumElements();
  int stretch = -1;
  int64_t known = 1;
  std::vector<int32_t> dims(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t v = shape[i];
    if (v == -1) {
      DLG_NODE_CHECK(ctx, node, stretch < 0, "new shape ", "has more than one -1 dimension");
      stretch = static_cast<int>(i);
      continue;
    }
    DLG_NODE_CHECK(ctx, node, v >= 0 && v <= INT32_MAX, "new shape dimension ", i, " is ", v);
    dims[i] = static_cast<int32_t>(v);
    known *= v;
    DLG_NODE_CHECK(ctx, node, known <= INT32_MAX * int64_t{64}, "new shape is too large");
  }
  if (stretch >= 0) {
    DLG_NODE_CHECK(ctx, node, known != 0 && input_count % known == 0,
                   "cannot infer the -1 dimension: input \"", in.name, "\" has ", input_count,
                   " elements, not a multiple of ", known);
    dims[stretch] = static_cast<int32_t>(input_count / known);
    known *= dims[stretch];
  }
  DLG_NODE_CHECK(ctx, node, known == input_count, "input \"", in.name, "\" ",
                 DimsText(in.dims), " has ", input_count, " elements, the new shape ",
                 DimsText(dims), " has ", known);
  ctx.SetOutputDims(node, 0, dims);
}

void EvalReshape(KernelContext& ctx, const Node& node) { EvalCopy(ctx, node); }

// ------------------------------------------------------------------ SQUEEZE

void PrepareSqueeze(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckPlainType(ctx, node, in);
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  const SqueezeParams params = ParamsOrDefault<SqueezeParams>(node);
  const int rank = in.rank();
  std::vector<bool> drop(rank, false);
  if (params.squeeze_dims.empty()) {
    for (int d = 0; d < rank; ++d) drop[d] = in.dims[d] == 1;
  } else {
    for (int32_t axis : params.squeeze_dims) {
      const int d = ResolveAxis(ctx, node, axis, rank, "squeeze dim");
      DLG_NODE_CHECK(ctx, node, in.dims[d] == 1, "cannot squeeze dim ", d, " of input \"",
                     in.name, "\" ", DimsText(in.dims), ": its size is not 1");
      drop[d] = true;
    }
  }
  std::vector<int32_t> dims;
  for (int d = 0; d < rank; ++d)
    if (!drop[d]) dims.push_back(in.dims[d]);
  ctx.SetOutputDims(node, 0, dims);
}

void EvalSqueeze(KernelContext& ctx, const Node& node) { EvalCopy(ctx, node); }

// ------------------------------------------- CONCATENATION and PACK (joining)

namespace {

struct JoinData {
  int64_t outer = 1;
  std::vector<int64_t> block_bytes;      // per input, per outer index
  std::vector<const uint8_t*> inputs;    // filled in Eval
  optimized::Isa isa = optimized::Isa::kScalar;  // plain copies: scalar is the reference
  // uint8 CONCATENATION whose inputs need requantizing.
  bool requantize = false;
  std::vector<float> input_scales;
  std::vector<int32_t> input_zero_points;
  float output_scale = 0.0f;
  int32_t output_zero_point = 0;
};

void EvalJoin(KernelContext& ctx, const Node& node) {
  JoinData& data = *node.data<JoinData>();
  const int n = static_cast<int>(data.inputs.size());
  for (int i = 0; i < n; ++i) data.inputs[i] = ctx.in(node, i).data;
  uint8_t* out = ctx.out(node, 0).data;
  if (data.requantize) {
    // For uint8 a block's bytes are its elements.
    reference::ConcatenateRequantizeUInt8(n, data.inputs.data(), data.block_bytes.data(),
                                          data.input_scales.data(),
                                          data.input_zero_points.data(), data.outer,
                                          data.output_scale, data.output_zero_point, out);
  } else {
    optimized::ConcatenateBytes(data.isa, n, data.inputs.data(), data.block_bytes.data(),
                                data.outer, out);
  }
}

}  // namespace

void PrepareConcatenation(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1 << 16);
  ctx.CheckOutputCount(node, 1);
  const ConcatenationParams params = ParamsOrDefault<ConcatenationParams>(node);
  DLG_NODE_CHECK(ctx, node, params.activation == Activation::kNone,
                 "fused activation ", static_cast<int>(params.activation),
                 " is not supported (TFLite accepts only NONE)");
  const Tensor& first = ctx.input(node, 0);
  Tensor& out = ctx.output(node, 0);
  CheckPlainType(ctx, node, first);
  CheckSameType(ctx, node, first, out);
  const int rank = first.rank();
  DLG_NODE_CHECK(ctx, node, rank > 0, "scalar input \"", first.name, "\" cannot be concatenated");
  const int axis = ResolveAxis(ctx, node, params.axis, rank, "axis");
  const int num_inputs = static_cast<int>(node.inputs.size());

  std::vector<int32_t> dims = first.dims;
  int64_t axis_total = 0;
  for (int i = 0; i < num_inputs; ++i) {
    const Tensor& t = ctx.input(node, i);
    CheckSameType(ctx, node, first, t);
    DLG_NODE_CHECK(ctx, node, t.rank() == rank, "input ", i, " \"", t.name, "\" ",
                   DimsText(t.dims), " has another rank than input 0 ", DimsText(first.dims));
    for (int d = 0; d < rank; ++d)
      DLG_NODE_CHECK(ctx, node, d == axis || t.dims[d] == first.dims[d], "input ", i, " \"",
                     t.name, "\" ", DimsText(t.dims), " does not match input 0 ",
                     DimsText(first.dims), " outside axis ", axis);
    axis_total += t.dims[axis];
    DLG_NODE_CHECK(ctx, node, axis_total <= INT32_MAX, "concatenated axis is too large");
  }
  dims[axis] = static_cast<int32_t>(axis_total);

  auto data = MakeOpData<JoinData>(node);
  if (ctx.optimized()) data->isa = optimized::SelectedIsa();
  data->outer = Product(first.dims, 0, axis);
  const int64_t inner_bytes =
      Product(first.dims, axis + 1, rank) * static_cast<int64_t>(DataTypeSize(first.type));
  for (int i = 0; i < num_inputs; ++i)
    data->block_bytes.push_back(ctx.input(node, i).dims[axis] * inner_bytes);
  data->inputs.resize(num_inputs);

  if (first.type == DataType::kInt8) {
    // TFLite's int8 kernel does not rescale.
    for (int i = 0; i < num_inputs; ++i) {
      const Tensor& t = ctx.input(node, i);
      DLG_NODE_CHECK(ctx, node, t.scale() == out.scale() && t.zero_point() == out.zero_point(),
                     "int8 input \"", t.name, "\" (scale ", t.scale(), ", zero point ",
                     t.zero_point(), ") must have the output's quantization (scale ", out.scale(),
                     ", zero point ", out.zero_point(), ")");
    }
  } else if (first.type == DataType::kInt16) {
    for (int i = 0; i < num_inputs; ++i)
      DLG_NODE_CHECK(ctx, node, ctx.input(node, i).zero_point() == 0,
                     "int16 input \"", ctx.input(node, i).name, "\" must have zero point 0");
    DLG_NODE_CHECK(ctx, node, out.zero_point() == 0, "int16 output must have zero point 0");
  } else if (first.type == DataType::kUInt8) {
    data->output_scale = out.scale();
    data->output_zero_point = out.zero_point();
    DLG_NODE_CHECK(ctx, node, out.zero_point() >= 0 && out.zero_point() <= 255, "output \"",
                   out.name, "\" has zero point ", out.zero_point(), " outside the uint8 range");
    for (int i = 0; i < num_inputs; ++i) {
      const Tensor& t = ctx.input(node, i);
      DLG_NODE_CHECK(ctx, node, t.zero_point() >= 0 && t.zero_point() <= 255, "input \"", t.name,
                     "\" has zero point ", t.zero_point(), " outside the uint8 range");
      data->input_scales.push_back(t.scale());
      data->input_zero_points.push_back(t.zero_point());
      if (t.scale() != out.scale() || t.zero_point() != out.zero_point()) data->requantize = true;
    }
    if (data->requantize)
      DLG_NODE_CHECK(ctx, node, out.scale() > 0.0f, "output \"", out.name,
                     "\" needs a positive scale to requantize inputs");
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalConcatenation(KernelContext& ctx, const Node& node) { EvalJoin(ctx, node); }

void PreparePack(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1 << 16);
  ctx.CheckOutputCount(node, 1);
  const PackParams params = ParamsOrDefault<PackParams>(node);
  const int num_inputs = static_cast<int>(node.inputs.size());
  DLG_NODE_CHECK(ctx, node, params.values_count == num_inputs, "values_count ",
                 params.values_count, " does not match the ", num_inputs, " inputs");
  const Tensor& first = ctx.input(node, 0);
  CheckPlainType(ctx, node, first);
  CheckSameType(ctx, node, first, ctx.output(node, 0));
  const int rank = first.rank();
  const int axis = ResolveAxis(ctx, node, params.axis, rank + 1, "axis");
  for (int i = 1; i < num_inputs; ++i) {
    const Tensor& t = ctx.input(node, i);
    CheckSameType(ctx, node, first, t);
    DLG_NODE_CHECK(ctx, node, t.dims == first.dims, "input ", i, " \"", t.name, "\" ",
                   DimsText(t.dims), " does not match input 0 ", DimsText(first.dims));
  }
  std::vector<int32_t> dims = first.dims;
  dims.insert(dims.begin() + axis, num_inputs);

  auto data = MakeOpData<JoinData>(node);
  if (ctx.optimized()) data->isa = optimized::SelectedIsa();
  data->outer = Product(first.dims, 0, axis);
  const int64_t block =
      Product(first.dims, axis, rank) * static_cast<int64_t>(DataTypeSize(first.type));
  data->block_bytes.assign(num_inputs, block);
  data->inputs.resize(num_inputs);
  ctx.SetOutputDims(node, 0, dims);
}

void EvalPack(KernelContext& ctx, const Node& node) { EvalJoin(ctx, node); }

// ------------------------------------------- SPLIT, SPLIT_V, UNPACK (parting)

namespace {

struct PartData {
  int input = 0;  // position of the data input
  int64_t outer = 1;
  std::vector<int64_t> block_bytes;  // per output, per outer index
  std::vector<uint8_t*> outputs;     // filled in Eval
  optimized::Isa isa = optimized::Isa::kScalar;
};

void EvalPart(KernelContext& ctx, const Node& node) {
  PartData& data = *node.data<PartData>();
  const int n = static_cast<int>(data.outputs.size());
  for (int i = 0; i < n; ++i) data.outputs[i] = ctx.out(node, i).data;
  optimized::SplitBytes(data.isa, ctx.in(node, data.input).data, data.outer, n,
                        data.outputs.data(), data.block_bytes.data());
}

// Splits input `input_index` along `axis` into pieces of the given sizes.
void PreparePart(KernelContext& ctx, Node& node, int input_index, int axis,
                 const std::vector<int32_t>& sizes, bool drop_axis) {
  const Tensor& in = ctx.input(node, input_index);
  const int rank = in.rank();
  auto data = MakeOpData<PartData>(node);
  if (ctx.optimized()) data->isa = optimized::SelectedIsa();
  data->input = input_index;
  data->outer = Product(in.dims, 0, axis);
  const int64_t inner_bytes =
      Product(in.dims, axis + 1, rank) * static_cast<int64_t>(DataTypeSize(in.type));
  for (size_t i = 0; i < sizes.size(); ++i) {
    CheckSameType(ctx, node, in, ctx.output(node, static_cast<int>(i)));
    std::vector<int32_t> dims = in.dims;
    if (drop_axis) {
      dims.erase(dims.begin() + axis);
    } else {
      dims[axis] = sizes[i];
    }
    ctx.SetOutputDims(node, static_cast<int>(i), dims);
    data->block_bytes.push_back(sizes[i] * inner_bytes);
  }
  data->outputs.resize(sizes.size());
}

}  // namespace

void PrepareSplit(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  const SplitParams params = ParamsOrDefault<SplitParams>(node);
  const int num_outputs = static_cast<int>(node.outputs.size());
  DLG_NODE_CHECK(ctx, node, params.num_splits >= 1 && params.num_splits == num_outputs,
                 "num_splits ", params.num_splits, " does not match the ", num_outputs,
                 " outputs");
  const Tensor& in = ctx.input(node, 1);
  CheckPlainType(ctx, node, in);
  DLG_NODE_CHECK(ctx, node, in.rank() > 0, "input \"", in.name, "\" is a scalar");
  const int axis = ResolveAxis(
      ctx, node, ConstScalar(ctx, node, ctx.input(node, 0), "axis input"), in.rank(), "axis");
  DLG_NODE_CHECK(ctx, node, in.dims[axis] % num_outputs == 0, "dim ", axis, " of input \"",
                 in.name, "\" ", DimsText(in.dims), " does not divide into ", num_outputs,
                 " equal parts");
  PreparePart(ctx, node, 1, axis, std::vector<int32_t>(num_outputs, in.dims[axis] / num_outputs),
              false);
}

void EvalSplit(KernelContext& ctx, const Node& node) { EvalPart(ctx, node); }

void PrepareSplitV(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 3);
  const int num_outputs = static_cast<int>(node.outputs.size());
  DLG_NODE_CHECK(ctx, node, num_outputs >= 1, "has no outputs");
  const SplitParams params = ParamsOrDefault<SplitParams>(node);
  DLG_NODE_CHECK(ctx, node, params.num_splits == num_outputs, "num_splits ", params.num_splits,
                 " does not match the ", num_outputs, " outputs");
  const Tensor& in = ctx.input(node, 0);
  CheckPlainType(ctx, node, in);
  DLG_NODE_CHECK(ctx, node, in.rank() > 0, "input \"", in.name, "\" is a scalar");
  const int axis = ResolveAxis(
      ctx, node, ConstScalar(ctx, node, ctx.input(node, 2), "axis input"), in.rank(), "axis");
  const Tensor& splits_tensor = ctx.input(node, 1);
  DLG_NODE_CHECK(ctx, node, splits_tensor.rank() == 1, "size_splits (tensor \"",
                 splits_tensor.name, "\") must be 1-D");
  const std::vector<int64_t> splits = ConstIntegers(ctx, node, splits_tensor, "size_splits");
  DLG_NODE_CHECK(ctx, node, static_cast<int>(splits.size()) == num_outputs, "size_splits has ",
                 splits.size(), " values for ", num_outputs, " outputs");
  int unknown = -1;
  int64_t known = 0;
  std::vector<int32_t> sizes(num_outputs);
  for (int i = 0; i < num_outputs; ++i) {
    if (splits[i] == -1) {
      DLG_NODE_CHECK(ctx, node, unknown < 0, "size_splits has more than one -1");
      unknown = i;
      continue;
    }
    DLG_NODE_CHECK(ctx, node, splits[i] >= 0 && splits[i] <= in.dims[axis], "size_splits[", i,
                   "] = ", splits[i], " is invalid for dim ", axis, " of size ", in.dims[axis]);
    sizes[i] = static_cast<int32_t>(splits[i]);
    known += splits[i];
  }
  if (unknown >= 0) {
    DLG_NODE_CHECK(ctx, node, known <= in.dims[axis], "size_splits sum ", known,
                   " exceeds dim ", axis, " of size ", in.dims[axis]);
    sizes[unknown] = static_cast<int32_t>(in.dims[axis] - known);
  } else {
    DLG_NODE_CHECK(ctx, node, known == in.dims[axis], "size_splits sum ", known,
                   " does not equal dim ", axis, " of size ", in.dims[axis]);
  }
  PreparePart(ctx, node, 0, axis, sizes, false);
}

void EvalSplitV(KernelContext& ctx, const Node& node) { EvalPart(ctx, node); }

void PrepareUnpack(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  const UnpackParams params = ParamsOrDefault<UnpackParams>(node);
  const Tensor& in = ctx.input(node, 0);
  CheckPlainType(ctx, node, in);
  DLG_NODE_CHECK(ctx, node, in.rank() > 0, "input \"", in.name, "\" is a scalar");
  const int axis = ResolveAxis(ctx, node, params.axis, in.rank(), "axis");
  const int num_outputs = static_cast<int>(node.outputs.size());
  DLG_NODE_CHECK(ctx, node, in.dims[axis] == num_outputs && params.num == num_outputs,
                 "dim ", axis, " of input \"", in.name, "\" ", DimsText(in.dims), ", num ",
                 params.num, " and the ", num_outputs, " outputs must agree");
  PreparePart(ctx, node, 0, axis, std::vector<int32_t>(num_outputs, 1), true);
}

void EvalUnpack(KernelContext& ctx, const Node& node) { EvalPart(ctx, node); }

// -------------------------------------------------------------- PAD, PADV2

namespace {

struct PadData {
  int rank = 0;
  int32_t dims[reference::kMaxPadRank] = {};
  int32_t before[reference::kMaxPadRank] = {};
  int32_t after[reference::kMaxPadRank] = {};
  size_t element_size = 0;
  alignas(8) uint8_t pad_value[16] = {};
  int value_input = -1;  // PADV2 with a non-constant value: read it in Eval
};

bool IsQuantizedPad(const Tensor& t) {
  return t.type == DataType::kUInt8 ||
         ((t.type == DataType::kInt8 || t.type == DataType::kInt16) && !t.quantization->empty());
}

void PreparePadCommon(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  Tensor& out = ctx.output(node, 0);
  CheckPlainType(ctx, node, in);
  CheckSameType(ctx, node, in, out);
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node, rank <= reference::kMaxPadRank, "input \"", in.name, "\" has rank ",
                 rank, "; at most ", reference::kMaxPadRank, " is supported");
  const Tensor& paddings_tensor = ctx.input(node, 1);
  DLG_NODE_CHECK(ctx, node,
                 paddings_tensor.rank() == 2 && paddings_tensor.dims[0] == rank &&
                     paddings_tensor.dims[1] == 2,
                 "paddings (tensor \"", paddings_tensor.name, "\") has shape ",
                 DimsText(paddings_tensor.dims), ", expected [", rank, ",2]");
  const std::vector<int64_t> paddings = ConstIntegers(ctx, node, paddings_tensor, "paddings");

  auto data = MakeOpData<PadData>(node);
  data->rank = rank;
  data->element_size = DataTypeSize(in.type);
  std::vector<int32_t> dims(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t lo = paddings[2 * d], hi = paddings[2 * d + 1];
    DLG_NODE_CHECK(ctx, node, lo >= 0 && hi >= 0, "paddings of dim ", d, " (", lo, ", ", hi,
                   ") must not be negative");
    const int64_t size = in.dims[d] + lo + hi;
    DLG_NODE_CHECK(ctx, node, size <= INT32_MAX, "padded dim ", d, " is too large");
    data->dims[d] = in.dims[d];
    data->before[d] = static_cast<int32_t>(lo);
    data->after[d] = static_cast<int32_t>(hi);
    dims[d] = static_cast<int32_t>(size);
  }

  // The pad value: the constant input of PADV2, else zero (the output's zero
  // point for quantized tensors).
  const Tensor* value = ctx.optional_input(node, 2);
  if (value != nullptr) {
    CheckSameType(ctx, node, in, *value);
    DLG_NODE_CHECK(ctx, node, value->NumElements() == 1, "constant value (tensor \"",
                   value->name, "\") must hold one element, holds ", value->NumElements());
    if (IsQuantizedPad(in))
      DLG_NODE_CHECK(ctx, node,
                     value->scale() == out.scale() && value->zero_point() == out.zero_point(),
                     "constant value (tensor \"", value->name,
                     "\") must have the output's quantization");
    if (value->is_constant()) {
      DLG_NODE_CHECK(ctx, node, value->bytes >= data->element_size, "constant value (tensor \"",
                     value->name, "\") has no data");
      std::memcpy(data->pad_value, value->data, data->element_size);
    } else {
      data->value_input = 2;
    }
  } else if (IsQuantizedPad(in)) {
    const int32_t zp = out.zero_point();
    if (in.type == DataType::kUInt8) {
      DLG_NODE_CHECK(ctx, node, zp >= 0 && zp <= 255, "output zero point ", zp,
                     " is outside uint8");
      const uint8_t v = static_cast<uint8_t>(zp);
      std::memcpy(data->pad_value, &v, 1);
    } else if (in.type == DataType::kInt8) {
      DLG_NODE_CHECK(ctx, node, zp >= -128 && zp <= 127, "output zero point ", zp,
                     " is outside int8");
      const int8_t v = static_cast<int8_t>(zp);
      std::memcpy(data->pad_value, &v, 1);
    } else {
      DLG_NODE_CHECK(ctx, node, zp >= -32768 && zp <= 32767, "output zero point ", zp,
                     " is outside int16");
      const int16_t v = static_cast<int16_t>(zp);
      std::memcpy(data->pad_value, &v, 2);
    }
  }
  // Optimized kernel set: a trailing dim without padding merges into the one
  // before it (a reshape: the same bytes in the same places), so an NHWC pad
  // of H and W copies whole rows of W * C elements instead of C at a time.
  if (ctx.optimized()) {
    while (data->rank >= 2 && data->before[data->rank - 1] == 0 &&
           data->after[data->rank - 1] == 0) {
      const int r = data->rank;
      const int64_t inner = data->dims[r - 1];
      const int64_t padded =
          (int64_t{data->dims[r - 2]} + data->before[r - 2] + data->after[r - 2]) * inner;
      if (padded > INT32_MAX) break;
      data->dims[r - 2] = static_cast<int32_t>(data->dims[r - 2] * inner);
      data->before[r - 2] = static_cast<int32_t>(data->before[r - 2] * inner);
      data->after[r - 2] = static_cast<int32_t>(data->after[r - 2] * inner);
      data->rank = r - 1;
    }
  }
  ctx.SetOutputDims(node, 0, dims);
}

// Below this many bytes PAD and TRANSPOSE copy on the calling thread only.
constexpr size_t kMinParallelCopyBytes = 32 * 1024;

void EvalPadCommon(KernelContext& ctx, const Node& node) {
  const PadData& data = *node.data<PadData>();
  const uint8_t* value = data.pad_value;
  if (data.value_input >= 0) value = ctx.in(node, data.value_input).data;
  const uint8_t* in = ctx.in(node, 0).data;
  uint8_t* out = ctx.out(node, 0).data;
  const int64_t rows = reference::PadRowCount(data.rank, data.dims, data.before, data.after);
  const auto run = [&](int64_t begin, int64_t end) {
    reference::Pad(data.element_size, data.rank, data.dims, data.before, data.after, in, value,
                   out, begin, end);
  };
  // Large pads split by rows across the pool.
  if (ctx.out(node, 0).bytes < kMinParallelCopyBytes)
    run(0, rows);
  else
    ParallelRange(ctx, rows, run);
}

}  // namespace

void PreparePad(KernelContext& ctx, Node& node) { PreparePadCommon(ctx, node); }
void EvalPad(KernelContext& ctx, const Node& node) { EvalPadCommon(ctx, node); }
void PreparePadv2(KernelContext& ctx, Node& node) { PreparePadCommon(ctx, node); }
void EvalPadv2(KernelContext& ctx, const Node& node) { EvalPadCommon(ctx, node); }

// ---------------------------------------------------------------- TRANSPOSE

namespace {

struct TransposeData {
  int rank = 0;
  int32_t dims[reference::kMaxTransposeRank] = {};
  int32_t perm[reference::kMaxTransposeRank] = {};
  size_t element_size = 0;
  bool optimized = false;
  optimized::TransposePlan plan;  // when optimized
};

}  // namespace

void PrepareTranspose(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckPlainType(ctx, node, in);
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node, rank <= reference::kMaxTransposeRank, "input \"", in.name,
                 "\" has rank ", rank, "; at most ", reference::kMaxTransposeRank,
                 " is supported");
  const Tensor& perm_tensor = ctx.input(node, 1);
  DLG_NODE_CHECK(ctx, node, perm_tensor.rank() == 1 && perm_tensor.dims[0] == rank,
                 "perm (tensor \"", perm_tensor.name, "\") has shape ",
                 DimsText(perm_tensor.dims), ", expected [", rank, "]");
  const std::vector<int64_t> perm = ConstIntegers(ctx, node, perm_tensor, "perm");
  auto data = MakeOpData<TransposeData>(node);
  data->rank = rank;
  data->element_size = DataTypeSize(in.type);
  std::vector<bool> seen(rank, false);
  std::vector<int32_t> dims(rank);
  for (int d = 0; d < rank; ++d) {
    DLG_NODE_CHECK(ctx, node, perm[d] >= 0 && perm[d] < rank && !seen[perm[d]], "perm ",
                   "is not a permutation of 0..", rank - 1);
    seen[perm[d]] = true;
    data->perm[d] = static_cast<int32_t>(perm[d]);
    data->dims[d] = in.dims[d];
    dims[d] = in.dims[perm[d]];
  }
  if (ctx.optimized()) {
    static_assert(optimized::kMaxTransposePlanRank >= reference::kMaxTransposeRank);
    data->optimized = true;
    data->plan = optimized::PlanTranspose(optimized::SelectedIsa(), data->element_size, rank,
                                          data->dims, data->perm);
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalTranspose(KernelContext& ctx, const Node& node) {
  const TransposeData& data = *node.data<TransposeData>();
  const Tensor& in = ctx.in(node, 0);
  if (data.rank == 0) {
    std::memcpy(ctx.out(node, 0).data, in.data, in.bytes);
    return;
  }
  uint8_t* out = ctx.out(node, 0).data;
  const int64_t rows = data.optimized
                           ? optimized::TransposeRows(data.plan)
                           : reference::TransposeRowCount(data.rank, data.dims, data.perm);
  const auto run = [&](int64_t begin, int64_t end) {
    if (data.optimized)
      optimized::Transpose(data.plan, in.data, out, begin, end);
    else
      reference::Transpose(data.element_size, data.rank, data.dims, data.perm, in.data, out,
                           begin, end);
  };
  // Large transposes split by rows across the pool.
  if (in.bytes < kMinParallelCopyBytes)
    run(0, rows);
  else
    ParallelRange(ctx, rows, run);
}

// ------------------------------------------------------------ STRIDED_SLICE

namespace {

struct StridedSliceData {
  int rank = 0;
  int32_t dims[reference::kMaxStridedSliceRank] = {};
  int32_t start[reference::kMaxStridedSliceRank] = {};
  int32_t count[reference::kMaxStridedSliceRank] = {};
  int32_t stride[reference::kMaxStridedSliceRank] = {};
  size_t element_size = 0;
};

}  // namespace

void PrepareStridedSlice(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 4, 4);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckPlainType(ctx, node, in);
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  const StridedSliceParams params = ParamsOrDefault<StridedSliceParams>(node);
  const int rank = in.rank();
  DLG_NODE_CHECK(ctx, node, rank >= 1 && rank <= reference::kMaxStridedSliceRank, "input \"",
                 in.name, "\" has rank ", rank, "; 1 to ", reference::kMaxStridedSliceRank,
                 " is supported");
  const char* names[3] = {"begin", "end", "strides"};
  std::vector<int64_t> values[3];
  for (int k = 0; k < 3; ++k) {
    const Tensor& t = ctx.input(node, k + 1);
    DLG_NODE_CHECK(ctx, node, t.rank() == 1, names[k], " (tensor \"", t.name, "\") has shape ",
                   DimsText(t.dims), ", expected [n]");
    values[k] = ConstIntegers(ctx, node, t, names[k]);
    DLG_NODE_CHECK(ctx, node, values[k].size() == values[0].size(), names[k], " has ",
                   values[k].size(), " values, begin has ", values[0].size());
  }
  // The spec's entries map to input dims: an ellipsis entry stands for as many
  // whole dims as the entries after it leave over, a new-axis entry inserts an
  // output dim of size 1 and reads no input dim, and input dims past the spec
  // are taken whole. spec_of[d] is the entry of input dim d (-1: whole dim);
  // output_of lists the output dims in order (-1: a new axis, else an input dim).
  const int entries = static_cast<int>(values[0].size());
  auto bit = [](int32_t mask, int i) { return (mask >> i) & 1; };
  std::vector<int> spec_of(rank, -1), output_of;
  int d_next = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < entries; ++i) {
    if (bit(params.ellipsis_mask, i) && !ellipsis_seen) {
      ellipsis_seen = true;
      int after = 0;
      for (int j = i + 1; j < entries; ++j) after += !bit(params.new_axis_mask, j) && !bit(params.ellipsis_mask, j);
      const int whole = rank - d_next - after;
      DLG_NODE_CHECK(ctx, node, whole >= 0, "the slice spec names more dims than input \"", in.name,
                     "\" has (", rank, ")");
      for (int k = 0; k < whole; ++k) output_of.push_back(d_next++);
    } else if (bit(params.new_axis_mask, i)) {
      output_of.push_back(-1);
    } else {
      DLG_NODE_CHECK(ctx, node, d_next < rank, "the slice spec names more dims than input \"", in.name,
                     "\" has (", rank, ")");
      spec_of[d_next] = i;
      output_of.push_back(d_next++);
    }
  }
  while (d_next < rank) output_of.push_back(d_next++);

  auto data = MakeOpData<StridedSliceData>(node);
  data->rank = rank;
  data->element_size = DataTypeSize(in.type);
  std::vector<int32_t> input_dims_out(rank, 0);
  std::vector<bool> shrunk(rank, false);
  for (int d = 0; d < rank; ++d) {
    const int64_t size = in.dims[d];
    data->dims[d] = in.dims[d];
    const int i = spec_of[d];
    if (i < 0) {
      data->start[d] = 0;
      data->count[d] = in.dims[d];
      data->stride[d] = 1;
      input_dims_out[d] = in.dims[d];
      continue;
    }
    const int64_t stride = values[2][i];
    DLG_NODE_CHECK(ctx, node, stride != 0, "strides[", d, "] is 0");
    DLG_NODE_CHECK(ctx, node, stride >= -INT32_MAX && stride <= INT32_MAX, "strides[", d,
                   "] is out of range");
    const bool shrink = bit(params.shrink_axis_mask, i);
    // Start: the mask selects the first element in the walking direction;
    // negative indices count from the end; clamp into range.
    int64_t start = values[0][i];
    if (bit(params.begin_mask, i)) start = stride > 0 ? 0 : size - 1;
    if (start < 0) start += size;
    start = stride > 0 ? std::clamp<int64_t>(start, 0, size)
                       : std::clamp<int64_t>(start, -1, size - 1);
    int64_t count = 0;
    if (shrink) {
      DLG_NODE_CHECK(ctx, node, start >= 0 && start < size, "shrunk dim ", d, " has index ",
                     values[0][i], " outside size ", size);
      count = 1;
    } else if (params.offset) {
      // end is the extent from start; the output takes it unclamped, so it
      // must stay inside the input.
      const int64_t extent = values[1][i];
      if ((extent > 0 && stride > 0) || (extent < 0 && stride < 0))
        count = (extent + stride + (stride > 0 ? -1 : 1)) / stride;
      DLG_NODE_CHECK(ctx, node,
                     count == 0 || (start >= 0 && start < size &&
                                    start + (count - 1) * stride >= 0 &&
                                    start + (count - 1) * stride < size),
                     "offset slice of dim ", d, " (begin ", values[0][i], ", size ", extent,
                     ", stride ", stride, ") reaches outside the input dim of size ", size);
    } else {
      // Stop (one past the last): end_mask walks to the edge; negative
      // indices count from the end; clamp by direction.
      int64_t stop = values[1][i];
      if (bit(params.end_mask, i)) stop = stride > 0 ? size : -1;
      else if (stop < 0) stop += size;
      stop = stride > 0 ? std::clamp<int64_t>(stop, 0, size)
                        : std::clamp<int64_t>(stop, -1, size - 1);
      if (stride > 0 ? stop > start : stop < start) {
        const int64_t span = stride > 0 ? stop - start : start - stop;
        const int64_t step = stride > 0 ? stride : -stride;
        count = (span + step - 1) / step;
      }
    }
    DLG_NODE_CHECK(ctx, node, count <= INT32_MAX, "slice of dim ", d, " is too large");
    data->start[d] = static_cast<int32_t>(start);
    data->count[d] = static_cast<int32_t>(count);
    data->stride[d] = static_cast<int32_t>(stride);
    input_dims_out[d] = static_cast<int32_t>(count);
    shrunk[d] = shrink;
  }
  std::vector<int32_t> dims;
  for (int d : output_of) {
    if (d < 0) dims.push_back(1);
    else if (!shrunk[d]) dims.push_back(input_dims_out[d]);
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalStridedSlice(KernelContext& ctx, const Node& node) {
  const StridedSliceData& data = *node.data<StridedSliceData>();
  reference::StridedSlice(data.element_size, data.rank, data.dims, data.start, data.count,
                          data.stride, ctx.in(node, 0).data, ctx.out(node, 0).data);
}

}  // namespace delegato
