// The classic TFLite C ABI that external delegate plugins and their hosts share
// (tensorflow/lite/core/c/common.h), declared here from the documented field
// order, pinned to what LiteRT 2.3 (ai_edge_litert) uses on LP64 targets.
// Every offset the plugin relies on is checked below: a layout mistake fails
// the build instead of corrupting a host's memory.
//
// Names live in delegato::abi so they never collide with a real TFLite
// header in the same program; the layouts, not the names, are the ABI.
#pragma once

#include <cstddef>
#include <cstdint>

namespace delegato::abi {

enum TfLiteStatus : int {
  kTfLiteOk = 0,
  kTfLiteError = 1,
  kTfLiteDelegateError = 2,
  kTfLiteApplicationError = 3,
  kTfLiteDelegateDataNotFound = 4,
  kTfLiteDelegateDataWriteError = 5,
  kTfLiteDelegateDataReadError = 6,
  kTfLiteUnresolvedOps = 7,
  kTfLiteCancelled = 8,
};

// TfLiteType (c_api_types.h). Note: not the numbering of the .tflite schema.
enum TfLiteType : int {
  kTfLiteNoType = 0,
  kTfLiteFloat32 = 1,
  kTfLiteInt32 = 2,
  kTfLiteUInt8 = 3,
  kTfLiteInt64 = 4,
  kTfLiteString = 5,
  kTfLiteBool = 6,
  kTfLiteInt16 = 7,
  kTfLiteComplex64 = 8,
  kTfLiteInt8 = 9,
  kTfLiteFloat16 = 10,
  kTfLiteFloat64 = 11,
  kTfLiteComplex128 = 12,
  kTfLiteUInt64 = 13,
  kTfLiteResource = 14,
  kTfLiteVariant = 15,
  kTfLiteUInt32 = 16,
  kTfLiteUInt16 = 17,
  kTfLiteInt4 = 18,
  kTfLiteBFloat16 = 19,
};

enum TfLiteAllocationType : int {
  kTfLiteMemNone = 0,
  kTfLiteMmapRo = 1,
  kTfLiteArenaRw = 2,
  kTfLiteArenaRwPersistent = 3,
  kTfLiteDynamic = 4,
  kTfLitePersistentRo = 5,
  kTfLiteCustom = 6,
  kTfLiteVariantObject = 7,
};

enum TfLiteQuantizationType : int {
  kTfLiteNoQuantization = 0,
  kTfLiteAffineQuantization = 1,
};

constexpr int32_t kTfLiteBuiltinCustom = 32;
constexpr int32_t kTfLiteBuiltinDelegate = 51;
constexpr int kTfLiteOptionalTensor = -1;
constexpr int64_t kTfLiteDelegateFlagsNone = 0;
constexpr int64_t kTfLiteDelegateFlagsAllowDynamicTensors = 1;

struct TfLiteIntArray {
  int size;
  int data[];  // flexible array member (a GNU/Clang extension in C++)
};

// The classic layout {int size; float data[]} that every released runtime
// used; newer TF trees changed it (see ReadScales in context_model.cc).
struct TfLiteFloatArrayClassic {
  int size;
  float data[];
};
// The newer layout {float* data; int size; bool owning;}.
struct TfLiteFloatArrayPointer {
  float* data;
  int size;
  bool owning;
};

struct TfLiteQuantizationParams {
  float scale;
  int32_t zero_point;
};

struct TfLiteQuantization {
  TfLiteQuantizationType type;
  void* params;
};

struct TfLiteAffineQuantization {
  void* scale;  // TfLiteFloatArray*, in the host's layout
  TfLiteIntArray* zero_point;
  int32_t quantized_dimension;
};

struct TfLiteDelegate;
struct TfLiteContext;
struct TfLiteNode;
struct TfLiteRegistration;

struct TfLiteTensor {
  TfLiteType type;
  void* data;  // TfLitePtrUnion: one pointer
  TfLiteIntArray* dims;
  TfLiteQuantizationParams params;
  TfLiteAllocationType allocation_type;
  size_t bytes;
  const void* allocation;
  const char* name;
  TfLiteDelegate* delegate;
  int buffer_handle;
  bool data_is_stale;
  bool is_variable;
  TfLiteQuantization quantization;
  void* sparsity;
  const TfLiteIntArray* dims_signature;
};

struct TfLiteNode {
  TfLiteIntArray* inputs;
  TfLiteIntArray* outputs;
  TfLiteIntArray* intermediates;
  TfLiteIntArray* temporaries;
  void* user_data;
  void* builtin_data;
  const void* custom_initial_data;
  int custom_initial_data_size;
  TfLiteDelegate* delegate;
  bool might_have_side_effect;
};

struct TfLiteRegistration {
  void* (*init)(TfLiteContext* context, const char* buffer, size_t length);
  void (*free)(TfLiteContext* context, void* buffer);
  TfLiteStatus (*prepare)(TfLiteContext* context, TfLiteNode* node);
  TfLiteStatus (*invoke)(TfLiteContext* context, TfLiteNode* node);
  const char* (*profiling_string)(const TfLiteContext* context, const TfLiteNode* node);
  int32_t builtin_code;
  const char* custom_name;
  int version;
  void* registration_external;
  void* (*async_kernel)(TfLiteContext* context, TfLiteNode* node);
  // Newest field. Passed by value to ReplaceNodeSubsetsWithDelegateKernels: a
  // host built with an older, shorter struct reads only the prefix, so the
  // plugin sends the longest layout, zeroed.
  uint64_t inplace_operator;
};

struct TfLiteDelegateParams {
  TfLiteDelegate* delegate;
  TfLiteIntArray* nodes_to_replace;
  TfLiteIntArray* input_tensors;
  TfLiteIntArray* output_tensors;
};

struct TfLiteContext {
  size_t tensors_size;
  TfLiteStatus (*GetExecutionPlan)(TfLiteContext* context, TfLiteIntArray** execution_plan);
  TfLiteTensor* tensors;
  void* impl_;
  TfLiteStatus (*ResizeTensor)(TfLiteContext* context, TfLiteTensor* tensor, TfLiteIntArray* new_size);
  void (*ReportError)(TfLiteContext* context, const char* format, ...);
  TfLiteStatus (*AddTensors)(TfLiteContext* context, int tensors_to_add, int* first_new_tensor_index);
  TfLiteStatus (*GetNodeAndRegistration)(TfLiteContext* context, int node_index, TfLiteNode** node,
                                         TfLiteRegistration** registration);
  TfLiteStatus (*ReplaceNodeSubsetsWithDelegateKernels)(TfLiteContext* context,
                                                        TfLiteRegistration registration,
                                                        const TfLiteIntArray* nodes_to_replace,
                                                        TfLiteDelegate* delegate);
  int recommended_num_threads;
  void* (*GetExternalContext)(TfLiteContext* context, int type);
  void (*SetExternalContext)(TfLiteContext* context, int type, void* external_context);
  bool allow_fp32_relax_to_fp16;
  void* profiler;
  void* (*AllocatePersistentBuffer)(TfLiteContext* context, size_t bytes);
  TfLiteStatus (*AllocateBufferForEval)(TfLiteContext* context, size_t bytes, void** ptr);
  TfLiteStatus (*RequestScratchBufferInArena)(TfLiteContext* context, size_t bytes, int* buffer_idx);
  void* (*GetScratchBuffer)(TfLiteContext* context, int buffer_idx);
  TfLiteStatus (*ResizeTensorExplicit)(TfLiteContext* context, TfLiteTensor* tensor, int dims,
                                       const int* shape);
  TfLiteStatus (*PreviewDelegatePartitioning)(TfLiteContext* context,
                                              const TfLiteIntArray* nodes_to_replace,
                                              TfLiteDelegateParams** partition_params_array,
                                              int* num_partitions);
  TfLiteTensor* (*GetTensor)(const TfLiteContext* context, int tensor_idx);
  void* (*GetEvalTensor)(const TfLiteContext* context, int tensor_idx);
  TfLiteStatus (*GetModelMetadata)(const TfLiteContext* context, const char* name, const char** ptr,
                                   size_t* bytes);
  TfLiteStatus (*AcquireSubgraphContext)(TfLiteContext* context, int subgraph_index,
                                         TfLiteContext** acquired_context);
  TfLiteStatus (*ReleaseSubgraphContext)(TfLiteContext* context, int subgraph_index);
};

struct TfLiteDelegate {
  void* data_;
  TfLiteStatus (*Prepare)(TfLiteContext* context, TfLiteDelegate* delegate);
  TfLiteStatus (*CopyFromBufferHandle)(TfLiteContext* context, TfLiteDelegate* delegate,
                                       int buffer_handle, TfLiteTensor* tensor);
  TfLiteStatus (*CopyToBufferHandle)(TfLiteContext* context, TfLiteDelegate* delegate,
                                     int buffer_handle, TfLiteTensor* tensor);
  void (*FreeBufferHandle)(TfLiteContext* context, TfLiteDelegate* delegate, int* handle);
  int64_t flags;
  void* opaque_delegate_builder;  // must stay NULL: the classic Prepare is used
};

// ---------------------------------------------------------------- layout checks
static_assert(sizeof(void*) == 8, "the declarations are pinned to LP64 hosts");
static_assert(offsetof(TfLiteIntArray, data) == 4);
static_assert(offsetof(TfLiteFloatArrayClassic, data) == 4);
static_assert(offsetof(TfLiteFloatArrayPointer, size) == 8);
static_assert(sizeof(TfLiteQuantizationParams) == 8);
static_assert(sizeof(TfLiteQuantization) == 16);
static_assert(offsetof(TfLiteAffineQuantization, zero_point) == 8);
static_assert(offsetof(TfLiteAffineQuantization, quantized_dimension) == 16);

static_assert(offsetof(TfLiteTensor, type) == 0);
static_assert(offsetof(TfLiteTensor, data) == 8);
static_assert(offsetof(TfLiteTensor, dims) == 16);
static_assert(offsetof(TfLiteTensor, params) == 24);
static_assert(offsetof(TfLiteTensor, allocation_type) == 32);
static_assert(offsetof(TfLiteTensor, bytes) == 40);
static_assert(offsetof(TfLiteTensor, allocation) == 48);
static_assert(offsetof(TfLiteTensor, name) == 56);
static_assert(offsetof(TfLiteTensor, delegate) == 64);
static_assert(offsetof(TfLiteTensor, buffer_handle) == 72);
static_assert(offsetof(TfLiteTensor, data_is_stale) == 76);
static_assert(offsetof(TfLiteTensor, is_variable) == 77);
static_assert(offsetof(TfLiteTensor, quantization) == 80);
static_assert(offsetof(TfLiteTensor, sparsity) == 96);
static_assert(offsetof(TfLiteTensor, dims_signature) == 104);
static_assert(sizeof(TfLiteTensor) == 112, "the host indexes context->tensors with this stride");

static_assert(offsetof(TfLiteNode, inputs) == 0);
static_assert(offsetof(TfLiteNode, outputs) == 8);
static_assert(offsetof(TfLiteNode, intermediates) == 16);
static_assert(offsetof(TfLiteNode, builtin_data) == 40);
static_assert(offsetof(TfLiteNode, custom_initial_data) == 48);
static_assert(offsetof(TfLiteNode, custom_initial_data_size) == 56);
static_assert(offsetof(TfLiteNode, delegate) == 64);

static_assert(offsetof(TfLiteRegistration, init) == 0);
static_assert(offsetof(TfLiteRegistration, free) == 8);
static_assert(offsetof(TfLiteRegistration, prepare) == 16);
static_assert(offsetof(TfLiteRegistration, invoke) == 24);
static_assert(offsetof(TfLiteRegistration, profiling_string) == 32);
static_assert(offsetof(TfLiteRegistration, builtin_code) == 40);
static_assert(offsetof(TfLiteRegistration, custom_name) == 48);
static_assert(offsetof(TfLiteRegistration, version) == 56);
static_assert(offsetof(TfLiteRegistration, registration_external) == 64);
static_assert(offsetof(TfLiteRegistration, async_kernel) == 72);
static_assert(offsetof(TfLiteRegistration, inplace_operator) == 80);
static_assert(sizeof(TfLiteRegistration) == 88);

static_assert(offsetof(TfLiteDelegateParams, nodes_to_replace) == 8);
static_assert(offsetof(TfLiteDelegateParams, input_tensors) == 16);
static_assert(offsetof(TfLiteDelegateParams, output_tensors) == 24);

static_assert(offsetof(TfLiteContext, tensors_size) == 0);
static_assert(offsetof(TfLiteContext, GetExecutionPlan) == 8);
static_assert(offsetof(TfLiteContext, tensors) == 16);
static_assert(offsetof(TfLiteContext, impl_) == 24);
static_assert(offsetof(TfLiteContext, ResizeTensor) == 32);
static_assert(offsetof(TfLiteContext, ReportError) == 40);
static_assert(offsetof(TfLiteContext, AddTensors) == 48);
static_assert(offsetof(TfLiteContext, GetNodeAndRegistration) == 56);
static_assert(offsetof(TfLiteContext, ReplaceNodeSubsetsWithDelegateKernels) == 64);
static_assert(offsetof(TfLiteContext, recommended_num_threads) == 72);
static_assert(offsetof(TfLiteContext, GetExternalContext) == 80);
static_assert(offsetof(TfLiteContext, SetExternalContext) == 88);
static_assert(offsetof(TfLiteContext, allow_fp32_relax_to_fp16) == 96);
static_assert(offsetof(TfLiteContext, profiler) == 104);
static_assert(offsetof(TfLiteContext, AllocatePersistentBuffer) == 112);
static_assert(offsetof(TfLiteContext, ResizeTensorExplicit) == 144);
static_assert(offsetof(TfLiteContext, PreviewDelegatePartitioning) == 152);
static_assert(offsetof(TfLiteContext, GetTensor) == 160);
static_assert(offsetof(TfLiteContext, ReleaseSubgraphContext) == 192);

static_assert(offsetof(TfLiteDelegate, data_) == 0);
static_assert(offsetof(TfLiteDelegate, Prepare) == 8);
static_assert(offsetof(TfLiteDelegate, CopyFromBufferHandle) == 16);
static_assert(offsetof(TfLiteDelegate, CopyToBufferHandle) == 24);
static_assert(offsetof(TfLiteDelegate, FreeBufferHandle) == 32);
static_assert(offsetof(TfLiteDelegate, flags) == 40);
static_assert(offsetof(TfLiteDelegate, opaque_delegate_builder) == 48);
static_assert(sizeof(TfLiteDelegate) == 56);

// Allocates an array the host may free with free() (ResizeTensor takes ownership).
TfLiteIntArray* MallocIntArray(int size);

}  // namespace delegato::abi
