// TFLite's builtin parameter structs (tensorflow/lite/core/c/builtin_op_data.h)
// for the ops delegato runs: the host hands them to the plugin through
// TfLiteNode::builtin_data. Declared from the documented field order and
// checked below; only ops listed here can be claimed by the plugin.
#pragma once

#include <cstddef>

#include "abi/tflite_abi.h"

namespace delegato::abi {

enum TfLitePadding : int { kTfLitePaddingUnknown = 0, kTfLitePaddingSame = 1, kTfLitePaddingValid = 2 };

enum TfLiteFusedActivation : int {
  kTfLiteActNone = 0,
  kTfLiteActRelu = 1,
  kTfLiteActReluN1To1 = 2,
  kTfLiteActRelu6 = 3,
  kTfLiteActTanh = 4,
  kTfLiteActSignBit = 5,
  kTfLiteActSigmoid = 6,
};

struct TfLitePaddingValues {
  int width, height, width_offset, height_offset;
};

struct TfLiteConvParams {
  TfLitePadding padding;
  int stride_width, stride_height;
  TfLiteFusedActivation activation;
  int dilation_width_factor, dilation_height_factor;
  TfLiteType quantized_bias_type;
};

struct TfLiteDepthwiseConvParams {
  TfLitePadding padding;
  int stride_width, stride_height;
  int depth_multiplier;
  TfLiteFusedActivation activation;
  int dilation_width_factor, dilation_height_factor;
};

struct TfLitePoolParams {
  TfLitePadding padding;
  int stride_width, stride_height;
  int filter_width, filter_height;
  TfLiteFusedActivation activation;
  TfLitePaddingValues computed_padding;
};

struct TfLiteFullyConnectedParams {
  TfLiteFusedActivation activation;
  int weights_format;  // 0 = default, 1 = shuffled 4x16 int8
  bool keep_num_dims;
  bool asymmetric_quantize_inputs;
  TfLiteType quantized_bias_type;
};

struct TfLiteAddSubParams {  // TfLiteAddParams and TfLiteSubParams
  TfLiteFusedActivation activation;
  bool pot_scale_int16;
};

struct TfLiteActivationParams {  // TfLiteMulParams and TfLiteDivParams
  TfLiteFusedActivation activation;
};

struct TfLiteSoftmaxParams {
  float beta;
};

struct TfLiteConcatenationParams {
  int axis;
  TfLiteFusedActivation activation;
};

constexpr int kTfLiteMaxReshapeDims = 8;
struct TfLiteReshapeParams {
  int shape[kTfLiteMaxReshapeDims];
  int num_dimensions;
};

struct TfLiteSqueezeParams {
  int squeeze_dims[8];
  int num_squeeze_dims;
};

struct TfLiteSplitParams {  // also TfLiteSplitVParams
  int num_splits;
};

struct TfLiteReducerParams {
  bool keep_dims;
};

struct TfLiteResizeParams {  // TfLiteResizeBilinearParams, TfLiteResizeNearestNeighborParams
  bool align_corners;
  bool half_pixel_centers;
};

struct TfLiteArgMinMaxParams {
  TfLiteType output_type;
};

struct TfLiteCastParams {
  TfLiteType in_data_type;
  TfLiteType out_data_type;
};

struct TfLitePackParams {
  int values_count;
  int axis;
};

struct TfLiteUnpackParams {
  int num;
  int axis;
};

struct TfLiteGatherParams {
  int axis;
  int batch_dims;
};

struct TfLiteStridedSliceParams {
  int begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
  bool offset;
};

struct TfLiteSVDFParams {
  int rank;
  TfLiteFusedActivation activation;
  bool asymmetric_quantize_inputs;
};

struct TfLiteUnidirectionalSequenceLSTMParams {
  TfLiteFusedActivation activation;
  float cell_clip;
  float proj_clip;
  bool time_major;
  bool asymmetric_quantize_inputs;
  bool diagonal_recurrent_tensors;
};

static_assert(offsetof(TfLiteConvParams, activation) == 12);
static_assert(offsetof(TfLiteConvParams, dilation_height_factor) == 20);
static_assert(offsetof(TfLiteConvParams, quantized_bias_type) == 24);
static_assert(offsetof(TfLiteDepthwiseConvParams, depth_multiplier) == 12);
static_assert(offsetof(TfLiteDepthwiseConvParams, activation) == 16);
static_assert(offsetof(TfLiteDepthwiseConvParams, dilation_height_factor) == 24);
static_assert(offsetof(TfLitePoolParams, filter_height) == 16);
static_assert(offsetof(TfLitePoolParams, activation) == 20);
static_assert(offsetof(TfLiteFullyConnectedParams, keep_num_dims) == 8);
static_assert(offsetof(TfLiteFullyConnectedParams, asymmetric_quantize_inputs) == 9);
static_assert(offsetof(TfLiteFullyConnectedParams, quantized_bias_type) == 12);
static_assert(offsetof(TfLiteAddSubParams, pot_scale_int16) == 4);
static_assert(offsetof(TfLiteConcatenationParams, activation) == 4);
static_assert(offsetof(TfLiteReshapeParams, num_dimensions) == 32);
static_assert(offsetof(TfLiteSqueezeParams, num_squeeze_dims) == 32);
static_assert(offsetof(TfLiteResizeParams, half_pixel_centers) == 1);
static_assert(offsetof(TfLiteCastParams, out_data_type) == 4);
static_assert(offsetof(TfLitePackParams, axis) == 4);
static_assert(offsetof(TfLiteUnpackParams, axis) == 4);
static_assert(offsetof(TfLiteGatherParams, batch_dims) == 4);
static_assert(offsetof(TfLiteStridedSliceParams, shrink_axis_mask) == 16);
static_assert(offsetof(TfLiteStridedSliceParams, offset) == 20);
static_assert(offsetof(TfLiteSVDFParams, asymmetric_quantize_inputs) == 8);
static_assert(offsetof(TfLiteUnidirectionalSequenceLSTMParams, proj_clip) == 8);
static_assert(offsetof(TfLiteUnidirectionalSequenceLSTMParams, time_major) == 12);
static_assert(offsetof(TfLiteUnidirectionalSequenceLSTMParams, diagonal_recurrent_tensors) == 14);

}  // namespace delegato::abi
