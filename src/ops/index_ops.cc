// Indexing, scatter and scan ops: CUMSUM, TOPK_V2, SCATTER_ND,
// DYNAMIC_UPDATE_SLICE, EMBEDDING_LOOKUP, SEGMENT_SUM, UNSORTED_SEGMENT_SUM /
// MAX / MIN / PROD, MATRIX_DIAG, MATRIX_SET_DIAG, BUCKETIZE, REVERSE_SEQUENCE,
// WHERE, SPARSE_TO_DENSE, BITCAST, NON_MAX_SUPPRESSION_V4 / V5, UNIQUE.
// Output shapes are decided in Prepare. Where an output's size depends on a
// tensor's values (SEGMENT_SUM's ids, WHERE's condition, UNIQUE's input, TOPK_V2's k,
// SCATTER_ND's shape...), that tensor must be a constant; otherwise Prepare
// fails naming the node, since the interpreter sizes every tensor before the
// first Eval.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kernels/reference/index_ops.h"
#include "ops/kernel.h"
#include "ops/shape_ops_util.h"

namespace delegato {

using shape_ops::CheckSameType;
using shape_ops::ConstIntegers;
using shape_ops::ConstScalar;
using shape_ops::MakeOpData;
using shape_ops::Product;
using shape_ops::ResolveAxis;

namespace {

template <class P>
P ParamsOr(const Node& node) {
  if (const P* p = std::get_if<P>(&node.def->params)) return *p;
  return P{};
}

std::string DimsText(const std::vector<int32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

void CheckTypes(const KernelContext& ctx, const Node& node, const Tensor& t,
                std::initializer_list<DataType> types) {
  for (DataType type : types)
    if (t.type == type) return;
  std::string names;
  for (DataType type : types)
    names += std::string(names.empty() ? "" : ", ") + std::string(DataTypeName(type));
  ctx.Fail(node, "tensor \"", t.name, "\" has type ", DataTypeName(t.type), "; ", node.op_name,
           " supports ", names);
}

// Reads element i of an INT32 / INT64 tensor (Eval-time indices).
inline int64_t IndexAt(const Tensor& t, int64_t i) {
  return t.type == DataType::kInt32 ? t.data_as<int32_t>()[i] : t.data_as<int64_t>()[i];
}

// Dispatches on the element size for ops that only move values.
template <template <class> class F, class... Args>
void BySize(size_t size, Args&&... args) {
  switch (size) {
    case 1: F<uint8_t>::Run(args...); break;
    case 2: F<uint16_t>::Run(args...); break;
    case 4: F<uint32_t>::Run(args...); break;
    default: F<uint64_t>::Run(args...); break;
  }
}

}  // namespace

// ------------------------------------------------------------------ CUMSUM

namespace {
struct AxisSplit {
  int64_t outer = 1, axis = 1, inner = 1;
};
}  // namespace

void PrepareCumsum(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckTypes(ctx, node, in, {DataType::kFloat32, DataType::kInt32, DataType::kInt64});
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  const Tensor& axis_tensor = ctx.input(node, 1);
  ctx.CheckType(node, axis_tensor, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, in.rank() >= 1, "input \"", in.name, "\" is a scalar");
  const int axis = ResolveAxis(ctx, node, ConstScalar(ctx, node, axis_tensor, "axis"), in.rank(),
                               "axis");
  auto data = MakeOpData<AxisSplit>(node);
  data->outer = Product(in.dims, 0, axis);
  data->axis = in.dims[axis];
  data->inner = Product(in.dims, axis + 1, in.rank());
  ctx.SetOutputDims(node, 0, in.dims);
}

void EvalCumsum(KernelContext& ctx, const Node& node) {
  const AxisSplit& d = *node.data<AxisSplit>();
  const CumsumParams p = ParamsOr<CumsumParams>(node);
  const Tensor& in = ctx.in(node, 0);
  Tensor& out = ctx.out(node, 0);
  switch (in.type) {
    case DataType::kFloat32:
      reference::Cumsum(in.data_as<float>(), d.outer, d.axis, d.inner, p.exclusive, p.reverse,
                        out.data_as<float>());
      break;
    case DataType::kInt32:
      reference::Cumsum(in.data_as<int32_t>(), d.outer, d.axis, d.inner, p.exclusive, p.reverse,
                        out.data_as<int32_t>());
      break;
    default:
      reference::Cumsum(in.data_as<int64_t>(), d.outer, d.axis, d.inner, p.exclusive, p.reverse,
                        out.data_as<int64_t>());
      break;
  }
}

// ------------------------------------------------------------------ TOPK_V2

namespace {
struct TopKData {
  int64_t rows = 0;
  int32_t row_size = 0, k = 0;
};

template <class T>
void RunTopK(const TopKData& d, const Tensor& in, int32_t* order, Tensor& values,
             Tensor& indices) {
  reference::TopK(in.data_as<T>(), d.rows, d.row_size, d.k, order, values.data_as<T>(),
                  indices.data_as<int32_t>());
}
}  // namespace

void PrepareTopkV2(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 2);
  const Tensor& in = ctx.input(node, 0);
  CheckTypes(ctx, node, in,
             {DataType::kFloat32, DataType::kUInt8, DataType::kInt8, DataType::kInt16,
              DataType::kInt32, DataType::kInt64});
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  ctx.CheckType(node, ctx.output(node, 1), DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, in.rank() >= 1, "input \"", in.name, "\" is a scalar");
  const Tensor& k_tensor = ctx.input(node, 1);
  ctx.CheckType(node, k_tensor, DataType::kInt32);
  const int64_t k = ConstScalar(ctx, node, k_tensor, "k");
  const int32_t row_size = in.dims.back();
  DLG_NODE_CHECK(ctx, node, k >= 0 && k <= row_size, "k ", k, " must be in [0, ", row_size,
                 "] (the last dim of input \"", in.name, "\")");
  auto data = MakeOpData<TopKData>(node);
  data->row_size = row_size;
  data->k = static_cast<int32_t>(k);
  data->rows = Product(in.dims, 0, in.rank() - 1);
  node.scratch_bytes = static_cast<size_t>(row_size) * sizeof(int32_t);
  std::vector<int32_t> dims = in.dims;
  dims.back() = data->k;
  ctx.SetOutputDims(node, 0, dims);
  ctx.SetOutputDims(node, 1, dims);
}

void EvalTopkV2(KernelContext& ctx, const Node& node) {
  const TopKData& d = *node.data<TopKData>();
  const Tensor& in = ctx.in(node, 0);
  int32_t* order = reinterpret_cast<int32_t*>(node.scratch);
  Tensor& values = ctx.out(node, 0);
  Tensor& indices = ctx.out(node, 1);
  if (d.k == 0 || d.rows == 0) return;
  switch (in.type) {
    case DataType::kFloat32: RunTopK<float>(d, in, order, values, indices); break;
    case DataType::kUInt8: RunTopK<uint8_t>(d, in, order, values, indices); break;
    case DataType::kInt8: RunTopK<int8_t>(d, in, order, values, indices); break;
    case DataType::kInt16: RunTopK<int16_t>(d, in, order, values, indices); break;
    case DataType::kInt32: RunTopK<int32_t>(d, in, order, values, indices); break;
    default: RunTopK<int64_t>(d, in, order, values, indices); break;
  }
}

// ------------------------------------------------------------------ SCATTER_ND

namespace {
struct ScatterData {
  int64_t num_updates = 0, index_depth = 0, slice_size = 1;
  std::vector<int64_t> strides;  // output stride of each indexed dim
  std::vector<int32_t> dims;     // output dims
};

template <class T>
bool ScatterNd(const ScatterData& d, const Tensor& indices, const T* updates, T* output,
               int64_t output_count) {
  std::fill_n(output, output_count, T(0));
  for (int64_t u = 0; u < d.num_updates; ++u) {
    int64_t offset = 0;
    for (int64_t k = 0; k < d.index_depth; ++k) {
      const int64_t idx = IndexAt(indices, u * d.index_depth + k);
      if (idx < 0 || idx >= d.dims[k]) return false;
      offset += idx * d.strides[k];
    }
    for (int64_t j = 0; j < d.slice_size; ++j) {
      if constexpr (std::is_same_v<T, bool>)
        output[offset + j] = output[offset + j] || updates[u * d.slice_size + j];
      else
        output[offset + j] = static_cast<T>(output[offset + j] + updates[u * d.slice_size + j]);
    }
  }
  return true;
}
}  // namespace

void PrepareScatterNd(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& indices = ctx.input(node, 0);
  const Tensor& updates = ctx.input(node, 1);
  const Tensor& shape_tensor = ctx.input(node, 2);
  CheckTypes(ctx, node, indices, {DataType::kInt32, DataType::kInt64});
  CheckTypes(ctx, node, updates,
             {DataType::kFloat32, DataType::kUInt8, DataType::kInt8, DataType::kInt32,
              DataType::kInt64, DataType::kBool});
  CheckSameType(ctx, node, updates, ctx.output(node, 0));
  DLG_NODE_CHECK(ctx, node, shape_tensor.rank() == 1, "shape (tensor \"", shape_tensor.name,
                 "\") must be 1-D");
  const std::vector<int64_t> shape = ConstIntegers(ctx, node, shape_tensor, "shape");
  DLG_NODE_CHECK(ctx, node, indices.rank() >= 1, "indices (tensor \"", indices.name,
                 "\") must have rank >= 1");
  auto data = MakeOpData<ScatterData>(node);
  for (int64_t v : shape) {
    DLG_NODE_CHECK(ctx, node, v >= 0 && v <= INT32_MAX, "shape has dimension ", v);
    data->dims.push_back(static_cast<int32_t>(v));
  }
  const int rank = static_cast<int>(data->dims.size());
  data->index_depth = indices.dims.back();
  DLG_NODE_CHECK(ctx, node, data->index_depth <= rank, "indices' last dim ", data->index_depth,
                 " exceeds the output rank ", rank);
  // updates must be indices.shape[:-1] + shape[index_depth:].
  std::vector<int32_t> expected(indices.dims.begin(), indices.dims.end() - 1);
  expected.insert(expected.end(), data->dims.begin() + data->index_depth, data->dims.end());
  DLG_NODE_CHECK(ctx, node, updates.dims == expected, "updates (tensor \"", updates.name,
                 "\") has shape ", DimsText(updates.dims), ", expected ", DimsText(expected));
  data->num_updates = Product(indices.dims, 0, indices.rank() - 1);
  data->slice_size = Product(data->dims, static_cast<int>(data->index_depth), rank);
  data->strides.assign(data->index_depth, 0);
  for (int64_t k = 0; k < data->index_depth; ++k)
    data->strides[k] = Product(data->dims, static_cast<int>(k) + 1, rank);
  ctx.SetOutputDims(node, 0, data->dims);
}

void EvalScatterNd(KernelContext& ctx, const Node& node) {
  const ScatterData& d = *node.data<ScatterData>();
  const Tensor& indices = ctx.in(node, 0);
  const Tensor& updates = ctx.in(node, 1);
  Tensor& out = ctx.out(node, 0);
  const int64_t n = out.NumElements();
  bool ok = true;
  switch (updates.type) {
    case DataType::kFloat32:
      ok = ScatterNd(d, indices, updates.data_as<float>(), out.data_as<float>(), n);
      break;
    case DataType::kUInt8:
      ok = ScatterNd(d, indices, updates.data_as<uint8_t>(), out.data_as<uint8_t>(), n);
      break;
    case DataType::kInt8:
      ok = ScatterNd(d, indices, updates.data_as<int8_t>(), out.data_as<int8_t>(), n);
      break;
    case DataType::kInt32:
      ok = ScatterNd(d, indices, updates.data_as<int32_t>(), out.data_as<int32_t>(), n);
      break;
    case DataType::kInt64:
      ok = ScatterNd(d, indices, updates.data_as<int64_t>(), out.data_as<int64_t>(), n);
      break;
    default:
      ok = ScatterNd(d, indices, updates.data_as<bool>(), out.data_as<bool>(), n);
      break;
  }
  if (!ok) ctx.SetEvalError(node, "an index is out of bounds of the output shape");
}

// ------------------------------------------------------------------ DYNAMIC_UPDATE_SLICE

namespace {
constexpr int kMaxUpdateRank = 8;

template <class T>
struct UpdateSlice {
  // Copies the update block (dims udims) into out at start[], recursively.
  static void Block(int d, int rank, const int32_t* odims, const int32_t* udims,
                    const int64_t* start, const T* update, int64_t& u, T* out, int64_t base) {
    if (d == rank) {
      out[base] = update[u++];
      return;
    }
    const int64_t stride = [&] {
      int64_t s = 1;
      for (int k = d + 1; k < rank; ++k) s *= odims[k];
      return s;
    }();
    for (int32_t i = 0; i < udims[d]; ++i)
      Block(d + 1, rank, odims, udims, start, update, u, out, base + (start[d] + i) * stride);
  }
  static void Run(const Tensor& operand, const Tensor& update, const Tensor& starts, Tensor& out) {
    const int rank = operand.rank();
    if (out.data != operand.data && operand.bytes != 0)
      std::memcpy(out.data, operand.data, operand.bytes);
    if (update.NumElements() == 0) return;
    int64_t start[kMaxUpdateRank] = {};
    for (int d = 0; d < rank; ++d) {
      // Clamped so the update fits (as XLA's DynamicUpdateSlice).
      const int64_t limit = int64_t{operand.dims[d]} - update.dims[d];
      start[d] = std::clamp<int64_t>(IndexAt(starts, d), 0, limit);
    }
    int64_t u = 0;
    Block(0, rank, operand.dims.data(), update.dims.data(), start, update.data_as<T>(), u,
          out.data_as<T>(), 0);
  }
};
}  // namespace

void PrepareDynamicUpdateSlice(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& operand = ctx.input(node, 0);
  const Tensor& update = ctx.input(node, 1);
  const Tensor& starts = ctx.input(node, 2);
  CheckTypes(ctx, node, operand,
             {DataType::kFloat32, DataType::kFloat16, DataType::kUInt8, DataType::kInt8,
              DataType::kInt16, DataType::kUInt16, DataType::kInt32, DataType::kUInt32,
              DataType::kInt64, DataType::kBool});
  CheckSameType(ctx, node, operand, update);
  CheckSameType(ctx, node, operand, ctx.output(node, 0));
  CheckTypes(ctx, node, starts, {DataType::kInt32, DataType::kInt64});
  const int rank = operand.rank();
  DLG_NODE_CHECK(ctx, node, rank <= kMaxUpdateRank, "operand rank ", rank, " exceeds ",
                 kMaxUpdateRank);
  DLG_NODE_CHECK(ctx, node, update.rank() == rank, "update (tensor \"", update.name,
                 "\") has rank ", update.rank(), ", operand has ", rank);
  for (int d = 0; d < rank; ++d)
    DLG_NODE_CHECK(ctx, node, update.dims[d] <= operand.dims[d], "update ",
                   DimsText(update.dims), " does not fit operand ", DimsText(operand.dims));
  DLG_NODE_CHECK(ctx, node, starts.rank() == 1 && starts.dims[0] == rank, "start_indices (tensor \"",
                 starts.name, "\") has shape ", DimsText(starts.dims), ", expected [", rank, "]");
  ctx.SetOutputDims(node, 0, operand.dims);
}

void EvalDynamicUpdateSlice(KernelContext& ctx, const Node& node) {
  const Tensor& operand = ctx.in(node, 0);
  BySize<UpdateSlice>(DataTypeSize(operand.type), operand, ctx.in(node, 1), ctx.in(node, 2),
                      ctx.out(node, 0));
}

// ------------------------------------------------------------------ EMBEDDING_LOOKUP

namespace {
// Hybrid lookups dequantize rows: one scale for the table or one per row.
struct EmbeddingData {
  bool hybrid = false;
  std::vector<float> scales;
  int64_t row_elements = 0;
};
}  // namespace

void PrepareEmbeddingLookup(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& lookup = ctx.input(node, 0);
  const Tensor& value = ctx.input(node, 1);
  const Tensor& out = ctx.output(node, 0);
  ctx.CheckType(node, lookup, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, lookup.rank() == 1, "lookup (tensor \"", lookup.name,
                 "\") must be 1-D");
  DLG_NODE_CHECK(ctx, node, value.rank() >= 2, "value (tensor \"", value.name,
                 "\") must have rank >= 2");
  CheckTypes(ctx, node, value, {DataType::kFloat32, DataType::kInt8, DataType::kUInt8});
  auto data = MakeOpData<EmbeddingData>(node);
  data->row_elements = Product(value.dims, 1, value.rank());
  const Quantization& q = *value.quantization;
  if (value.type != DataType::kFloat32 && out.type == DataType::kFloat32) {
    // Hybrid: symmetric 8-bit rows (UINT8 bytes are read as INT8, as TFLite
    // does) times the scale of the table or of each row.
    DLG_NODE_CHECK(ctx, node, !q.scale.empty(), "hybrid lookup: value (tensor \"", value.name,
                   "\") has no quantization scale");
    for (int64_t zp : q.zero_point)
      DLG_NODE_CHECK(ctx, node, zp == 0, "hybrid lookup: value (tensor \"", value.name,
                     "\") must be symmetric (zero point 0), has ", zp);
    if (q.scale.size() > 1)
      DLG_NODE_CHECK(ctx, node,
                     q.quantized_dimension == 0 &&
                         q.scale.size() == static_cast<size_t>(value.dims[0]),
                     "hybrid lookup: per-axis scales must be one per row (dimension 0)");
    data->hybrid = true;
    data->scales = q.scale;
  } else {
    DLG_NODE_CHECK(ctx, node, out.type == value.type, "output \"", out.name, "\" is ",
                   DataTypeName(out.type), ", value is ", DataTypeName(value.type),
                   "; expected the same type or FLOAT32 (hybrid)");
    if (q.scale.size() > 1)
      ctx.Fail(node, "per-axis quantized value (tensor \"", value.name,
               "\") is only supported with a FLOAT32 output");
  }
  std::vector<int32_t> dims = value.dims;
  dims[0] = lookup.dims[0];
  ctx.SetOutputDims(node, 0, dims);
}

void EvalEmbeddingLookup(KernelContext& ctx, const Node& node) {
  const EmbeddingData& d = *node.data<EmbeddingData>();
  const Tensor& lookup = ctx.in(node, 0);
  const Tensor& value = ctx.in(node, 1);
  Tensor& out = ctx.out(node, 0);
  const int32_t rows = value.dims[0];
  const size_t row_bytes = rows == 0 ? 0 : value.bytes / rows;
  for (int32_t i = 0; i < lookup.dims[0]; ++i) {
    const int32_t row = lookup.data_as<int32_t>()[i];
    if (row < 0 || row >= rows) {
      ctx.SetEvalError(node, "a lookup index is out of bounds of the value rows");
      return;
    }
    if (!d.hybrid) {
      std::memcpy(out.data + i * row_bytes, value.data + row * row_bytes, row_bytes);
      continue;
    }
    const float scale = d.scales.size() > 1 ? d.scales[row] : d.scales[0];
    const int8_t* src = value.data_as<int8_t>() + row * d.row_elements;
    float* dst = out.data_as<float>() + i * d.row_elements;
    for (int64_t j = 0; j < d.row_elements; ++j) dst[j] = src[j] * scale;
  }
}

// ---------------------------------------------- SEGMENT_SUM, UNSORTED_SEGMENT_*

namespace {
enum class SegmentKind { kSum, kMax, kMin, kProd };

struct SegmentData {
  int64_t num_ids = 0, num_segments = 0, row_size = 1;
};

template <class T>
bool RunSegment(SegmentKind kind, const SegmentData& d, const Tensor& in, const Tensor& ids,
                Tensor& out) {
  const T* x = in.data_as<T>();
  const int32_t* s = ids.data_as<int32_t>();
  T* y = out.data_as<T>();
  switch (kind) {
    case SegmentKind::kSum:
      return reference::SegmentReduce(x, s, d.num_ids, d.num_segments, d.row_size, T(0),
                                      [](T a, T b) {
                                        if constexpr (std::is_integral_v<T>)
                                          return static_cast<T>(static_cast<uint32_t>(a) +
                                                                static_cast<uint32_t>(b));
                                        else
                                          return a + b;
                                      },
                                      y);
    case SegmentKind::kProd:
      return reference::SegmentReduce(x, s, d.num_ids, d.num_segments, d.row_size, T(1),
                                      [](T a, T b) {
                                        if constexpr (std::is_integral_v<T>)
                                          return static_cast<T>(static_cast<uint32_t>(a) *
                                                                static_cast<uint32_t>(b));
                                        else
                                          return a * b;
                                      },
                                      y);
    case SegmentKind::kMax:
      return reference::SegmentReduce(x, s, d.num_ids, d.num_segments, d.row_size,
                                      std::numeric_limits<T>::lowest(),
                                      [](T a, T b) { return std::max(a, b); }, y);
    default:
      return reference::SegmentReduce(x, s, d.num_ids, d.num_segments, d.row_size,
                                      std::numeric_limits<T>::max(),
                                      [](T a, T b) { return std::min(a, b); }, y);
  }
}

void EvalSegment(KernelContext& ctx, const Node& node, SegmentKind kind) {
  const SegmentData& d = *node.data<SegmentData>();
  const Tensor& in = ctx.in(node, 0);
  const Tensor& ids = ctx.in(node, 1);
  Tensor& out = ctx.out(node, 0);
  const bool ok = in.type == DataType::kFloat32 ? RunSegment<float>(kind, d, in, ids, out)
                                                : RunSegment<int32_t>(kind, d, in, ids, out);
  if (!ok) ctx.SetEvalError(node, "a segment id is >= num_segments");
}

// UNSORTED_SEGMENT_*: ids shaped like a prefix of data, constant num_segments.
void PrepareUnsortedSegment(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& ids = ctx.input(node, 1);
  CheckTypes(ctx, node, in, {DataType::kFloat32, DataType::kInt32});
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  ctx.CheckType(node, ids, DataType::kInt32);
  const Tensor& num_tensor = ctx.input(node, 2);
  ctx.CheckType(node, num_tensor, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, ids.rank() <= in.rank(), "segment_ids (tensor \"", ids.name,
                 "\") ", DimsText(ids.dims), " is not a prefix of data ", DimsText(in.dims));
  for (int d = 0; d < ids.rank(); ++d)
    DLG_NODE_CHECK(ctx, node, ids.dims[d] == in.dims[d], "segment_ids (tensor \"", ids.name,
                   "\") ", DimsText(ids.dims), " is not a prefix of data ", DimsText(in.dims));
  const int64_t num = ConstScalar(ctx, node, num_tensor, "num_segments");
  DLG_NODE_CHECK(ctx, node, num >= 0 && num <= INT32_MAX, "num_segments ", num,
                 " must be >= 0");
  if (ids.is_constant()) {
    const std::vector<int64_t> values = ConstIntegers(ctx, node, ids, "segment_ids");
    for (int64_t v : values)
      DLG_NODE_CHECK(ctx, node, v < num, "segment id ", v, " is >= num_segments ", num);
  }
  auto data = MakeOpData<SegmentData>(node);
  data->num_ids = ids.NumElements();
  data->num_segments = num;
  data->row_size = Product(in.dims, ids.rank(), in.rank());
  std::vector<int32_t> dims = {static_cast<int32_t>(num)};
  dims.insert(dims.end(), in.dims.begin() + ids.rank(), in.dims.end());
  ctx.SetOutputDims(node, 0, dims);
}
}  // namespace

void PrepareSegmentSum(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& ids = ctx.input(node, 1);
  CheckTypes(ctx, node, in, {DataType::kFloat32, DataType::kInt32});
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  ctx.CheckType(node, ids, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, in.rank() >= 1 && ids.rank() == 1 && ids.dims[0] == in.dims[0],
                 "segment_ids (tensor \"", ids.name, "\") ", DimsText(ids.dims),
                 " must be 1-D with data's first dim (data ", DimsText(in.dims), ")");
  // The output's first dim is the last id + 1: the ids decide the shape.
  const std::vector<int64_t> values = ConstIntegers(ctx, node, ids, "segment_ids");
  for (size_t i = 0; i < values.size(); ++i) {
    DLG_NODE_CHECK(ctx, node, values[i] >= 0, "segment id ", values[i], " is negative");
    if (i > 0)
      DLG_NODE_CHECK(ctx, node, values[i] >= values[i - 1],
                     "segment_ids must be sorted ascending; id ", values[i], " follows ",
                     values[i - 1]);
  }
  auto data = MakeOpData<SegmentData>(node);
  data->num_ids = ids.dims[0];
  data->num_segments = values.empty() ? 0 : values.back() + 1;
  data->row_size = Product(in.dims, 1, in.rank());
  std::vector<int32_t> dims = in.dims;
  dims[0] = static_cast<int32_t>(data->num_segments);
  ctx.SetOutputDims(node, 0, dims);
}

void EvalSegmentSum(KernelContext& ctx, const Node& node) { EvalSegment(ctx, node, SegmentKind::kSum); }

void PrepareUnsortedSegmentSum(KernelContext& ctx, Node& node) { PrepareUnsortedSegment(ctx, node); }
void EvalUnsortedSegmentSum(KernelContext& ctx, const Node& node) {
  EvalSegment(ctx, node, SegmentKind::kSum);
}
void PrepareUnsortedSegmentMax(KernelContext& ctx, Node& node) { PrepareUnsortedSegment(ctx, node); }
void EvalUnsortedSegmentMax(KernelContext& ctx, const Node& node) {
  EvalSegment(ctx, node, SegmentKind::kMax);
}
void PrepareUnsortedSegmentMin(KernelContext& ctx, Node& node) { PrepareUnsortedSegment(ctx, node); }
void EvalUnsortedSegmentMin(KernelContext& ctx, const Node& node) {
  EvalSegment(ctx, node, SegmentKind::kMin);
}
void PrepareUnsortedSegmentProd(KernelContext& ctx, Node& node) {
  PrepareUnsortedSegment(ctx, node);
}
void EvalUnsortedSegmentProd(KernelContext& ctx, const Node& node) {
  EvalSegment(ctx, node, SegmentKind::kProd);
}

// ------------------------------------------------------------------ MATRIX_DIAG, MATRIX_SET_DIAG

namespace {
template <class T>
struct DiagOps {
  static void Run(bool set, const Tensor& in, const Tensor* diag, Tensor& out) {
    if (!set) {
      const int64_t n = in.dims.back();
      reference::MatrixDiag(in.data_as<T>(), n == 0 ? 0 : in.NumElements() / n, n,
                            out.data_as<T>());
      return;
    }
    const int r = in.rank();
    const int64_t rows = in.dims[r - 2], cols = in.dims[r - 1];
    const int64_t batch = rows * cols == 0 ? 0 : in.NumElements() / (rows * cols);
    reference::MatrixSetDiag(in.data_as<T>(), diag->data_as<T>(), batch, rows, cols,
                             out.data_as<T>());
  }
};

void CheckDiagType(const KernelContext& ctx, const Node& node, const Tensor& t) {
  // Not FLOAT16 / UINT16: LiteRT 2.3 accepts them but writes the values in a
  // row rather than on the diagonal, so there is no answer to match.
  CheckTypes(ctx, node, t,
             {DataType::kFloat32, DataType::kUInt8, DataType::kInt8, DataType::kInt16,
              DataType::kInt32, DataType::kUInt32, DataType::kInt64, DataType::kBool});
}
}  // namespace

void PrepareMatrixDiag(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckDiagType(ctx, node, in);
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  DLG_NODE_CHECK(ctx, node, in.rank() >= 1, "input \"", in.name, "\" is a scalar");
  std::vector<int32_t> dims = in.dims;
  dims.push_back(in.dims.back());
  ctx.SetOutputDims(node, 0, dims);
}

void EvalMatrixDiag(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  BySize<DiagOps>(DataTypeSize(in.type), false, in, static_cast<const Tensor*>(nullptr),
                  ctx.out(node, 0));
}

void PrepareMatrixSetDiag(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& diag = ctx.input(node, 1);
  CheckDiagType(ctx, node, in);
  CheckSameType(ctx, node, in, diag);
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  const int r = in.rank();
  DLG_NODE_CHECK(ctx, node, r >= 2, "input \"", in.name, "\" must have rank >= 2");
  std::vector<int32_t> expected(in.dims.begin(), in.dims.end() - 2);
  expected.push_back(std::min(in.dims[r - 2], in.dims[r - 1]));
  DLG_NODE_CHECK(ctx, node, diag.dims == expected, "diagonal (tensor \"", diag.name,
                 "\") has shape ", DimsText(diag.dims), ", expected ", DimsText(expected));
  ctx.SetOutputDims(node, 0, in.dims);
}

void EvalMatrixSetDiag(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  BySize<DiagOps>(DataTypeSize(in.type), true, in, &ctx.in(node, 1), ctx.out(node, 0));
}

// ------------------------------------------------------------------ BUCKETIZE

void PrepareBucketize(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  CheckTypes(ctx, node, in,
             {DataType::kFloat32, DataType::kFloat64, DataType::kInt32, DataType::kInt64});
  ctx.CheckType(node, ctx.output(node, 0), DataType::kInt32);
  const BucketizeParams* p = std::get_if<BucketizeParams>(&node.def->params);
  DLG_NODE_CHECK(ctx, node, p != nullptr, "BUCKETIZE needs BucketizeOptions (boundaries)");
  DLG_NODE_CHECK(ctx, node, std::is_sorted(p->boundaries.begin(), p->boundaries.end()),
                 "boundaries must be sorted ascending");
  ctx.SetOutputDims(node, 0, in.dims);
}

void EvalBucketize(KernelContext& ctx, const Node& node) {
  const BucketizeParams& p = node.params<BucketizeParams>();
  const Tensor& in = ctx.in(node, 0);
  int32_t* out = ctx.out(node, 0).data_as<int32_t>();
  const int64_t n = in.NumElements();
  const float* b = p.boundaries.data();
  const int64_t nb = static_cast<int64_t>(p.boundaries.size());
  switch (in.type) {
    case DataType::kFloat32: reference::Bucketize(in.data_as<float>(), n, b, nb, out); break;
    case DataType::kFloat64: reference::Bucketize(in.data_as<double>(), n, b, nb, out); break;
    case DataType::kInt32: reference::Bucketize(in.data_as<int32_t>(), n, b, nb, out); break;
    default: reference::Bucketize(in.data_as<int64_t>(), n, b, nb, out); break;
  }
}

// ------------------------------------------------------------------ REVERSE_SEQUENCE

namespace {
struct ReverseSequenceData {
  int seq_dim = 0, batch_dim = 0;
  std::vector<int64_t> strides;
};

template <class T>
struct ReverseSequenceRun {
  static void Run(const ReverseSequenceData& d, const Tensor& in, const Tensor& lengths,
                  Tensor& out, bool& ok) {
    const T* x = in.data_as<T>();
    T* y = out.data_as<T>();
    const int64_t n = in.NumElements();
    const int rank = in.rank();
    const int64_t seq_size = in.dims[d.seq_dim];
    for (int64_t i = 0; i < n; ++i) {
      // Coordinates along the batch and sequence dims of element i.
      const int64_t b = (i / d.strides[d.batch_dim]) % in.dims[d.batch_dim];
      const int64_t s = (i / d.strides[d.seq_dim]) % seq_size;
      const int64_t len = IndexAt(lengths, b);
      if (len < 0 || len > seq_size) {
        ok = false;
        return;
      }
      const int64_t src = s < len ? i + (len - 1 - 2 * s) * d.strides[d.seq_dim] : i;
      y[i] = x[src];
    }
    (void)rank;
  }
};
}  // namespace

void PrepareReverseSequence(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 2, 2);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& lengths = ctx.input(node, 1);
  CheckTypes(ctx, node, in,
             {DataType::kFloat32, DataType::kUInt8, DataType::kInt8, DataType::kInt16,
              DataType::kInt32, DataType::kInt64, DataType::kBool});
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  CheckTypes(ctx, node, lengths, {DataType::kInt32, DataType::kInt64});
  const ReverseSequenceParams p = ParamsOr<ReverseSequenceParams>(node);
  const int rank = in.rank();
  auto data = MakeOpData<ReverseSequenceData>(node);
  data->seq_dim = ResolveAxis(ctx, node, p.seq_dim, rank, "seq_dim");
  data->batch_dim = ResolveAxis(ctx, node, p.batch_dim, rank, "batch_dim");
  DLG_NODE_CHECK(ctx, node, data->seq_dim != data->batch_dim, "seq_dim and batch_dim are both ",
                 data->seq_dim);
  DLG_NODE_CHECK(ctx, node, lengths.rank() == 1 && lengths.dims[0] == in.dims[data->batch_dim],
                 "seq_lengths (tensor \"", lengths.name, "\") has shape ", DimsText(lengths.dims),
                 ", expected [", in.dims[data->batch_dim], "]");
  data->strides.assign(rank, 1);
  for (int d = rank - 2; d >= 0; --d) data->strides[d] = data->strides[d + 1] * in.dims[d + 1];
  ctx.SetOutputDims(node, 0, in.dims);
}

void EvalReverseSequence(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  bool ok = true;
  BySize<ReverseSequenceRun>(DataTypeSize(in.type), *node.data<ReverseSequenceData>(), in,
                             ctx.in(node, 1), ctx.out(node, 0), ok);
  if (!ok) ctx.SetEvalError(node, "a sequence length is negative or exceeds the sequence dim");
}

// ------------------------------------------------------------------ WHERE

namespace {
struct WhereData {
  std::vector<int64_t> coords;  // computed in Prepare from a constant condition
};
}  // namespace

void PrepareWhere(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& cond = ctx.input(node, 0);
  ctx.CheckType(node, ctx.output(node, 0), DataType::kInt64);
  CheckTypes(ctx, node, cond,
             {DataType::kBool, DataType::kFloat32, DataType::kInt32, DataType::kInt64,
              DataType::kInt8, DataType::kUInt8});
  // The number of output rows is the number of true elements: only known in
  // Prepare when the condition is a constant.
  if (cond.NumElements() != 0)
    ctx.RequireValues(node, cond, "(the condition) is computed at run time and WHERE's output "
                      "size depends on its values");
  auto data = MakeOpData<WhereData>(node);
  const int rank = cond.rank();
  const size_t size = DataTypeSize(cond.type);
  DLG_NODE_CHECK(ctx, node, cond.bytes >= static_cast<size_t>(cond.NumElements()) * size,
                 "condition (tensor \"", cond.name, "\") has no data");
  int64_t rows = 0;
  for (int64_t i = 0; i < cond.NumElements(); ++i) {
    bool nonzero = false;
    for (size_t b = 0; b < size; ++b) nonzero |= cond.data[i * size + b] != 0;
    if (cond.type == DataType::kFloat32) {
      float v;
      std::memcpy(&v, cond.data + i * 4, 4);
      nonzero = v != 0.0f;
    }
    if (!nonzero) continue;
    ++rows;
    int64_t rest = i;
    std::vector<int64_t> c(rank);
    for (int d = rank - 1; d >= 0; --d) {
      c[d] = rest % cond.dims[d];
      rest /= cond.dims[d];
    }
    data->coords.insert(data->coords.end(), c.begin(), c.end());
  }
  ctx.SetOutputDims(node, 0, {static_cast<int32_t>(rows), rank});
}

void EvalWhere(KernelContext& ctx, const Node& node) {
  const WhereData& d = *node.data<WhereData>();
  if (!d.coords.empty())
    std::memcpy(ctx.out(node, 0).data, d.coords.data(), d.coords.size() * sizeof(int64_t));
}

// ------------------------------------------------------------------ SPARSE_TO_DENSE

namespace {
struct SparseToDenseData {
  int64_t num_indices = 0, index_depth = 1;
  std::vector<int64_t> strides;  // output strides
  std::vector<int32_t> dims;
  bool scalar_value = false;
};

template <class T>
struct SparseToDenseRun {
  static void Run(const SparseToDenseData& d, const Tensor& indices, const Tensor& values,
                  const Tensor& default_value, Tensor& out, bool& ok) {
    T* y = out.data_as<T>();
    std::fill_n(y, out.NumElements(), default_value.data_as<T>()[0]);
    for (int64_t i = 0; i < d.num_indices; ++i) {
      int64_t offset = 0;
      for (int64_t k = 0; k < d.index_depth; ++k) {
        const int64_t idx = IndexAt(indices, i * d.index_depth + k);
        if (idx < 0 || idx >= d.dims[k]) {
          ok = false;
          return;
        }
        offset += idx * d.strides[k];
      }
      y[offset] = values.data_as<T>()[d.scalar_value ? 0 : i];
    }
  }
};
}  // namespace

void PrepareSparseToDense(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 4, 4);
  ctx.CheckOutputCount(node, 1);
  const Tensor& indices = ctx.input(node, 0);
  const Tensor& shape_tensor = ctx.input(node, 1);
  const Tensor& values = ctx.input(node, 2);
  const Tensor& default_value = ctx.input(node, 3);
  CheckTypes(ctx, node, indices, {DataType::kInt32, DataType::kInt64});
  CheckTypes(ctx, node, values,
             {DataType::kFloat32, DataType::kInt32, DataType::kInt64, DataType::kInt8,
              DataType::kUInt8});
  CheckSameType(ctx, node, values, default_value);
  CheckSameType(ctx, node, values, ctx.output(node, 0));
  DLG_NODE_CHECK(ctx, node, default_value.NumElements() == 1, "default_value (tensor \"",
                 default_value.name, "\") must hold one element");
  DLG_NODE_CHECK(ctx, node, indices.rank() <= 2, "indices (tensor \"", indices.name,
                 "\") must be 0-D, 1-D or 2-D");
  DLG_NODE_CHECK(ctx, node, values.rank() <= 1, "values (tensor \"", values.name,
                 "\") must be 0-D or 1-D");
  DLG_NODE_CHECK(ctx, node, shape_tensor.rank() == 1, "output_shape (tensor \"",
                 shape_tensor.name, "\") must be 1-D");
  const std::vector<int64_t> shape = ConstIntegers(ctx, node, shape_tensor, "output_shape");
  DLG_NODE_CHECK(ctx, node, shape.size() <= 4, "output rank ", shape.size(),
                 " exceeds 4 (TFLite's limit)");
  auto data = MakeOpData<SparseToDenseData>(node);
  for (int64_t v : shape) {
    DLG_NODE_CHECK(ctx, node, v >= 0 && v <= INT32_MAX, "output_shape has dimension ", v);
    data->dims.push_back(static_cast<int32_t>(v));
  }
  const int rank = static_cast<int>(shape.size());
  if (indices.rank() <= 1) {
    DLG_NODE_CHECK(ctx, node, rank == 1, "1-D indices need a 1-D output_shape, got rank ", rank);
    data->num_indices = indices.NumElements();
    data->index_depth = 1;
  } else {
    DLG_NODE_CHECK(ctx, node, indices.dims[1] == rank, "indices (tensor \"", indices.name,
                   "\") has ", indices.dims[1], " coordinates per index, the output rank is ",
                   rank);
    data->num_indices = indices.dims[0];
    data->index_depth = rank;
  }
  data->scalar_value = values.rank() == 0;
  DLG_NODE_CHECK(ctx, node, data->scalar_value || values.dims[0] == data->num_indices,
                 "values (tensor \"", values.name, "\") has ", values.NumElements(),
                 " elements for ", data->num_indices, " indices");
  data->strides.assign(rank, 1);
  for (int d = rank - 2; d >= 0; --d) data->strides[d] = data->strides[d + 1] * data->dims[d + 1];
  ctx.SetOutputDims(node, 0, data->dims);
}

void EvalSparseToDense(KernelContext& ctx, const Node& node) {
  const Tensor& values = ctx.in(node, 2);
  bool ok = true;
  BySize<SparseToDenseRun>(DataTypeSize(values.type), *node.data<SparseToDenseData>(),
                           ctx.in(node, 0), values, ctx.in(node, 3), ctx.out(node, 0), ok);
  if (!ok) ctx.SetEvalError(node, "an index is out of bounds of output_shape");
}

// ------------------------------------------------------------------ BITCAST

void PrepareBitcast(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 1);
  const Tensor& in = ctx.input(node, 0);
  const Tensor& out = ctx.output(node, 0);
  const size_t in_size = DataTypeSize(in.type), out_size = DataTypeSize(out.type);
  DLG_NODE_CHECK(ctx, node, in_size != 0 && out_size != 0, "BITCAST between ",
                 DataTypeName(in.type), " and ", DataTypeName(out.type), " is not supported");
  std::vector<int32_t> dims = in.dims;
  if (in_size > out_size) {
    // Each input element becomes a trailing dim of in_size / out_size outputs.
    DLG_NODE_CHECK(ctx, node, in_size % out_size == 0, "element sizes do not divide");
    dims.push_back(static_cast<int32_t>(in_size / out_size));
  } else if (in_size < out_size) {
    DLG_NODE_CHECK(ctx, node, out_size % in_size == 0 && !dims.empty() &&
                                  static_cast<size_t>(dims.back()) == out_size / in_size,
                   "input \"", in.name, "\" ", DimsText(in.dims), " must end in a dim of ",
                   out_size / in_size, " to bitcast ", DataTypeName(in.type), " to ",
                   DataTypeName(out.type));
    dims.pop_back();
  }
  ctx.SetOutputDims(node, 0, dims);
}

void EvalBitcast(KernelContext& ctx, const Node& node) {
  const Tensor& in = ctx.in(node, 0);
  if (in.bytes != 0) std::memcpy(ctx.out(node, 0).data, in.data, in.bytes);
}

// ------------------------------------------------ NON_MAX_SUPPRESSION_V4 / V5

namespace {
struct NmsData {
  int32_t num_boxes = 0, max_output_size = 0;
  bool soft = false;  // V5: a sigma input and a selected_scores output
};

void PrepareNms(KernelContext& ctx, Node& node, bool soft) {
  ctx.CheckInputCount(node, soft ? 6 : 5, soft ? 6 : 5);
  ctx.CheckOutputCount(node, soft ? 3 : 2);
  const Tensor& boxes = ctx.input(node, 0);
  const Tensor& scores = ctx.input(node, 1);
  ctx.CheckType(node, boxes, DataType::kFloat32);
  ctx.CheckType(node, scores, DataType::kFloat32);
  DLG_NODE_CHECK(ctx, node, boxes.rank() == 2 && boxes.dims[1] == 4, "boxes (tensor \"",
                 boxes.name, "\") has shape ", DimsText(boxes.dims), ", expected [N,4]");
  DLG_NODE_CHECK(ctx, node, scores.rank() == 1 && scores.dims[0] == boxes.dims[0],
                 "scores (tensor \"", scores.name, "\") has shape ", DimsText(scores.dims),
                 ", expected [", boxes.dims[0], "]");
  const Tensor& max_size = ctx.input(node, 2);
  ctx.CheckType(node, max_size, DataType::kInt32);
  DLG_NODE_CHECK(ctx, node, max_size.rank() == 0, "max_output_size must be a scalar");
  // With a run-time max_output_size TFLite sizes the outputs after selecting.
  const int64_t max_output = ConstScalar(ctx, node, max_size, "max_output_size");
  DLG_NODE_CHECK(ctx, node, max_output >= 0 && max_output <= INT32_MAX, "max_output_size ",
                 max_output, " must be >= 0");
  for (int i = 3; i < (soft ? 6 : 5); ++i) {
    const Tensor& t = ctx.input(node, i);
    ctx.CheckType(node, t, DataType::kFloat32);
    DLG_NODE_CHECK(ctx, node, t.rank() == 0, "tensor \"", t.name, "\" must be a scalar");
  }
  ctx.CheckType(node, ctx.output(node, 0), DataType::kInt32);
  if (soft) ctx.CheckType(node, ctx.output(node, 1), DataType::kFloat32);
  ctx.CheckType(node, ctx.output(node, soft ? 2 : 1), DataType::kInt32);
  auto data = MakeOpData<NmsData>(node);
  data->num_boxes = boxes.dims[0];
  data->max_output_size = static_cast<int32_t>(max_output);
  data->soft = soft;
  node.scratch_bytes = static_cast<size_t>(data->num_boxes) * sizeof(reference::NmsCandidate);
  ctx.SetOutputDims(node, 0, {data->max_output_size});
  if (soft) ctx.SetOutputDims(node, 1, {data->max_output_size});
  ctx.SetOutputDims(node, soft ? 2 : 1, {});
}

void EvalNms(KernelContext& ctx, const Node& node) {
  const NmsData& d = *node.data<NmsData>();
  const float iou_threshold = ctx.in(node, 3).data_as<float>()[0];
  const float score_threshold = ctx.in(node, 4).data_as<float>()[0];
  const float sigma = d.soft ? ctx.in(node, 5).data_as<float>()[0] : 0.0f;
  if (sigma < 0) {
    ctx.SetEvalError(node, "soft_nms_sigma is negative");
    return;
  }
  int32_t* indices = ctx.out(node, 0).data_as<int32_t>();
  float* selected_scores = d.soft ? ctx.out(node, 1).data_as<float>() : nullptr;
  int32_t* count = ctx.out(node, d.soft ? 2 : 1).data_as<int32_t>();
  reference::NonMaxSuppression(ctx.in(node, 0).data_as<float>(), d.num_boxes,
                               ctx.in(node, 1).data_as<float>(), d.max_output_size,
                               iou_threshold, score_threshold, sigma,
                               reinterpret_cast<reference::NmsCandidate*>(node.scratch), indices,
                               selected_scores, count);
  // Unused slots are zero, as in TFLite (downstream GATHERs read them).
  for (int32_t i = *count; i < d.max_output_size; ++i) {
    indices[i] = 0;
    if (selected_scores) selected_scores[i] = 0.0f;
  }
}
}  // namespace

void PrepareNonMaxSuppressionV4(KernelContext& ctx, Node& node) { PrepareNms(ctx, node, false); }
void EvalNonMaxSuppressionV4(KernelContext& ctx, const Node& node) { EvalNms(ctx, node); }
void PrepareNonMaxSuppressionV5(KernelContext& ctx, Node& node) { PrepareNms(ctx, node, true); }
void EvalNonMaxSuppressionV5(KernelContext& ctx, const Node& node) { EvalNms(ctx, node); }

// ------------------------------------------------------------------ UNIQUE

namespace {
struct UniqueData {
  std::vector<uint8_t> values;  // the unique values' bytes, in order of first occurrence
  std::vector<int64_t> index;   // per input element, its value's position
};
}  // namespace

void PrepareUnique(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 1, 1);
  ctx.CheckOutputCount(node, 2);
  const Tensor& in = ctx.input(node, 0);
  CheckTypes(ctx, node, in,
             {DataType::kFloat32, DataType::kUInt8, DataType::kInt8, DataType::kInt16,
              DataType::kInt32, DataType::kInt64});
  CheckSameType(ctx, node, in, ctx.output(node, 0));
  const Tensor& idx = ctx.output(node, 1);
  CheckTypes(ctx, node, idx, {DataType::kInt32, DataType::kInt64});
  if (const auto* p = std::get_if<UniqueParams>(&node.def->params))
    DLG_NODE_CHECK(ctx, node, p->idx_out_type == idx.type, "idx_out_type ",
                   DataTypeName(p->idx_out_type), " does not match output \"", idx.name,
                   "\" of type ", DataTypeName(idx.type));
  DLG_NODE_CHECK(ctx, node, in.rank() == 1, "input \"", in.name, "\" must be 1-D");
  // The first output's length is the number of distinct values: only known
  // in Prepare for a constant input.
  if (in.NumElements() != 0)
    ctx.RequireValues(node, in, "(the input) is computed at run time and UNIQUE's output size "
                      "depends on its values");
  const size_t size = DataTypeSize(in.type);
  const int64_t n = in.NumElements();
  DLG_NODE_CHECK(ctx, node, in.bytes >= static_cast<size_t>(n) * size, "input \"", in.name,
                 "\" has no data");
  auto data = MakeOpData<UniqueData>(node);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* v = in.data + i * size;
    int64_t found = -1;
    for (int64_t k = 0; k < count && found < 0; ++k) {
      bool equal;
      if (in.type == DataType::kFloat32) {
        float a, b;
        std::memcpy(&a, v, 4);
        std::memcpy(&b, data->values.data() + k * 4, 4);
        equal = a == b;  // -0 and +0 are one value, NaNs are all distinct
      } else {
        equal = std::memcmp(v, data->values.data() + k * size, size) == 0;
      }
      if (equal) found = k;
    }
    if (found < 0) {
      found = count++;
      data->values.insert(data->values.end(), v, v + size);
    }
    data->index.push_back(found);
  }
  ctx.SetOutputDims(node, 0, {static_cast<int32_t>(count)});
  ctx.SetOutputDims(node, 1, {static_cast<int32_t>(n)});
}

void EvalUnique(KernelContext& ctx, const Node& node) {
  const UniqueData& d = *node.data<UniqueData>();
  if (!d.values.empty()) std::memcpy(ctx.out(node, 0).data, d.values.data(), d.values.size());
  Tensor& idx = ctx.out(node, 1);
  for (size_t i = 0; i < d.index.size(); ++i) {
    if (idx.type == DataType::kInt32)
      idx.data_as<int32_t>()[i] = static_cast<int32_t>(d.index[i]);
    else
      idx.data_as<int64_t>()[i] = d.index[i];
  }
}

}  // namespace delegato
