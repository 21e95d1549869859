/* A third-party-style TFLite external delegate written against the C structs
 * only (its own declarations, no delegato code): it claims every quantized
 * ADD of two same-shaped int8/uint8 tensors with no fused activation and runs
 * it with TFLite's reference integer arithmetic, written out naively.
 * Options: fail=prepare|init|invoke makes that step fail (error paths). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct TfLiteIntArray { int size; int data[]; } TfLiteIntArray;
typedef struct { float scale; int32_t zero_point; } QuantParams;
typedef struct { int type; void* params; } Quantization;
struct TfLiteDelegate;
typedef struct TfLiteTensor {
  int type; void* data; TfLiteIntArray* dims; QuantParams params; int allocation_type; size_t bytes;
  const void* allocation; const char* name; struct TfLiteDelegate* delegate; int buffer_handle;
  bool data_is_stale; bool is_variable; Quantization quantization; void* sparsity; const TfLiteIntArray* dims_signature;
} TfLiteTensor;
typedef struct TfLiteNode {
  TfLiteIntArray* inputs; TfLiteIntArray* outputs; TfLiteIntArray* intermediates; TfLiteIntArray* temporaries;
  void* user_data; void* builtin_data; const void* custom_initial_data; int custom_initial_data_size;
  struct TfLiteDelegate* delegate; bool might_have_side_effect;
} TfLiteNode;
struct TfLiteContext;
typedef struct TfLiteRegistration {
  void* (*init)(struct TfLiteContext*, const char*, size_t);
  void (*free)(struct TfLiteContext*, void*);
  int (*prepare)(struct TfLiteContext*, TfLiteNode*);
  int (*invoke)(struct TfLiteContext*, TfLiteNode*);
  const char* (*profiling_string)(const struct TfLiteContext*, const TfLiteNode*);
  int32_t builtin_code; const char* custom_name; int version;
  void* registration_external; void* async_kernel; uint64_t inplace_operator;
} TfLiteRegistration;
typedef struct TfLiteContext {
  size_t tensors_size;
  int (*GetExecutionPlan)(struct TfLiteContext*, TfLiteIntArray**);
  TfLiteTensor* tensors;
  void* impl_;
  int (*ResizeTensor)(struct TfLiteContext*, TfLiteTensor*, TfLiteIntArray*);
  void (*ReportError)(struct TfLiteContext*, const char*, ...);
  int (*AddTensors)(struct TfLiteContext*, int, int*);
  int (*GetNodeAndRegistration)(struct TfLiteContext*, int, TfLiteNode**, TfLiteRegistration**);
  int (*ReplaceNodeSubsetsWithDelegateKernels)(struct TfLiteContext*, TfLiteRegistration, const TfLiteIntArray*,
                                               struct TfLiteDelegate*);
} TfLiteContext;
typedef struct TfLiteDelegate {
  void* data_; int (*Prepare)(TfLiteContext*, struct TfLiteDelegate*);
  void* copy_from; void* copy_to; void* free_handle; int64_t flags; void* opaque_delegate_builder;
} TfLiteDelegate;
typedef struct { TfLiteDelegate* delegate; TfLiteIntArray* nodes_to_replace; TfLiteIntArray* input_tensors;
                 TfLiteIntArray* output_tensors; } TfLiteDelegateParams;
typedef struct { int activation; bool pot_scale_int16; } AddParams;

enum { kOk = 0, kError = 1, kUInt8 = 3, kInt8 = 9, kAdd = 0, kDelegate = 51 };
enum { FAIL_NONE, FAIL_PREPARE, FAIL_INIT, FAIL_INVOKE };

typedef struct { int fail; TfLiteDelegate delegate; } Plugin;
typedef struct { int a, b, out; } AddNode;
/* The ADD nodes it runs, in order: hosts allow GetNodeAndRegistration only in Prepare. */
typedef struct { int count; AddNode adds[]; } Kernel;

static int32_t HighMul(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / (1ll << 31));
}
static int32_t DividePot(int32_t x, int exponent) {
  int32_t mask = (int32_t)((1ll << exponent) - 1);
  int32_t remainder = x & mask, threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}
static void QuantizeMultiplier(double d, int32_t* m, int* shift) {
  if (d == 0) { *m = 0; *shift = 0; return; }
  double q = frexp(d, shift);
  int64_t fixed = (int64_t)llround(q * (double)(1ll << 31));
  if (fixed == (1ll << 31)) { fixed /= 2; ++*shift; }
  if (*shift < -31) { *shift = 0; fixed = 0; }
  *m = (int32_t)fixed;
}
static int32_t Scale(int32_t x, int32_t m, int shift) { return DividePot(HighMul(x, m), -shift); }

static bool SameDims(const TfLiteIntArray* a, const TfLiteIntArray* b) {
  if (a->size != b->size) return false;
  for (int i = 0; i < a->size; ++i) if (a->data[i] != b->data[i]) return false;
  return true;
}

static bool Claimable(TfLiteContext* ctx, TfLiteNode* node, TfLiteRegistration* reg) {
  if (reg->builtin_code != kAdd || node->inputs->size != 2 || node->outputs->size != 1) return false;
  const AddParams* params = (const AddParams*)node->builtin_data;
  if (params && params->activation != 0) return false;
  const TfLiteTensor* a = &ctx->tensors[node->inputs->data[0]];
  const TfLiteTensor* b = &ctx->tensors[node->inputs->data[1]];
  const TfLiteTensor* o = &ctx->tensors[node->outputs->data[0]];
  if (a->type != o->type || b->type != o->type || (o->type != kInt8 && o->type != kUInt8)) return false;
  return SameDims(a->dims, b->dims) && SameDims(a->dims, o->dims) && a->params.scale > 0 && b->params.scale > 0 &&
         o->params.scale > 0;
}

static void* KernelInit(TfLiteContext* ctx, const char* buffer, size_t length) {
  const TfLiteDelegateParams* params = (const TfLiteDelegateParams*)buffer;
  Plugin* plugin = (Plugin*)params->delegate->data_;
  if (plugin->fail == FAIL_INIT) { ctx->ReportError(ctx, "naive_add: init refused (fail=init)"); return NULL; }
  Kernel* k = malloc(sizeof(Kernel) + sizeof(AddNode) * params->nodes_to_replace->size);
  k->count = params->nodes_to_replace->size;
  for (int i = 0; i < k->count; ++i) {
    TfLiteNode* add; TfLiteRegistration* reg;
    if (ctx->GetNodeAndRegistration(ctx, params->nodes_to_replace->data[i], &add, &reg) != kOk) { free(k); return NULL; }
    k->adds[i].a = add->inputs->data[0];
    k->adds[i].b = add->inputs->data[1];
    k->adds[i].out = add->outputs->data[0];
  }
  return k;
}
static void KernelFree(TfLiteContext* ctx, void* buffer) { free(buffer); }

static int KernelPrepare(TfLiteContext* ctx, TfLiteNode* node) {
  if (node->user_data == NULL) { ctx->ReportError(ctx, "naive_add: no kernel"); return kError; }
  return kOk;
}

static int RunAdd(TfLiteContext* ctx, const AddNode* add) {
  const TfLiteTensor* a = &ctx->tensors[add->a];
  const TfLiteTensor* b = &ctx->tensors[add->b];
  TfLiteTensor* o = &ctx->tensors[add->out];
  const int left_shift = 20;
  const double twice_max = 2.0 * (double)(a->params.scale > b->params.scale ? a->params.scale : b->params.scale);
  int32_t m1, m2, mo; int s1, s2, so;
  QuantizeMultiplier(a->params.scale / twice_max, &m1, &s1);
  QuantizeMultiplier(b->params.scale / twice_max, &m2, &s2);
  QuantizeMultiplier(twice_max / ((1 << left_shift) * o->params.scale), &mo, &so);
  const int32_t lo = o->type == kInt8 ? -128 : 0, hi = o->type == kInt8 ? 127 : 255;
  size_t n = 1;
  for (int i = 0; i < o->dims->size; ++i) n *= (size_t)o->dims->data[i];
  for (size_t i = 0; i < n; ++i) {
    int32_t x = o->type == kInt8 ? ((const int8_t*)a->data)[i] : ((const uint8_t*)a->data)[i];
    int32_t y = o->type == kInt8 ? ((const int8_t*)b->data)[i] : ((const uint8_t*)b->data)[i];
    int32_t sx = Scale((x - a->params.zero_point) * (1 << left_shift), m1, s1);
    int32_t sy = Scale((y - b->params.zero_point) * (1 << left_shift), m2, s2);
    int32_t r = Scale(sx + sy, mo, so) + o->params.zero_point;
    r = r < lo ? lo : r > hi ? hi : r;
    if (o->type == kInt8) ((int8_t*)o->data)[i] = (int8_t)r; else ((uint8_t*)o->data)[i] = (uint8_t)r;
  }
  return kOk;
}

static int KernelInvoke(TfLiteContext* ctx, TfLiteNode* node) {
  Kernel* k = (Kernel*)node->user_data;
  Plugin* plugin = (Plugin*)node->delegate->data_;
  if (plugin->fail == FAIL_INVOKE) { ctx->ReportError(ctx, "naive_add: invoke refused (fail=invoke)"); return kError; }
  for (int i = 0; i < k->count; ++i)
    if (RunAdd(ctx, &k->adds[i]) != kOk) return kError;
  return kOk;
}

static int DelegatePrepare(TfLiteContext* ctx, TfLiteDelegate* delegate) {
  Plugin* plugin = (Plugin*)delegate->data_;
  if (plugin->fail == FAIL_PREPARE) { ctx->ReportError(ctx, "naive_add: prepare refused (fail=prepare)"); return kError; }
  TfLiteIntArray* plan;
  if (ctx->GetExecutionPlan(ctx, &plan) != kOk) return kError;
  TfLiteIntArray* claimed = malloc(sizeof(int) * (1 + plan->size));
  claimed->size = 0;
  for (int i = 0; i < plan->size; ++i) {
    TfLiteNode* node; TfLiteRegistration* reg;
    if (ctx->GetNodeAndRegistration(ctx, plan->data[i], &node, &reg) != kOk) { free(claimed); return kError; }
    if (Claimable(ctx, node, reg)) claimed->data[claimed->size++] = plan->data[i];
  }
  TfLiteRegistration kernel;
  memset(&kernel, 0, sizeof(kernel));
  kernel.init = KernelInit; kernel.free = KernelFree; kernel.prepare = KernelPrepare; kernel.invoke = KernelInvoke;
  kernel.builtin_code = kDelegate; kernel.custom_name = "NaiveAdd"; kernel.version = 1;
  int status = claimed->size ? ctx->ReplaceNodeSubsetsWithDelegateKernels(ctx, kernel, claimed, delegate) : kOk;
  free(claimed);
  return status;
}

__attribute__((visibility("default"))) TfLiteDelegate* tflite_plugin_create_delegate(
    const char* const* keys, const char* const* values, size_t count, void (*report_error)(const char*)) {
  Plugin* plugin = calloc(1, sizeof(Plugin));
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(keys[i], "fail") == 0 && strcmp(values[i], "prepare") == 0) plugin->fail = FAIL_PREPARE;
    else if (strcmp(keys[i], "fail") == 0 && strcmp(values[i], "init") == 0) plugin->fail = FAIL_INIT;
    else if (strcmp(keys[i], "fail") == 0 && strcmp(values[i], "invoke") == 0) plugin->fail = FAIL_INVOKE;
    else {
      if (report_error) report_error("naive_add: unknown option");
      free(plugin);
      return NULL;
    }
  }
  plugin->delegate.data_ = plugin;
  plugin->delegate.Prepare = DelegatePrepare;
  return &plugin->delegate;
}

__attribute__((visibility("default"))) void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate) {
  if (delegate) free(delegate->data_);
}
