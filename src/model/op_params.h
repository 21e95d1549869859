// Plain parameter structs for builtin ops. The model reader fills them from the
// file's builtin options and the writer turns them back; kernels only ever see
// these structs, never the FlatBuffer (as in TFLite Micro's per-op parsers).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "delegato/types.h"

namespace delegato {

// Same values as the format's Padding and ActivationFunctionType enums.
enum class Padding : int8_t { kSame = 0, kValid = 1 };
enum class Activation : int8_t {
  kNone = 0,
  kRelu = 1,
  kReluN1To1 = 2,
  kRelu6 = 3,
  kTanh = 4,
  kSignBit = 5,
};

struct Conv2DParams {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  Activation activation = Activation::kNone;
  DataType quantized_bias_type = DataType::kFloat32;  // FLOAT32 = unset
};

struct Conv3DParams {
  Padding padding = Padding::kSame;
  int32_t stride_d = 1, stride_w = 1, stride_h = 1;
  Activation activation = Activation::kNone;
  int32_t dilation_d = 1, dilation_w = 1, dilation_h = 1;
};

struct DepthwiseConv2DParams {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t depth_multiplier = 0;  // informational; the filter shape is authoritative
  int32_t dilation_w = 1, dilation_h = 1;
  Activation activation = Activation::kNone;
};

struct FullyConnectedParams {
  Activation activation = Activation::kNone;
  int8_t weights_format = 0;  // 0 = DEFAULT, 1 = SHUFFLED4x16INT8
  bool keep_num_dims = false;
  bool asymmetric_quantize_inputs = false;
  DataType quantized_bias_type = DataType::kFloat32;
};

struct Pool2DParams {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  int32_t filter_w = 1, filter_h = 1;
  Activation activation = Activation::kNone;
};

// ADD, SUB, MUL, DIV: a fused activation (and ADD/SUB's int16 flag).
struct ElementwiseParams {
  Activation activation = Activation::kNone;
  bool pot_scale_int16 = true;
};

struct SoftmaxParams {
  float beta = 1.0f;
};

struct ConcatenationParams {
  int32_t axis = 0;
  Activation activation = Activation::kNone;
};

struct ReshapeParams {
  std::vector<int32_t> new_shape;
  bool has_new_shape = false;  // the options table carried a new_shape vector
};

struct SplitParams {
  int32_t num_splits = 0;
};

struct ReducerParams {
  bool keep_dims = false;
};

// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.
struct ResizeParams {
  bool align_corners = false;
  bool half_pixel_centers = false;
};

// ARG_MAX and ARG_MIN.
struct ArgMinMaxParams {
  DataType output_type = DataType::kInt64;
};

struct CastParams {
  DataType in_type = DataType::kFloat32;   // as stored; often left at 0
  DataType out_type = DataType::kFloat32;
  bool has_types = false;                  // the options table was present
};

struct PackParams {
  int32_t values_count = 0;
  int32_t axis = 0;
};

struct UnpackParams {
  int32_t num = 0;
  int32_t axis = 0;
};

struct SqueezeParams {
  std::vector<int32_t> squeeze_dims;
};

struct GatherParams {
  int32_t axis = 0;
  int32_t batch_dims = 0;
};

struct StridedSliceParams {
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0;
  int32_t new_axis_mask = 0, shrink_axis_mask = 0;
  bool offset = false;
};

struct LeakyReluParams {
  float alpha = 0.0f;
};

struct TransposeConvParams {
  Padding padding = Padding::kSame;
  int32_t stride_w = 1, stride_h = 1;
  Activation activation = Activation::kNone;
};

struct SvdfParams {
  int32_t rank = 0;
  Activation activation = Activation::kNone;
  bool asymmetric_quantize_inputs = false;
};

// RNNOptions (time_major unused), SequenceRNNOptions and BidirectionalSequenceRNNOptions.
struct RnnParams {
  Activation activation = Activation::kNone;
  bool asymmetric_quantize_inputs = false;
  bool time_major = false;  // SequenceRNNOptions and BidirectionalSequenceRNNOptions
  bool merge_outputs = false;  // BidirectionalSequenceRNNOptions only
};

// UnidirectionalSequenceLSTMOptions, and LSTMOptions (time_major and
// diagonal_recurrent_tensors unused; basic_kernel is its kernel_type BASIC).
struct SequenceLstmParams {
  Activation activation = Activation::kNone;
  float cell_clip = 0.0f, proj_clip = 0.0f;
  bool time_major = false;
  bool asymmetric_quantize_inputs = false;
  bool diagonal_recurrent_tensors = false;
  bool basic_kernel = false;  // LSTMOptions only
  bool merge_outputs = false;  // BidirectionalSequenceLSTMOptions only
};

struct BatchMatMulParams {
  bool adj_x = false, adj_y = false;
  bool asymmetric_quantize_inputs = false;
};

// GELU, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION (ops/math.cc).
struct GeluParams {
  bool approximate = false;  // tanh approximation instead of the erf form
};

struct L2NormParams {
  Activation activation = Activation::kNone;
};

struct LocalResponseNormParams {
  int32_t radius = 0;
  float bias = 0.0f, alpha = 0.0f, beta = 0.0f;
};

// Shape, data-movement and indexing ops (ops/data_movement.cc, ops/index_ops.cc).
struct ShapeParams {
  DataType out_type = DataType::kInt32;
};

enum class MirrorPadMode : int8_t { kReflect = 0, kSymmetric = 1 };
struct MirrorPadParams {
  MirrorPadMode mode = MirrorPadMode::kReflect;
};

// DEPTH_TO_SPACE and SPACE_TO_DEPTH.
struct BlockSizeParams {
  int32_t block_size = 0;
};

struct OneHotParams {
  int32_t axis = -1;
};

struct CumsumParams {
  bool exclusive = false;
  bool reverse = false;
};

struct ReverseSequenceParams {
  int32_t seq_dim = 0;
  int32_t batch_dim = 0;
};

struct SparseToDenseParams {
  bool validate_indices = false;
};

struct BucketizeParams {
  std::vector<float> boundaries;
};

struct UniqueParams {
  DataType idx_out_type = DataType::kInt32;
};

// IF: the subgraphs run when the condition is true / false.
struct IfParams {
  int32_t then_subgraph_index = 0;
  int32_t else_subgraph_index = 0;
};

struct WhileParams {
  int32_t cond_subgraph_index = 0;
  int32_t body_subgraph_index = 0;
};

struct CallOnceParams {
  int32_t init_subgraph_index = 0;
};

// A resource variable is named by (container, shared_name).
struct VarHandleParams {
  std::string container;
  std::string shared_name;
};

// The options table exists but has no fields (PadOptions, QuantizeOptions, ...).
struct EmptyParams {};

using OpParams = std::variant<std::monostate, EmptyParams, Conv2DParams, DepthwiseConv2DParams,
                              FullyConnectedParams, Pool2DParams, ElementwiseParams,
                              SoftmaxParams, ConcatenationParams, ReshapeParams, SplitParams,
                              ReducerParams, ResizeParams, ArgMinMaxParams, CastParams,
                              PackParams, UnpackParams, SqueezeParams, GatherParams,
                              StridedSliceParams, LeakyReluParams, TransposeConvParams,
                              SvdfParams, SequenceLstmParams, RnnParams,
                              BatchMatMulParams, Conv3DParams,
                              GeluParams, L2NormParams, LocalResponseNormParams,
                              ShapeParams, MirrorPadParams, BlockSizeParams, OneHotParams,
                              CumsumParams, ReverseSequenceParams, SparseToDenseParams,
                              BucketizeParams, UniqueParams, IfParams, WhileParams,
                              CallOnceParams, VarHandleParams>;

}  // namespace delegato
