// TFLite_Detection_PostProcess (custom op): SSD box decoding + NMS.
//   inputs:  box encodings [1, boxes, >=4], class predictions [1, boxes,
//            classes (+1 background)], anchors [>=boxes, 4]; float32, or uint8
//            with per-tensor quantization (encodings and anchors together)
//   outputs: boxes [1, N, 4], classes [1, N], scores [1, N], count [1], float32,
//            N = max_detections * max_classes_per_detection
//   options: a FlexBuffer map in the operator's custom_options.
#include <flatbuffers/flexbuffers.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/reference/detection_postprocess.h"
#include "ops/kernel.h"

namespace delegato {

namespace {

using reference::DetectionPostProcessParams;

constexpr int kBoxEncodings = 0;
constexpr int kClassPredictions = 1;
constexpr int kAnchors = 2;

struct DetectionPostProcessData {
  DetectionPostProcessParams params;
  reference::DetectionShape shape;
  int32_t encoding_length = 4;
};

bool IsIntegerType(flexbuffers::Type type) {
  return type == flexbuffers::FBT_INT || type == flexbuffers::FBT_UINT ||
         type == flexbuffers::FBT_INDIRECT_INT || type == flexbuffers::FBT_INDIRECT_UINT;
}

bool IsFloatType(flexbuffers::Type type) {
  return type == flexbuffers::FBT_FLOAT || type == flexbuffers::FBT_INDIRECT_FLOAT;
}

// Reads the options map. The buffer is verified first, so lookups stay inside
// it; each key must be present (unless it has a default) with a numeric type.
class OptionReader {
 public:
  OptionReader(const KernelContext& ctx, const Node& node) : ctx_(ctx), node_(node) {
    const std::vector<uint8_t>& bytes = node.def->custom_options;
    DLG_NODE_CHECK(ctx, node, !bytes.empty(),
                   "custom options are missing (expected a FlexBuffer map of NMS parameters)");
    std::vector<uint8_t> visited;  // makes verification linear in the buffer size
    DLG_NODE_CHECK(ctx, node, flexbuffers::VerifyBuffer(bytes.data(), bytes.size(), &visited),
                   "custom options (", bytes.size(), " bytes) are not a valid FlexBuffer");
    flexbuffers::Reference root = flexbuffers::GetRoot(bytes.data(), bytes.size());
    DLG_NODE_CHECK(ctx, node, root.IsMap(), "custom options are not a FlexBuffer map");
    map_ = root.AsMap();
  }

  int32_t Int(const char* key, const int32_t* default_value = nullptr) const {
    flexbuffers::Reference value = map_[key];
    if (value.IsNull()) {
      DLG_NODE_CHECK(ctx_, node_, default_value != nullptr, "custom option '", key,
                     "' is missing");
      return *default_value;
    }
    DLG_NODE_CHECK(ctx_, node_, IsIntegerType(value.GetType()), "custom option '", key,
                   "' must be an integer");
    const bool is_unsigned = value.GetType() == flexbuffers::FBT_UINT ||
                             value.GetType() == flexbuffers::FBT_INDIRECT_UINT;
    if (is_unsigned) {
      const uint64_t v = value.AsUInt64();
      DLG_NODE_CHECK(ctx_, node_, v <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()),
                     "custom option '", key, "' = ", v, " does not fit in int32");
      return static_cast<int32_t>(v);
    }
    const int64_t v = value.AsInt64();
    DLG_NODE_CHECK(ctx_, node_,
                   v >= std::numeric_limits<int32_t>::min() &&
                       v <= std::numeric_limits<int32_t>::max(),
                   "custom option '", key, "' = ", v, " does not fit in int32");
    return static_cast<int32_t>(v);
  }

  float Float(const char* key) const {
    flexbuffers::Reference value = map_[key];
    DLG_NODE_CHECK(ctx_, node_, !value.IsNull(), "custom option '", key, "' is missing");
    DLG_NODE_CHECK(ctx_, node_, IsFloatType(value.GetType()) || IsIntegerType(value.GetType()),
                   "custom option '", key, "' must be a number");
    return value.AsFloat();
  }

  bool Bool(const char* key, bool default_value) const {
    flexbuffers::Reference value = map_[key];
    if (value.IsNull()) return default_value;
    DLG_NODE_CHECK(ctx_, node_,
                   value.GetType() == flexbuffers::FBT_BOOL || IsIntegerType(value.GetType()),
                   "custom option '", key, "' must be a boolean");
    return value.AsBool();
  }

 private:
  const KernelContext& ctx_;
  const Node& node_;
  flexbuffers::Map map_ = flexbuffers::Map::EmptyMap();
};

DetectionPostProcessParams ParseOptions(const KernelContext& ctx, const Node& node) {
  OptionReader reader(ctx, node);
  DetectionPostProcessParams p;
  const int32_t kDefaultDetectionsPerClass = 100;
  p.max_detections = reader.Int("max_detections");
  p.max_classes_per_detection = reader.Int("max_classes_per_detection");
  p.detections_per_class = reader.Int("detections_per_class", &kDefaultDetectionsPerClass);
  p.use_regular_nms = reader.Bool("use_regular_nms", false);
  p.score_threshold = reader.Float("nms_score_threshold");
  p.iou_threshold = reader.Float("nms_iou_threshold");
  p.num_classes = reader.Int("num_classes");
  p.y_scale = reader.Float("y_scale");
  p.x_scale = reader.Float("x_scale");
  p.h_scale = reader.Float("h_scale");
  p.w_scale = reader.Float("w_scale");

  DLG_NODE_CHECK(ctx, node, p.max_detections >= 0, "max_detections must be non-negative, got ",
                 p.max_detections);
  DLG_NODE_CHECK(ctx, node, p.num_classes > 0, "num_classes must be positive, got ",
                 p.num_classes);
  DLG_NODE_CHECK(ctx, node, p.detections_per_class >= 0,
                 "detections_per_class must be non-negative, got ", p.detections_per_class);
  // Every slot index is max_classes_per_detection * detection + class.
  DLG_NODE_CHECK(ctx, node, p.max_classes_per_detection > 0,
                 "max_classes_per_detection must be positive, got ", p.max_classes_per_detection);
  DLG_NODE_CHECK(ctx, node,
                 static_cast<int64_t>(p.max_detections) * p.max_classes_per_detection <=
                     std::numeric_limits<int32_t>::max(),
                 "max_detections * max_classes_per_detection overflows int32");
  if (p.use_regular_nms) {
    DLG_NODE_CHECK(ctx, node, std::min(p.detections_per_class, p.max_detections) > 0,
                   "regular NMS needs max_detections and detections_per_class > 0, got ",
                   p.max_detections, " and ", p.detections_per_class);
  }
  // NaN fails both comparisons and is rejected.
  DLG_NODE_CHECK(ctx, node, p.iou_threshold > 0.0f && p.iou_threshold <= 1.0f,
                 "nms_iou_threshold must be in (0, 1], got ", p.iou_threshold);
  return p;
}

// Affine per-tensor uint8 parameters, as the kernel reads them.
void CheckPerTensor(const KernelContext& ctx, const Node& node, const Tensor& t,
                    const char* role) {
  if (t.type != DataType::kUInt8) return;
  DLG_NODE_CHECK(ctx, node, !t.quantization->per_axis(), role, " tensor \"", t.name,
                 "\" must be quantized per tensor");
}

// A constant's buffer must hold exactly its shape (models are untrusted).
void CheckConstantBytes(const KernelContext& ctx, const Node& node, const Tensor& t,
                        const char* role) {
  if (!t.is_constant()) return;
  const size_t expected = TensorByteSize(t.type, t.dims);
  DLG_NODE_CHECK(ctx, node, t.bytes == expected, role, " \"", t.name, "\" holds ", t.bytes,
                 " bytes, its shape needs ", expected);
}

}  // namespace

void PrepareDetectionPostProcess(KernelContext& ctx, Node& node) {
  ctx.CheckInputCount(node, 3, 3);
  ctx.CheckOutputCount(node, 4);
  auto data = std::make_shared<DetectionPostProcessData>();
  DetectionPostProcessParams& p = data->params;
  p = ParseOptions(ctx, node);

  const Tensor& encodings = ctx.input(node, kBoxEncodings);
  const Tensor& predictions = ctx.input(node, kClassPredictions);
  const Tensor& anchors = ctx.input(node, kAnchors);

  DLG_NODE_CHECK(ctx, node,
                 encodings.type == DataType::kFloat32 || encodings.type == DataType::kUInt8,
                 "box encodings \"", encodings.name, "\" have type ", DataTypeName(encodings.type),
                 "; FLOAT32 or UINT8 expected");
  DLG_NODE_CHECK(ctx, node, anchors.type == encodings.type, "anchors \"", anchors.name,
                 "\" have type ", DataTypeName(anchors.type), " but box encodings are ",
                 DataTypeName(encodings.type));
  DLG_NODE_CHECK(ctx, node,
                 predictions.type == DataType::kFloat32 || predictions.type == DataType::kUInt8,
                 "class predictions \"", predictions.name, "\" have type ",
                 DataTypeName(predictions.type), "; FLOAT32 or UINT8 expected");
  CheckPerTensor(ctx, node, encodings, "box encodings");
  CheckPerTensor(ctx, node, predictions, "class predictions");
  CheckPerTensor(ctx, node, anchors, "anchors");

  DLG_NODE_CHECK(ctx, node, encodings.rank() == 3, "box encodings \"", encodings.name,
                 "\" must have rank 3 [1, boxes, 4+], has rank ", encodings.rank());
  DLG_NODE_CHECK(ctx, node, predictions.rank() == 3, "class predictions \"", predictions.name,
                 "\" must have rank 3 [1, boxes, classes], has rank ", predictions.rank());
  DLG_NODE_CHECK(ctx, node, anchors.rank() == 2, "anchors \"", anchors.name,
                 "\" must have rank 2 [boxes, 4], has rank ", anchors.rank());
  const int32_t num_boxes = encodings.dim(1);
  DLG_NODE_CHECK(ctx, node, encodings.dim(0) == 1, "box encodings batch must be 1, got ",
                 encodings.dim(0));
  DLG_NODE_CHECK(ctx, node, encodings.dim(2) >= 4,
                 "box encodings need at least 4 values per box, got ", encodings.dim(2));
  DLG_NODE_CHECK(ctx, node, predictions.dim(0) == 1, "class predictions batch must be 1, got ",
                 predictions.dim(0));
  DLG_NODE_CHECK(ctx, node, predictions.dim(1) == num_boxes, "class predictions have ",
                 predictions.dim(1), " boxes, box encodings ", num_boxes);
  DLG_NODE_CHECK(ctx, node, anchors.dim(1) == 4 && anchors.dim(0) >= num_boxes, "anchors \"",
                 anchors.name, "\" must be [", num_boxes, ", 4], got [", anchors.dim(0), ", ",
                 anchors.dim(1), "]");
  const int32_t classes_with_background = predictions.dim(2);
  const int32_t label_offset = classes_with_background - p.num_classes;
  DLG_NODE_CHECK(ctx, node, label_offset == 0 || label_offset == 1, "class predictions have ",
                 classes_with_background, " classes per box; num_classes = ", p.num_classes,
                 " allows ", p.num_classes, " or ", p.num_classes + 1, " (with background)");
  DLG_NODE_CHECK(ctx, node,
                 static_cast<int64_t>(num_boxes) * classes_with_background <=
                     std::numeric_limits<int32_t>::max(),
                 "boxes * classes overflows int32");

  CheckConstantBytes(ctx, node, encodings, "box encodings");
  CheckConstantBytes(ctx, node, predictions, "class predictions");
  CheckConstantBytes(ctx, node, anchors, "anchors");

  data->encoding_length = encodings.dim(2);
  data->shape = reference::DetectionShape{num_boxes, classes_with_background,
                                          predictions.type == DataType::kUInt8};

  const int32_t slots = p.max_detections * p.max_classes_per_detection;
  for (int i = 0; i < 4; ++i) ctx.CheckType(node, ctx.output(node, i), DataType::kFloat32);
  ctx.SetOutputDims(node, 0, {1, slots, 4});
  ctx.SetOutputDims(node, 1, {1, slots});
  ctx.SetOutputDims(node, 2, {1, slots});
  ctx.SetOutputDims(node, 3, {1});

  node.scratch_bytes = reference::DetectionScratchLayout(p, data->shape).Bytes();
  node.op_data = std::move(data);
}

void EvalDetectionPostProcess(KernelContext& ctx, const Node& node) {
  const auto& data = *node.data<DetectionPostProcessData>();
  const DetectionPostProcessParams& p = data.params;
  const Tensor& encodings = ctx.in(node, kBoxEncodings);
  const Tensor& predictions = ctx.in(node, kClassPredictions);
  const Tensor& anchors = ctx.in(node, kAnchors);
  const reference::DetectionScratch scratch =
      reference::DetectionScratchLayout(p, data.shape).Bind(node.scratch);
  const int32_t num_boxes = data.shape.num_boxes;

  if (encodings.type == DataType::kUInt8) {
    reference::DecodeBoxes(p, num_boxes, encodings.data_as<uint8_t>(), data.encoding_length,
                           encodings.zero_point(), encodings.scale(), anchors.data_as<uint8_t>(),
                           anchors.zero_point(), anchors.scale(), scratch.decoded_boxes);
  } else {
    reference::DecodeBoxes(p, num_boxes, encodings.data_as<float>(), data.encoding_length,
                           anchors.data_as<float>(), scratch.decoded_boxes);
  }

  const float* scores = predictions.data_as<float>();
  if (data.shape.dequantize_scores) {
    reference::DequantizeScores(
        predictions.data_as<uint8_t>(),
        static_cast<int64_t>(num_boxes) * data.shape.num_classes_with_background,
        predictions.zero_point(), predictions.scale(), scratch.dequantized_scores);
    scores = scratch.dequantized_scores;
  }

  const reference::DetectionOutputs outputs{
      ctx.out(node, 0).data_as<float>(), ctx.out(node, 1).data_as<float>(),
      ctx.out(node, 2).data_as<float>(), ctx.out(node, 3).data_as<float>(),
      static_cast<int64_t>(p.max_detections) * p.max_classes_per_detection};
  if (!reference::DetectionNonMaxSuppression(p, num_boxes, data.shape.num_classes_with_background,
                                             scores, scratch, outputs)) {
    ctx.SetEvalError(node,
                     "a decoded box has ymin > ymax or xmin > xmax (check the anchors and the "
                     "box encodings)");
  }
}

}  // namespace delegato
