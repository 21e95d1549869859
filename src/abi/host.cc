// delegato as the host of a TFLite external delegate plugin: the TfLiteContext
// a plugin sees (built over a delegato model), and the plugin's kernels as
// delegato DelegateKernels.
#include "delegato/external_delegate.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "abi/builtin_params.h"
#include "abi/tflite_abi.h"
#include "core/error.h"
#include "delegate/graph_view.h"
#include "delegate/partitioner.h"
#include "delegato/interpreter.h"
#include "model/model.h"

namespace delegato {

using namespace abi;  // NOLINT: the ABI's names read best unqualified here

namespace {

using CreateFn = ExternalDelegate::PluginCreateFunction;
using DestroyFn = ExternalDelegate::PluginDestroyFunction;

thread_local std::string* g_create_messages = nullptr;
void CollectCreateError(const char* message) {
  if (g_create_messages && message) *g_create_messages += message;
}

TfLiteType ToTfLiteType(DataType type) {
  switch (type) {
    case DataType::kFloat32: return kTfLiteFloat32;
    case DataType::kInt32: return kTfLiteInt32;
    case DataType::kUInt8: return kTfLiteUInt8;
    case DataType::kInt64: return kTfLiteInt64;
    case DataType::kString: return kTfLiteString;
    case DataType::kBool: return kTfLiteBool;
    case DataType::kInt16: return kTfLiteInt16;
    case DataType::kComplex64: return kTfLiteComplex64;
    case DataType::kInt8: return kTfLiteInt8;
    case DataType::kFloat16: return kTfLiteFloat16;
    case DataType::kFloat64: return kTfLiteFloat64;
    case DataType::kComplex128: return kTfLiteComplex128;
    case DataType::kUInt64: return kTfLiteUInt64;
    case DataType::kResource: return kTfLiteResource;
    case DataType::kVariant: return kTfLiteVariant;
    case DataType::kUInt32: return kTfLiteUInt32;
    case DataType::kUInt16: return kTfLiteUInt16;
    case DataType::kInt4: return kTfLiteInt4;
    case DataType::kBFloat16: return kTfLiteBFloat16;
    default: return kTfLiteNoType;
  }
}

TfLiteIntArray* NewIntArray(const std::vector<int32_t>& values) {
  TfLiteIntArray* array = MallocIntArray(static_cast<int>(values.size()));
  DLG_CHECK(array, "out of memory");
  std::copy(values.begin(), values.end(), array->data);
  return array;
}

TfLitePadding ToPadding(Padding p) { return p == Padding::kSame ? kTfLitePaddingSame : kTfLitePaddingValid; }
TfLiteFusedActivation ToAct(Activation a) { return static_cast<TfLiteFusedActivation>(static_cast<int>(a)); }

template <class T>
T* Calloc() {
  return static_cast<T*>(std::calloc(1, sizeof(T)));
}

// TFLite's builtin parameter struct for `op` (calloc'ed; nullptr when the op
// has none or delegato does not know its struct).
void* BuiltinData(BuiltinOp builtin, const OperatorDef& op) {
  switch (builtin) {
    case BuiltinOp::kConv2d: {
      auto* p = std::get_if<Conv2DParams>(&op.params);
      if (!p) return nullptr;
      auto* out = Calloc<TfLiteConvParams>();
      out->padding = ToPadding(p->padding);
      out->stride_width = p->stride_w, out->stride_height = p->stride_h;
      out->dilation_width_factor = p->dilation_w, out->dilation_height_factor = p->dilation_h;
      out->activation = ToAct(p->activation);
      out->quantized_bias_type = p->quantized_bias_type == DataType::kFloat32 ? kTfLiteNoType : ToTfLiteType(p->quantized_bias_type);
      return out;
    }
    case BuiltinOp::kDepthwiseConv2d: {
      auto* p = std::get_if<DepthwiseConv2DParams>(&op.params);
      if (!p) return nullptr;
      auto* out = Calloc<TfLiteDepthwiseConvParams>();
      out->padding = ToPadding(p->padding);
      out->stride_width = p->stride_w, out->stride_height = p->stride_h;
      out->depth_multiplier = p->depth_multiplier;
      out->dilation_width_factor = p->dilation_w, out->dilation_height_factor = p->dilation_h;
      out->activation = ToAct(p->activation);
      return out;
    }
    case BuiltinOp::kAveragePool2d:
    case BuiltinOp::kMaxPool2d: {
      auto* p = std::get_if<Pool2DParams>(&op.params);
      if (!p) return nullptr;
      auto* out = Calloc<TfLitePoolParams>();
      out->padding = ToPadding(p->padding);
      out->stride_width = p->stride_w, out->stride_height = p->stride_h;
      out->filter_width = p->filter_w, out->filter_height = p->filter_h;
      out->activation = ToAct(p->activation);
      return out;
    }
    case BuiltinOp::kFullyConnected: {
      auto* p = std::get_if<FullyConnectedParams>(&op.params);
      if (!p) return nullptr;
      auto* out = Calloc<TfLiteFullyConnectedParams>();
      out->activation = ToAct(p->activation);
      out->weights_format = p->weights_format;
      out->keep_num_dims = p->keep_num_dims;
      out->asymmetric_quantize_inputs = p->asymmetric_quantize_inputs;
      out->quantized_bias_type = p->quantized_bias_type == DataType::kFloat32 ? kTfLiteNoType : ToTfLiteType(p->quantized_bias_type);
      return out;
    }
    case BuiltinOp::kAdd:
    case BuiltinOp::kSub: {
      auto* out = Calloc<TfLiteAddSubParams>();
      out->pot_scale_int16 = true;
      if (auto* p = std::get_if<ElementwiseParams>(&op.params)) {
        out->activation = ToAct(p->activation);
        out->pot_scale_int16 = p->pot_scale_int16;
      }
      return out;
    }
    case BuiltinOp::kMul:
    case BuiltinOp::kDiv: {
      auto* out = Calloc<TfLiteActivationParams>();
      if (auto* p = std::get_if<ElementwiseParams>(&op.params)) out->activation = ToAct(p->activation);
      return out;
    }
    case BuiltinOp::kSoftmax: {
      auto* out = Calloc<TfLiteSoftmaxParams>();
      out->beta = 1.0f;
      if (auto* p = std::get_if<SoftmaxParams>(&op.params)) out->beta = p->beta;
      return out;
    }
    case BuiltinOp::kConcatenation: {
      auto* out = Calloc<TfLiteConcatenationParams>();
      if (auto* p = std::get_if<ConcatenationParams>(&op.params)) out->axis = p->axis, out->activation = ToAct(p->activation);
      return out;
    }
    case BuiltinOp::kReshape: {
      auto* out = Calloc<TfLiteReshapeParams>();
      if (auto* p = std::get_if<ReshapeParams>(&op.params)) {
        const int n = std::min<int>(static_cast<int>(p->new_shape.size()), kTfLiteMaxReshapeDims);
        std::copy(p->new_shape.begin(), p->new_shape.begin() + n, out->shape);
        out->num_dimensions = n;
      }
      return out;
    }
    case BuiltinOp::kSqueeze: {
      auto* out = Calloc<TfLiteSqueezeParams>();
      if (auto* p = std::get_if<SqueezeParams>(&op.params)) {
        const int n = std::min<int>(static_cast<int>(p->squeeze_dims.size()), 8);
        std::copy(p->squeeze_dims.begin(), p->squeeze_dims.begin() + n, out->squeeze_dims);
        out->num_squeeze_dims = n;
      }
      return out;
    }
    case BuiltinOp::kSplit:
    case BuiltinOp::kSplitV: {
      auto* out = Calloc<TfLiteSplitParams>();
      if (auto* p = std::get_if<SplitParams>(&op.params)) out->num_splits = p->num_splits;
      return out;
    }
    case BuiltinOp::kMean: {
      auto* out = Calloc<TfLiteReducerParams>();
      if (auto* p = std::get_if<ReducerParams>(&op.params)) out->keep_dims = p->keep_dims;
      return out;
    }
    case BuiltinOp::kResizeBilinear:
    case BuiltinOp::kResizeNearestNeighbor: {
      auto* out = Calloc<TfLiteResizeParams>();
      if (auto* p = std::get_if<ResizeParams>(&op.params))
        out->align_corners = p->align_corners, out->half_pixel_centers = p->half_pixel_centers;
      return out;
    }
    case BuiltinOp::kArgMax:
    case BuiltinOp::kArgMin: {
      auto* out = Calloc<TfLiteArgMinMaxParams>();
      out->output_type = kTfLiteInt64;
      if (auto* p = std::get_if<ArgMinMaxParams>(&op.params)) out->output_type = ToTfLiteType(p->output_type);
      return out;
    }
    case BuiltinOp::kCast: {
      auto* p = std::get_if<CastParams>(&op.params);
      if (!p || !p->has_types) return nullptr;
      auto* out = Calloc<TfLiteCastParams>();
      out->in_data_type = ToTfLiteType(p->in_type), out->out_data_type = ToTfLiteType(p->out_type);
      return out;
    }
    case BuiltinOp::kPack: {
      auto* out = Calloc<TfLitePackParams>();
      if (auto* p = std::get_if<PackParams>(&op.params)) out->values_count = p->values_count, out->axis = p->axis;
      return out;
    }
    case BuiltinOp::kUnpack: {
      auto* out = Calloc<TfLiteUnpackParams>();
      if (auto* p = std::get_if<UnpackParams>(&op.params)) out->num = p->num, out->axis = p->axis;
      return out;
    }
    case BuiltinOp::kGather: {
      auto* out = Calloc<TfLiteGatherParams>();
      if (auto* p = std::get_if<GatherParams>(&op.params)) out->axis = p->axis, out->batch_dims = p->batch_dims;
      return out;
    }
    case BuiltinOp::kStridedSlice: {
      auto* out = Calloc<TfLiteStridedSliceParams>();
      if (auto* p = std::get_if<StridedSliceParams>(&op.params)) {
        out->begin_mask = p->begin_mask, out->end_mask = p->end_mask, out->ellipsis_mask = p->ellipsis_mask;
        out->new_axis_mask = p->new_axis_mask, out->shrink_axis_mask = p->shrink_axis_mask;
        out->offset = p->offset;
      }
      return out;
    }
    case BuiltinOp::kSvdf: {
      auto* out = Calloc<TfLiteSVDFParams>();
      if (auto* p = std::get_if<SvdfParams>(&op.params))
        out->rank = p->rank, out->activation = ToAct(p->activation), out->asymmetric_quantize_inputs = p->asymmetric_quantize_inputs;
      return out;
    }
    case BuiltinOp::kUnidirectionalSequenceLstm: {
      auto* out = Calloc<TfLiteUnidirectionalSequenceLSTMParams>();
      if (auto* p = std::get_if<SequenceLstmParams>(&op.params)) {
        out->activation = ToAct(p->activation);
        out->cell_clip = p->cell_clip, out->proj_clip = p->proj_clip;
        out->time_major = p->time_major;
        out->asymmetric_quantize_inputs = p->asymmetric_quantize_inputs;
        out->diagonal_recurrent_tensors = p->diagonal_recurrent_tensors;
      }
      return out;
    }
    default:
      return nullptr;
  }
}

}  // namespace

// ------------------------------------------------------------------ the host context

// The loaded library and the delegate it created; destroyed last (kernels
// and contexts keep it alive).
struct PluginLibrary {
  std::string path, name;
  void* library = nullptr;
  DestroyFn destroy = nullptr;
  TfLiteDelegate* delegate = nullptr;
  ~PluginLibrary() {
    if (delegate && destroy) destroy(delegate);
    // The library stays loaded: plugins may leave thread-locals or atexit handlers behind.
  }
};

// One application of the plugin (one ModifyGraphWithDelegate): the context
// it saw and the kernels it created. Kept alive by those kernels, so another
// interpreter's application never invalidates them.
struct HostGraph {
  std::shared_ptr<PluginLibrary> plugin;
  std::string name;
  TfLiteDelegate* delegate = nullptr;

  // The context the plugin sees; impl_ points back here.
  TfLiteContext context{};
  const ModelDef* model = nullptr;
  std::vector<TfLiteTensor> tensors;
  std::vector<void*> tensor_data;  // malloc'ed activations (constants point into the model)
  std::vector<TfLiteNode> nodes;
  std::vector<TfLiteRegistration> registrations;
  std::vector<std::string> custom_names;
  TfLiteIntArray* plan = nullptr;
  std::vector<void*> owned;  // malloc'ed arrays, params, quantization, persistent buffers
  std::vector<TfLiteDelegateParams> preview;
  std::vector<std::vector<TfLiteIntArray*>> preview_arrays;

  // Partitions the plugin's ReplaceNodeSubsetsWithDelegateKernels created,
  // with their kernel already initialised (as TFLite does, inside the call).
  struct Replaced {
    std::vector<int> nodes;  // sorted
    TfLiteIntArray* nodes_array = nullptr;
    TfLiteIntArray* inputs_array = nullptr;
    TfLiteIntArray* outputs_array = nullptr;
    TfLiteDelegateParams params{};
    TfLiteNode node{};
    std::string init_error;
  };
  std::vector<std::unique_ptr<Replaced>> replaced_partitions;

  bool in_prepare = false;
  bool replaced = false;
  bool kernels_created = false;  // CreateKernel ran: the next question starts a new application
  TfLiteRegistration kernel_registration{};
  std::set<int> claimed;
  std::string errors;         // what the plugin reported through ReportError
  std::string prepare_error;  // set when the plugin's Prepare failed

  void FreeReplaced(Replaced& r) {
    if (kernel_registration.free && r.node.user_data) kernel_registration.free(&context, r.node.user_data);
    std::free(r.nodes_array), std::free(r.inputs_array), std::free(r.outputs_array);
  }

  ~HostGraph() {
    for (auto& r : replaced_partitions) FreeReplaced(*r);
    replaced_partitions.clear();
    ClearContext();
  }

  void* Own(void* p) {
    DLG_CHECK(p, "out of memory");
    owned.push_back(p);
    return p;
  }

  void ClearPreview() {
    for (auto& arrays : preview_arrays)
      for (TfLiteIntArray* a : arrays) std::free(a);
    preview_arrays.clear();
    preview.clear();
  }

  void ClearContext() {
    ClearPreview();
    for (TfLiteTensor& t : tensors) std::free(t.dims);
    for (void* p : tensor_data) std::free(p);
    for (void* p : owned) std::free(p);
    tensors.clear(), tensor_data.clear(), owned.clear(), nodes.clear(), registrations.clear();
    std::free(plan);
    plan = nullptr;
  }

  static HostGraph* From(const TfLiteContext* context) { return static_cast<HostGraph*>(context->impl_); }

  void SetTensorDims(int index, const std::vector<int32_t>& dims) {
    TfLiteTensor& t = tensors[index];
    std::free(t.dims);
    t.dims = NewIntArray(dims);
    size_t count = 1;
    for (int32_t d : dims) count *= static_cast<size_t>(std::max(d, 0));
    const size_t bytes = count * DataTypeSize(model->subgraphs[0].tensors[index].type);
    if (t.allocation_type == kTfLiteMmapRo) return;
    if (bytes != t.bytes || tensor_data[index] == nullptr) {
      std::free(tensor_data[index]);
      tensor_data[index] = std::calloc(std::max<size_t>(bytes, 1), 1);
      DLG_CHECK(tensor_data[index], "out of memory");
      t.bytes = bytes;
      t.data = tensor_data[index];
    }
  }

  void BuildContext(const ModelDef& m);
};

namespace {

GraphInfo HostGraphInfo(const ModelDef& model) { return BuildGraphInfo(model, ConstantInputs::kKeep); }
void HostReportError(TfLiteContext* context, const char* format, ...);

TfLiteStatus HostGetExecutionPlan(TfLiteContext* context, TfLiteIntArray** plan) {
  *plan = HostGraph::From(context)->plan;
  return kTfLiteOk;
}

TfLiteStatus HostGetNodeAndRegistration(TfLiteContext* context, int index, TfLiteNode** node,
                                        TfLiteRegistration** registration) {
  auto* state = HostGraph::From(context);
  if (index < 0 || index >= static_cast<int>(state->nodes.size())) return kTfLiteError;
  *node = &state->nodes[index];
  *registration = &state->registrations[index];
  return kTfLiteOk;
}

TfLiteStatus HostReplaceNodeSubsets(TfLiteContext* context, TfLiteRegistration registration,
                                    const TfLiteIntArray* nodes, TfLiteDelegate*) {
  auto* state = HostGraph::From(context);
  if (!state->in_prepare || nodes == nullptr) return kTfLiteError;
  // Only the fields every layout has (up to `version`) are trusted.
  TfLiteRegistration copy{};
  std::memcpy(&copy, &registration, offsetof(TfLiteRegistration, version) + sizeof(int));
  state->kernel_registration = copy;
  state->replaced = true;
  std::vector<int> chosen;
  for (int i = 0; i < nodes->size; ++i) {
    const int n = nodes->data[i];
    if (n < 0 || n >= static_cast<int>(state->nodes.size())) return kTfLiteError;
    if (state->claimed.insert(n).second) chosen.push_back(n);
  }
  try {
    for (const NodeSubset& subset : PartitionGraph(HostGraphInfo(*state->model), chosen)) {
      if (!subset.delegated) continue;
      auto r = std::make_unique<HostGraph::Replaced>();
      r->nodes = subset.nodes;
      std::sort(r->nodes.begin(), r->nodes.end());
      r->nodes_array = NewIntArray(subset.nodes);
      r->inputs_array = NewIntArray(subset.input_tensors);
      r->outputs_array = NewIntArray(subset.output_tensors);
      r->params = TfLiteDelegateParams{state->delegate, r->nodes_array, r->inputs_array, r->outputs_array};
      r->node.inputs = r->inputs_array;
      r->node.outputs = r->outputs_array;
      r->node.builtin_data = &r->params;
      r->node.delegate = state->delegate;
      state->errors.clear();
      if (copy.init) r->node.user_data = copy.init(context, reinterpret_cast<const char*>(&r->params), 0);
      r->init_error = state->errors;
      state->replaced_partitions.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    HostReportError(context, "ReplaceNodeSubsetsWithDelegateKernels: %s", e.what());
    return kTfLiteError;
  }
  return kTfLiteOk;
}

TfLiteStatus HostResizeTensor(TfLiteContext* context, TfLiteTensor* tensor, TfLiteIntArray* new_size) {
  auto* state = HostGraph::From(context);
  const long index = tensor - state->tensors.data();
  if (new_size == nullptr || index < 0 || index >= static_cast<long>(state->tensors.size())) {
    std::free(new_size);
    return kTfLiteError;
  }
  std::vector<int32_t> dims(new_size->data, new_size->data + new_size->size);
  std::free(new_size);  // the host owns it from here
  try {
    state->SetTensorDims(static_cast<int>(index), dims);
  } catch (const std::exception&) {
    return kTfLiteError;
  }
  return kTfLiteOk;
}

TfLiteStatus HostResizeTensorExplicit(TfLiteContext* context, TfLiteTensor* tensor, int dims, const int* shape) {
  TfLiteIntArray* array = MallocIntArray(dims);
  if (!array) return kTfLiteError;
  std::copy(shape, shape + dims, array->data);
  return HostResizeTensor(context, tensor, array);
}

void HostReportError(TfLiteContext* context, const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  auto* state = HostGraph::From(context);
  if (!state->errors.empty()) state->errors += "; ";
  state->errors += buffer;
}

TfLiteStatus HostAddTensors(TfLiteContext* context, int, int*) {
  HostReportError(context, "AddTensors is not supported by delegato's host");
  return kTfLiteError;
}

TfLiteTensor* HostGetTensor(const TfLiteContext* context, int index) {
  auto* state = HostGraph::From(context);
  return index >= 0 && index < static_cast<int>(state->tensors.size()) ? &state->tensors[index] : nullptr;
}

void* HostGetExternalContext(TfLiteContext*, int) { return nullptr; }
void HostSetExternalContext(TfLiteContext*, int, void*) {}

void* HostAllocatePersistentBuffer(TfLiteContext* context, size_t bytes) {
  return HostGraph::From(context)->Own(std::calloc(std::max<size_t>(bytes, 1), 1));
}

TfLiteStatus HostUnsupportedBuffer(TfLiteContext* context, size_t, void**) {
  HostReportError(context, "AllocateBufferForEval is not supported by delegato's host");
  return kTfLiteError;
}
TfLiteStatus HostRequestScratch(TfLiteContext* context, size_t, int*) {
  HostReportError(context, "RequestScratchBufferInArena is not supported by delegato's host");
  return kTfLiteError;
}
void* HostGetScratch(TfLiteContext*, int) { return nullptr; }
void* HostGetEvalTensor(const TfLiteContext*, int) { return nullptr; }
TfLiteStatus HostGetModelMetadata(const TfLiteContext*, const char*, const char**, size_t*) { return kTfLiteError; }
TfLiteStatus HostAcquireSubgraph(TfLiteContext*, int, TfLiteContext**) { return kTfLiteError; }
TfLiteStatus HostReleaseSubgraph(TfLiteContext*, int) { return kTfLiteError; }

TfLiteStatus HostPreviewPartitioning(TfLiteContext* context, const TfLiteIntArray* nodes,
                                     TfLiteDelegateParams** params, int* count) {
  auto* state = HostGraph::From(context);
  if (!state->in_prepare || nodes == nullptr || params == nullptr || count == nullptr) return kTfLiteError;
  try {
    state->ClearPreview();
    std::vector<int> chosen(nodes->data, nodes->data + nodes->size);
    for (const NodeSubset& subset : PartitionGraph(HostGraphInfo(*state->model), chosen)) {
      if (!subset.delegated) continue;
      std::vector<TfLiteIntArray*> arrays = {NewIntArray(subset.nodes), NewIntArray(subset.input_tensors),
                                             NewIntArray(subset.output_tensors)};
      state->preview_arrays.push_back(arrays);
      state->preview.push_back(TfLiteDelegateParams{state->delegate, arrays[0], arrays[1], arrays[2]});
    }
    *params = state->preview.data();
    *count = static_cast<int>(state->preview.size());
    return kTfLiteOk;
  } catch (const std::exception& e) {
    HostReportError(context, "PreviewDelegatePartitioning: %s", e.what());
    return kTfLiteError;
  }
}

}  // namespace

void HostGraph::BuildContext(const ModelDef& m) {
  ClearContext();
  model = &m;
  const SubgraphDef& graph = m.subgraphs[0];
  tensors.assign(graph.tensors.size(), TfLiteTensor{});
  tensor_data.assign(graph.tensors.size(), nullptr);
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const TensorDef& def = graph.tensors[i];
    TfLiteTensor& t = tensors[i];
    t.type = ToTfLiteType(def.type);
    t.name = def.name.c_str();
    t.buffer_handle = -1;
    t.is_variable = def.is_variable;
    const bool constant = def.buffer != 0 && def.buffer < m.buffers.size() && !m.buffers[def.buffer].empty();
    if (constant) {
      t.allocation_type = kTfLiteMmapRo;
      t.data = const_cast<uint8_t*>(m.buffers[def.buffer].data());
      t.bytes = m.buffers[def.buffer].size();
      t.dims = NewIntArray(def.shape);
    } else {
      t.allocation_type = def.is_variable ? kTfLiteArenaRwPersistent : kTfLiteArenaRw;
      SetTensorDims(static_cast<int>(i), def.shape);
    }
    if (!def.shape_signature.empty()) t.dims_signature = static_cast<TfLiteIntArray*>(Own(NewIntArray(def.shape_signature)));
    if (!def.quantization.empty()) {
      const auto& q = def.quantization;
      t.params.scale = q.scale[0];
      t.params.zero_point = q.zero_point.empty() ? 0 : static_cast<int32_t>(q.zero_point[0]);
      auto* affine = static_cast<TfLiteAffineQuantization*>(Own(std::calloc(1, sizeof(TfLiteAffineQuantization))));
      auto* scales = static_cast<TfLiteFloatArrayClassic*>(Own(std::malloc(sizeof(int) + sizeof(float) * q.scale.size())));
      scales->size = static_cast<int>(q.scale.size());
      std::copy(q.scale.begin(), q.scale.end(), scales->data);
      std::vector<int32_t> zps(q.zero_point.begin(), q.zero_point.end());
      if (zps.empty()) zps.assign(q.scale.size(), 0);
      affine->scale = scales;
      affine->zero_point = static_cast<TfLiteIntArray*>(Own(NewIntArray(zps)));
      affine->quantized_dimension = q.quantized_dimension;
      t.quantization = {kTfLiteAffineQuantization, affine};
    }
  }
  const int n = static_cast<int>(graph.operators.size());
  nodes.assign(n, TfLiteNode{});
  registrations.assign(n, TfLiteRegistration{});
  custom_names.assign(n, "");
  std::vector<int32_t> order;
  for (int i = 0; i < n; ++i) {
    const OperatorDef& op = graph.operators[i];
    const OperatorCodeDef& code = m.operator_codes[op.opcode_index];
    TfLiteNode& node = nodes[i];
    node.inputs = static_cast<TfLiteIntArray*>(Own(NewIntArray(op.inputs)));
    node.outputs = static_cast<TfLiteIntArray*>(Own(NewIntArray(op.outputs)));
    node.intermediates = static_cast<TfLiteIntArray*>(Own(NewIntArray(op.intermediates)));
    node.temporaries = static_cast<TfLiteIntArray*>(Own(NewIntArray({})));
    TfLiteRegistration& reg = registrations[i];
    reg.version = code.version;
    if (code.builtin == BuiltinOp::kCustom) {
      reg.builtin_code = kTfLiteBuiltinCustom;
      custom_names[i] = code.custom_code;
      reg.custom_name = custom_names[i].c_str();
      if (!op.custom_options.empty()) {
        node.custom_initial_data = op.custom_options.data();
        node.custom_initial_data_size = static_cast<int>(op.custom_options.size());
      }
    } else {
      reg.builtin_code = static_cast<int32_t>(code.builtin);
      if (void* data = BuiltinData(code.builtin, op)) node.builtin_data = Own(data);
    }
    order.push_back(i);
  }
  plan = NewIntArray(order);

  context = TfLiteContext{};
  context.tensors_size = tensors.size();
  context.tensors = tensors.data();
  context.impl_ = this;
  context.GetExecutionPlan = HostGetExecutionPlan;
  context.ResizeTensor = HostResizeTensor;
  context.ReportError = HostReportError;
  context.AddTensors = HostAddTensors;
  context.GetNodeAndRegistration = HostGetNodeAndRegistration;
  context.ReplaceNodeSubsetsWithDelegateKernels = HostReplaceNodeSubsets;
  context.recommended_num_threads = 1;
  context.GetExternalContext = HostGetExternalContext;
  context.SetExternalContext = HostSetExternalContext;
  context.AllocatePersistentBuffer = HostAllocatePersistentBuffer;
  context.AllocateBufferForEval = HostUnsupportedBuffer;
  context.RequestScratchBufferInArena = HostRequestScratch;
  context.GetScratchBuffer = HostGetScratch;
  context.ResizeTensorExplicit = HostResizeTensorExplicit;
  context.PreviewDelegatePartitioning = HostPreviewPartitioning;
  context.GetTensor = HostGetTensor;
  context.GetEvalTensor = HostGetEvalTensor;
  context.GetModelMetadata = HostGetModelMetadata;
  context.AcquireSubgraphContext = HostAcquireSubgraph;
  context.ReleaseSubgraphContext = HostReleaseSubgraph;
}

// ------------------------------------------------------------------ loading

struct ExternalDelegate::State {
  std::shared_ptr<PluginLibrary> plugin;
  std::shared_ptr<HostGraph> graph;  // the current application
  int last_node = -1;
  std::string prepare_error;
};

Status ParseExternalDelegateOptions(const std::string& text, ExternalDelegateOptions* options) {
  options->clear();
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || item.find(':', colon + 1) != std::string::npos)
      return Status::Error("--external_delegate_options: '" + item + "' is not key:value (options are 'k:v;k:v')");
    options->emplace_back(item.substr(0, colon), item.substr(colon + 1));
  }
  return Status::Ok();
}

Status ExternalDelegate::Load(const std::string& path, const ExternalDelegateOptions& options,
                              std::unique_ptr<ExternalDelegate>* delegate) {
  auto state = std::make_shared<PluginLibrary>();
  state->path = path;
  state->name = std::filesystem::path(path).stem().string();
  dlerror();
  state->library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (state->library == nullptr) {
    const char* why = dlerror();
    return Status::Error("cannot load external delegate " + path + ": " + (why ? why : "dlopen failed"));
  }
  auto create = reinterpret_cast<CreateFn>(dlsym(state->library, "tflite_plugin_create_delegate"));
  state->destroy = reinterpret_cast<DestroyFn>(dlsym(state->library, "tflite_plugin_destroy_delegate"));
  if (create == nullptr || state->destroy == nullptr)
    return Status::Error("external delegate " + path +
                         " does not export tflite_plugin_create_delegate and tflite_plugin_destroy_delegate");
  return CreatePlugin(std::move(state), create, options, delegate);
}

Status ExternalDelegate::FromEntryPoints(const std::string& name, PluginCreateFunction create,
                                         PluginDestroyFunction destroy,
                                         const ExternalDelegateOptions& options,
                                         std::unique_ptr<ExternalDelegate>* delegate) {
  if (create == nullptr || destroy == nullptr)
    return Status::Error("external delegate " + name + ": create and destroy entry points are required");
  auto state = std::make_shared<PluginLibrary>();
  state->path = state->name = name;
  state->destroy = destroy;
  return CreatePlugin(std::move(state), create, options, delegate);
}

Status ExternalDelegate::CreatePlugin(std::shared_ptr<PluginLibrary> state,
                                      PluginCreateFunction create,
                                      const ExternalDelegateOptions& options,
                                      std::unique_ptr<ExternalDelegate>* delegate) {
  const std::string& path = state->path;
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options) keys.push_back(k.c_str()), values.push_back(v.c_str());
  std::string messages;
  g_create_messages = &messages;
  state->delegate = create(keys.data(), values.data(), keys.size(), CollectCreateError);
  g_create_messages = nullptr;
  if (state->delegate == nullptr)
    return Status::Error("external delegate " + path + ": tflite_plugin_create_delegate failed" +
                         (messages.empty() ? std::string(" (no message)") : ": " + messages));
  if (state->delegate->Prepare == nullptr)
    return Status::Error("external delegate " + path + " returned a delegate without Prepare (opaque delegates are not supported)");
  auto shared = std::make_shared<State>();
  shared->plugin = std::move(state);
  delegate->reset(new ExternalDelegate(std::move(shared)));
  return Status::Ok();
}

ExternalDelegate::ExternalDelegate(std::shared_ptr<State> state) : state_(std::move(state)) {}
ExternalDelegate::~ExternalDelegate() = default;

std::string ExternalDelegate::name() const { return state_->plugin->name; }
const std::string& ExternalDelegate::prepare_error() const { return state_->prepare_error; }

NodeSupport ExternalDelegate::Supports(const ModelDef& model, int node_index) {
  // The interpreter asks about every node in plan order: the first question
  // of a new ModifyGraphWithDelegate runs the plugin's Prepare on a new context.
  if (!state_->graph || state_->graph->model != &model || node_index <= state_->last_node ||
      state_->graph->kernels_created) {
    auto graph = std::make_shared<HostGraph>();
    graph->plugin = state_->plugin;
    graph->name = state_->plugin->name;
    graph->delegate = state_->plugin->delegate;
    state_->graph = std::move(graph);
  }
  state_->last_node = node_index;
  HostGraph& s = *state_->graph;
  if (s.model != &model) {
    s.BuildContext(model);
    s.claimed.clear();
    s.replaced = false;
    s.errors.clear();
    s.prepare_error.clear();
    s.in_prepare = true;
    TfLiteStatus status = kTfLiteError;
    try {
      status = s.delegate->Prepare(&s.context, s.delegate);
    } catch (...) {
      s.errors += "exception thrown through the C ABI";
    }
    s.in_prepare = false;
    s.ClearPreview();
    if (status != kTfLiteOk) {
      s.prepare_error = StrCat("external delegate ", s.name, ": Prepare (TfLiteDelegate::Prepare) returned ",
                               static_cast<int>(status), s.errors.empty() ? "" : ": " + s.errors,
                               "; the model runs on delegato's CPU kernels");
      s.claimed.clear();
      s.replaced = false;
    }
    state_->prepare_error = s.prepare_error;
  }
  NodeSupport support;
  if (s.claimed.count(node_index)) {
    support.supported = true;
  } else if (!s.prepare_error.empty()) {
    support.reasons.push_back({ReasonCode::kPrepareFailed, "delegate", s.prepare_error, ""});
  } else {
    support.reasons.push_back({ReasonCode::kUnsupportedOp, "delegate", "the plugin " + s.name + " did not claim it", ""});
  }
  return support;
}

namespace {

class PluginKernel : public DelegateKernel {
 public:
  using Replaced = HostGraph::Replaced;
  PluginKernel(std::shared_ptr<HostGraph> state, const DelegatePartition& partition,
               std::unique_ptr<Replaced> replaced)
      : state_(std::move(state)), partition_(partition), replaced_(std::move(replaced)) {
    registration_ = state_->kernel_registration;
    init_error_ = replaced_ ? replaced_->init_error
                            : "the plugin's partitions differ from delegato's for nodes " + NodeList(partition.nodes);
  }
  ~PluginKernel() override {
    if (replaced_) state_->FreeReplaced(*replaced_);
  }

  static std::string NodeList(const std::vector<int>& nodes) {
    std::string out;
    for (int n : nodes) out += (out.empty() ? "" : ",") + std::to_string(n);
    return out;
  }

  Status Prepare(std::span<const TensorView> inputs, std::vector<std::vector<int32_t>>* output_dims) override {
    HostGraph& s = *state_;
    if (!replaced_ || !init_error_.empty()) return Status::Error(s.name + ": kernel init: " + init_error_);
    TfLiteNode* node = &replaced_->node;
    try {
      for (const TensorView& in : inputs) s.SetTensorDims(in.index, std::vector<int32_t>(in.dims.begin(), in.dims.end()));
    } catch (const std::exception& e) {
      return Status::Error(e.what());
    }
    s.errors.clear();
    if (registration_.prepare && registration_.prepare(&s.context, node) != kTfLiteOk)
      return Status::Error(s.name + ": kernel prepare failed" + (s.errors.empty() ? "" : ": " + s.errors));
    output_dims->clear();
    for (int t : partition_.outputs) {
      const TfLiteIntArray* dims = s.tensors[t].dims;
      output_dims->emplace_back(dims->data, dims->data + dims->size);
    }
    return Status::Ok();
  }

  Status Eval(std::span<const TensorView> inputs, std::span<const TensorView> outputs) override {
    HostGraph& s = *state_;
    for (const TensorView& in : inputs) {
      TfLiteTensor& t = s.tensors[in.index];
      if (t.bytes != in.bytes) return Status::Error(StrCat(s.name, ": input tensor ", in.index, " size changed"));
      if (in.bytes) std::memcpy(t.data, in.data, in.bytes);
    }
    if (!replaced_) return Status::Error(s.name + ": kernel not initialised");
    s.errors.clear();
    if (registration_.invoke == nullptr || registration_.invoke(&s.context, &replaced_->node) != kTfLiteOk)
      return Status::Error(s.name + ": kernel invoke failed" + (s.errors.empty() ? "" : ": " + s.errors));
    for (const TensorView& out : outputs) {
      const TfLiteTensor& t = s.tensors[out.index];
      if (t.bytes != out.bytes) return Status::Error(StrCat(s.name, ": output tensor ", out.index, " size differs"));
      if (out.bytes) std::memcpy(out.data, t.data, out.bytes);
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<HostGraph> state_;
  DelegatePartition partition_;
  std::unique_ptr<Replaced> replaced_;
  TfLiteRegistration registration_{};
  std::string init_error_;
};

}  // namespace

std::unique_ptr<DelegateKernel> ExternalDelegate::CreateKernel(const ModelDef& model, const DelegatePartition& partition) {
  const std::shared_ptr<HostGraph>& graph = state_->graph;
  DLG_CHECK(graph && graph->model == &model && graph->replaced, "external delegate ", state_->plugin->name,
            ": CreateKernel for a model its Prepare did not see");
  std::vector<int> nodes = partition.nodes;
  std::sort(nodes.begin(), nodes.end());
  std::unique_ptr<HostGraph::Replaced> replaced;
  for (auto& r : graph->replaced_partitions) {
    if (r && r->nodes == nodes) {
      replaced = std::move(r);
      break;
    }
  }
  std::erase(graph->replaced_partitions, nullptr);
  graph->kernels_created = true;
  return std::make_unique<PluginKernel>(graph, partition, std::move(replaced));
}

}  // namespace delegato
