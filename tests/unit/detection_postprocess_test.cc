// TFLite_Detection_PostProcess: decoding, fast and regular NMS, uint8 inputs,
// and rejection of bad options / tensors.
#include <flatbuffers/flexbuffers.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;

constexpr char kOpName[] = "TFLite_Detection_PostProcess";

struct Options {
  int max_detections = 3;
  int max_classes_per_detection = 1;
  int detections_per_class = 100;
  bool use_regular_nms = false;
  float score_threshold = 0.0f;
  float iou_threshold = 0.5f;
  int num_classes = 2;
  float y_scale = 10.0f, x_scale = 10.0f, h_scale = 5.0f, w_scale = 5.0f;
};

std::vector<uint8_t> OptionBytes(const Options& o) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Int("max_detections", o.max_detections);
    fbb.Int("max_classes_per_detection", o.max_classes_per_detection);
    fbb.Int("detections_per_class", o.detections_per_class);
    fbb.Bool("use_regular_nms", o.use_regular_nms);
    fbb.Float("nms_score_threshold", o.score_threshold);
    fbb.Float("nms_iou_threshold", o.iou_threshold);
    fbb.Int("num_classes", o.num_classes);
    fbb.Float("y_scale", o.y_scale);
    fbb.Float("x_scale", o.x_scale);
    fbb.Float("h_scale", o.h_scale);
    fbb.Float("w_scale", o.w_scale);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

// Three anchors (y, x, h, w): 0 and 1 overlap (IoU 0.9 / 1.1), 2 stands apart.
const std::vector<float> kAnchors = {0.5f, 0.5f, 1.0f, 1.0f,  //
                                     0.6f, 0.5f, 1.0f, 1.0f,  //
                                     2.5f, 2.5f, 1.0f, 1.0f};
// With zero encodings each box is its anchor.
const std::vector<float> kBox0 = {0.0f, 0.0f, 1.0f, 1.0f};
const std::vector<float> kBox1 = {0.6f - 0.5f, 0.0f, 0.6f + 0.5f, 1.0f};
const std::vector<float> kBox2 = {2.0f, 2.0f, 3.0f, 3.0f};
const std::vector<float> kNoBox = {0.0f, 0.0f, 0.0f, 0.0f};
const std::vector<float> kZeroEncodings(12, 0.0f);

std::vector<float> Concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// One TFLite_Detection_PostProcess node over graph inputs (encodings, class
// predictions, anchors) and four float outputs.
class DetectionModel {
 public:
  DetectionModel(const std::vector<uint8_t>& options, int num_boxes, int classes_with_background,
                 DataType box_type = DataType::kFloat32, DataType score_type = DataType::kFloat32,
                 Quantization box_q = {}, Quantization score_q = {}, Quantization anchor_q = {},
                 int encoding_length = 4) {
    int enc = m_.AddInput(box_type, {1, num_boxes, encoding_length}, box_q);
    int cls = m_.AddInput(score_type, {1, num_boxes, classes_with_background}, score_q);
    int anc = m_.AddInput(box_type, {num_boxes, 4}, anchor_q);
    std::vector<int32_t> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(m_.AddOutput(DataType::kFloat32));
    m_.AddCustomOp(kOpName, {enc, cls, anc}, outs, options);
  }
  OpModel& model() { return m_; }

 private:
  OpModel m_;
};

struct Detections {
  std::vector<float> boxes, classes, scores, count;
};

template <class T>
Detections RunDetection(OpModel& m, const std::vector<T>& encodings, const std::vector<T>& anchors,
               const std::vector<float>& scores_f, const std::vector<uint8_t>& scores_q = {}) {
  m.Build();
  m.SetInput<T>(0, encodings);
  if (scores_q.empty()) {
    m.SetInput<float>(1, scores_f);
  } else {
    m.SetInput<uint8_t>(1, scores_q);
  }
  m.SetInput<T>(2, anchors);
  m.Invoke();
  return Detections{m.GetOutput<float>(0), m.GetOutput<float>(1), m.GetOutput<float>(2),
                    m.GetOutput<float>(3)};
}

// Background column first, then two classes.
const std::vector<float> kScoresWithBackground = {0.9f, 0.8f, 0.1f,   //
                                                  0.0f, 0.7f, 0.75f,  //
                                                  0.0f, 0.3f, 0.6f};

TEST(DetectionPostProcess, FastNmsSuppressesOverlapAndSkipsBackground) {
  DetectionModel dm(OptionBytes(Options{}), 3, 3);
  Detections d =
      RunDetection<float>(dm.model(), kZeroEncodings, kAnchors, kScoresWithBackground);
  EXPECT_THAT(dm.model().GetOutputShape(0), ElementsAre(1, 3, 4));
  EXPECT_THAT(dm.model().GetOutputShape(1), ElementsAre(1, 3));
  EXPECT_THAT(dm.model().GetOutputShape(3), ElementsAre(1));
  // Box 0 (best 0.8, class 0) suppresses box 1 (best 0.75); box 2 keeps class 1.
  EXPECT_THAT(d.boxes, ElementsAreArray(Concat({kBox0, kBox2, kNoBox})));
  EXPECT_THAT(d.classes, ElementsAre(0.0f, 1.0f, 0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.8f, 0.6f, 0.0f));
  EXPECT_THAT(d.count, ElementsAre(2.0f));
}

TEST(DetectionPostProcess, FastNmsWithoutBackgroundColumn) {
  Options o;
  o.num_classes = 3;  // every column is a class
  DetectionModel dm(OptionBytes(o), 3, 3);
  Detections d =
      RunDetection<float>(dm.model(), kZeroEncodings, kAnchors, kScoresWithBackground);
  // Box 0 now scores 0.9 in class 0 and still suppresses box 1.
  EXPECT_THAT(d.boxes, ElementsAreArray(Concat({kBox0, kBox2, kNoBox})));
  EXPECT_THAT(d.classes, ElementsAre(0.0f, 2.0f, 0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.9f, 0.6f, 0.0f));
  EXPECT_THAT(d.count, ElementsAre(2.0f));
}

TEST(DetectionPostProcess, FastNmsSeveralClassesPerDetection) {
  Options o;
  o.max_detections = 2;
  o.max_classes_per_detection = 2;
  DetectionModel dm(OptionBytes(o), 3, 3);
  Detections d =
      RunDetection<float>(dm.model(), kZeroEncodings, kAnchors, kScoresWithBackground);
  EXPECT_THAT(dm.model().GetOutputShape(0), ElementsAre(1, 4, 4));
  EXPECT_THAT(d.boxes, ElementsAreArray(Concat({kBox0, kBox0, kBox2, kBox2})));
  EXPECT_THAT(d.classes, ElementsAre(0.0f, 1.0f, 1.0f, 0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.8f, 0.1f, 0.6f, 0.3f));
  EXPECT_THAT(d.count, ElementsAre(2.0f));
}

TEST(DetectionPostProcess, ScoreThresholdDropsLowBoxes) {
  Options o;
  o.score_threshold = 0.65f;
  DetectionModel dm(OptionBytes(o), 3, 3);
  Detections d =
      RunDetection<float>(dm.model(), kZeroEncodings, kAnchors, kScoresWithBackground);
  EXPECT_THAT(d.boxes, ElementsAreArray(Concat({kBox0, kNoBox, kNoBox})));
  EXPECT_THAT(d.classes, ElementsAre(0.0f, 0.0f, 0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.8f, 0.0f, 0.0f));
  EXPECT_THAT(d.count, ElementsAre(1.0f));
}

TEST(DetectionPostProcess, MaxDetectionsTruncates) {
  Options o;
  o.max_detections = 1;
  o.iou_threshold = 1.0f;  // nothing overlaps enough to be suppressed
  DetectionModel dm(OptionBytes(o), 3, 3);
  Detections d =
      RunDetection<float>(dm.model(), kZeroEncodings, kAnchors, kScoresWithBackground);
  EXPECT_THAT(d.boxes, ElementsAreArray(kBox0));
  EXPECT_THAT(d.classes, ElementsAre(0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.8f));
  EXPECT_THAT(d.count, ElementsAre(1.0f));
}

TEST(DetectionPostProcess, DecodesCenterSizeEncodings) {
  Options o;
  o.max_detections = 1;
  DetectionModel dm(OptionBytes(o), 1, 2, DataType::kFloat32, DataType::kFloat32, {}, {}, {},
                    /*encoding_length=*/6);  // extra key-point values are ignored
  // y, x move the centre by value / scale * anchor size; h, w scale by exp(value / scale).
  const std::vector<float> encodings = {5.0f, -10.0f, 0.0f, 0.0f, 9.0f, 9.0f};
  const std::vector<float> anchors = {1.0f, 2.0f, 2.0f, 4.0f};
  Detections d = RunDetection<float>(dm.model(), encodings, anchors, {0.0f, 0.5f});
  // centre (1 + 0.5 * 2, 2 - 1 * 4) = (2, -2), half size (1, 2).
  EXPECT_THAT(d.boxes, ElementsAre(1.0f, -4.0f, 3.0f, 0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.5f));
}

TEST(DetectionPostProcess, RegularNmsPerClassThenMerged) {
  Options o;
  o.use_regular_nms = true;
  o.detections_per_class = 2;
  DetectionModel dm(OptionBytes(o), 3, 3);
  Detections d =
      RunDetection<float>(dm.model(), kZeroEncodings, kAnchors, kScoresWithBackground);
  // Class 0 keeps boxes 0 (0.8) and 2 (0.3); class 1 keeps box 1 (0.75,
  // suppressing box 0) and box 2 (0.6). The best three overall:
  EXPECT_THAT(d.boxes, ElementsAreArray(Concat({kBox0, kBox1, kBox2})));
  EXPECT_THAT(d.classes, ElementsAre(0.0f, 1.0f, 1.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.8f, 0.75f, 0.6f));
  EXPECT_THAT(d.count, ElementsAre(3.0f));
}

TEST(DetectionPostProcess, RegularNmsTiesKeepBoxThenClassOrder) {
  Options o;
  o.use_regular_nms = true;
  o.num_classes = 3;
  DetectionModel dm(OptionBytes(o), 2, 4);
  const std::vector<float> anchors = {0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f, 0.5f, 0.5f};
  Detections d = RunDetection<float>(dm.model(), std::vector<float>(8, 0.0f), anchors,
                            std::vector<float>(8, 0.5f));
  const std::vector<float> box0 = {0.0f, 0.0f, 0.5f, 0.5f};
  const std::vector<float> box1 = {0.5f, 0.5f, 1.0f, 1.0f};
  EXPECT_THAT(d.boxes, ElementsAreArray(Concat({box0, box1, box0})));
  EXPECT_THAT(d.classes, ElementsAre(0.0f, 0.0f, 1.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.5f, 0.5f, 0.5f));
  EXPECT_THAT(d.count, ElementsAre(3.0f));
}

TEST(DetectionPostProcess, RegularNmsPadsEmptySlots) {
  Options o;
  o.use_regular_nms = true;
  o.max_detections = 4;
  o.score_threshold = 0.7f;
  DetectionModel dm(OptionBytes(o), 3, 3);
  Detections d =
      RunDetection<float>(dm.model(), kZeroEncodings, kAnchors, kScoresWithBackground);
  EXPECT_THAT(d.boxes, ElementsAreArray(Concat({kBox0, kBox1, kNoBox, kNoBox})));
  EXPECT_THAT(d.classes, ElementsAre(0.0f, 1.0f, 0.0f, 0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.8f, 0.75f, 0.0f, 0.0f));
  EXPECT_THAT(d.count, ElementsAre(2.0f));
}

TEST(DetectionPostProcess, Uint8InputsAreDequantized) {
  // Encodings: scale 0.5, zero point 128; anchors: scale 0.01, zero point 0;
  // scores: scale 1/256, zero point 0.
  Options o;
  o.max_detections = 2;
  DetectionModel dm(OptionBytes(o), 3, 3, DataType::kUInt8, DataType::kUInt8, Q(0.5f, 128),
                    Q(1.0f / 256, 0), Q(0.01f, 0));
  const std::vector<uint8_t> encodings = {128, 128, 128, 128,   //
                                          128, 128, 128, 128,   //
                                          148, 108, 128, 128};  // box 2: y +10, x -10
  const std::vector<uint8_t> anchors = {50, 50, 100, 100, 60, 50, 100, 100, 250, 250, 100, 100};
  const std::vector<uint8_t> scores = {0, 128, 0, 0, 64, 0, 0, 0, 192};
  Detections d = RunDetection<uint8_t>(dm.model(), encodings, anchors, {}, scores);
  // Box 2 is centred at (2.5 + 10 / 10 * 1, 2.5 - 1) = (3.5, 1.5) and wins
  // class 1 at 0.75; box 0 (class 0, 0.5) suppresses box 1.
  const float a = 0.01f;
  const float c0 = 50 * a, s0 = 100 * a, c2 = 250 * a;
  const float half = static_cast<float>(0.5 * static_cast<double>(s0));
  const float y2 = static_cast<float>(10.0 / 10.0 * s0 + c2);
  const float x2 = static_cast<float>(-10.0 / 10.0 * s0 + c2);
  EXPECT_THAT(d.boxes, ElementsAre(y2 - half, x2 - half, y2 + half, x2 + half,  //
                                   c0 - half, c0 - half, c0 + half, c0 + half));
  EXPECT_THAT(d.classes, ElementsAre(1.0f, 0.0f));
  EXPECT_THAT(d.scores, ElementsAre(0.75f, 0.5f));
  EXPECT_THAT(d.count, ElementsAre(2.0f));
}

TEST(DetectionPostProcess, InvertedAnchorFailsAtInvoke) {
  DetectionModel dm(OptionBytes(Options{}), 1, 3);
  OpModel& m = dm.model();
  m.Build();
  m.SetInput<float>(0, {0.0f, 0.0f, 0.0f, 0.0f});
  m.SetInput<float>(1, {0.0f, 0.5f, 0.5f});
  m.SetInput<float>(2, {0.5f, 0.5f, -1.0f, 1.0f});  // negative height
  Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("ymin > ymax"));
}

// ---------------------------------------------------------------- bad input

std::string BuildError(DetectionModel& dm) {
  Status s = dm.model().TryBuild();
  return s.ok() ? std::string("<built>") : s.message();
}

std::string OptionsError(const std::vector<uint8_t>& options) {
  DetectionModel dm(options, 3, 3);
  return BuildError(dm);
}

std::vector<uint8_t> MapBytes(const std::function<void(flexbuffers::Builder&)>& body) {
  flexbuffers::Builder fbb;
  fbb.Map([&] { body(fbb); });
  fbb.Finish();
  return fbb.GetBuffer();
}

void AllBut(flexbuffers::Builder& fbb, const std::string& skipped) {
  if (skipped != "max_detections") fbb.Int("max_detections", 3);
  if (skipped != "max_classes_per_detection") fbb.Int("max_classes_per_detection", 1);
  if (skipped != "nms_score_threshold") fbb.Float("nms_score_threshold", 0.0f);
  if (skipped != "nms_iou_threshold") fbb.Float("nms_iou_threshold", 0.5f);
  if (skipped != "num_classes") fbb.Int("num_classes", 2);
  if (skipped != "y_scale") fbb.Float("y_scale", 10.0f);
  if (skipped != "x_scale") fbb.Float("x_scale", 10.0f);
  if (skipped != "h_scale") fbb.Float("h_scale", 5.0f);
  if (skipped != "w_scale") fbb.Float("w_scale", 5.0f);
}

TEST(DetectionPostProcess, OptionalKeysHaveDefaults) {
  DetectionModel dm(MapBytes([](flexbuffers::Builder& fbb) { AllBut(fbb, ""); }), 3, 3);
  EXPECT_EQ(BuildError(dm), "<built>");
}

TEST(DetectionPostProcess, RejectsEachMissingRequiredKey) {
  for (const char* key : {"max_detections", "max_classes_per_detection", "nms_score_threshold",
                          "nms_iou_threshold", "num_classes", "y_scale", "x_scale", "h_scale",
                          "w_scale"}) {
    std::string error =
        OptionsError(MapBytes([&](flexbuffers::Builder& fbb) { AllBut(fbb, key); }));
    EXPECT_THAT(error, HasSubstr(std::string("'") + key + "' is missing")) << key;
  }
}

TEST(DetectionPostProcess, RejectsWrongValueTypes) {
  EXPECT_THAT(OptionsError(MapBytes([](flexbuffers::Builder& fbb) {
                AllBut(fbb, "num_classes");
                fbb.String("num_classes", "2");
              })),
              HasSubstr("'num_classes' must be an integer"));
  EXPECT_THAT(OptionsError(MapBytes([](flexbuffers::Builder& fbb) {
                AllBut(fbb, "max_detections");
                fbb.Float("max_detections", 3.0f);
              })),
              HasSubstr("'max_detections' must be an integer"));
  EXPECT_THAT(OptionsError(MapBytes([](flexbuffers::Builder& fbb) {
                AllBut(fbb, "y_scale");
                fbb.Vector("y_scale", [&] { fbb.Float(1.0f); });
              })),
              HasSubstr("'y_scale' must be a number"));
  EXPECT_THAT(OptionsError(MapBytes([](flexbuffers::Builder& fbb) {
                AllBut(fbb, "");
                fbb.String("use_regular_nms", "yes");
              })),
              HasSubstr("'use_regular_nms' must be a boolean"));
  EXPECT_THAT(OptionsError(MapBytes([](flexbuffers::Builder& fbb) {
                AllBut(fbb, "max_detections");
                fbb.UInt("max_detections", uint64_t{1} << 40);
              })),
              HasSubstr("does not fit in int32"));
}

TEST(DetectionPostProcess, AcceptsIntegerScales) {
  DetectionModel dm(MapBytes([](flexbuffers::Builder& fbb) {
                      AllBut(fbb, "y_scale");
                      fbb.Int("y_scale", 10);
                    }),
                    3, 3);
  EXPECT_EQ(BuildError(dm), "<built>");
}

TEST(DetectionPostProcess, RejectsMalformedBuffers) {
  EXPECT_THAT(OptionsError({}), HasSubstr("custom options are missing"));
  EXPECT_THAT(OptionsError({0x01}), HasSubstr("not a valid FlexBuffer"));
  EXPECT_THAT(OptionsError({0xff, 0xff, 0xff, 0xff, 0x24, 0x01}),
              HasSubstr("not a valid FlexBuffer"));
  // A valid FlexBuffer whose root is an integer, not a map.
  flexbuffers::Builder scalar;
  scalar.Int(7);
  scalar.Finish();
  EXPECT_THAT(OptionsError(scalar.GetBuffer()), HasSubstr("not a FlexBuffer map"));

  // Every truncation and every single-byte corruption of a valid buffer must
  // give an error or a clean build, never a crash.
  const std::vector<uint8_t> good = OptionBytes(Options{});
  for (size_t n = 0; n < good.size(); ++n) {
    OptionsError(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(n)));
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0x7f}, uint8_t{0xff}}) {
      std::vector<uint8_t> bad = good;
      bad[i] = v;
      OptionsError(bad);
    }
  }
  // Random multi-byte corruptions (fixed seed, so failures reproduce).
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<uint8_t> bad = good;
    const int edits = 1 + static_cast<int>(next() % 6);
    for (int e = 0; e < edits; ++e) bad[next() % bad.size()] = static_cast<uint8_t>(next());
    OptionsError(bad);
  }
}

TEST(DetectionPostProcess, RejectsBadParameterValues) {
  auto error = [](const std::function<void(Options&)>& edit) {
    Options o;
    edit(o);
    return OptionsError(OptionBytes(o));
  };
  EXPECT_THAT(error([](Options& o) { o.max_detections = -1; }),
              HasSubstr("max_detections must be non-negative"));
  EXPECT_THAT(error([](Options& o) { o.max_classes_per_detection = 0; }),
              HasSubstr("max_classes_per_detection must be positive"));
  EXPECT_THAT(error([](Options& o) { o.num_classes = 0; }),
              HasSubstr("num_classes must be positive"));
  EXPECT_THAT(error([](Options& o) { o.iou_threshold = 0.0f; }),
              HasSubstr("nms_iou_threshold must be in (0, 1]"));
  EXPECT_THAT(error([](Options& o) { o.iou_threshold = 1.5f; }),
              HasSubstr("nms_iou_threshold must be in (0, 1]"));
  EXPECT_THAT(error([](Options& o) {
                o.use_regular_nms = true;
                o.detections_per_class = 0;
              }),
              HasSubstr("regular NMS needs"));
  EXPECT_THAT(error([](Options& o) {
                o.max_detections = 1 << 20;
                o.max_classes_per_detection = 1 << 12;
              }),
              HasSubstr("overflows int32"));
  // num_classes must equal the prediction columns, or one less (background).
  EXPECT_THAT(error([](Options& o) { o.num_classes = 1; }), HasSubstr("with background"));
  EXPECT_THAT(error([](Options& o) { o.num_classes = 4; }), HasSubstr("with background"));
}

TEST(DetectionPostProcess, RejectsBadTensors) {
  const std::vector<uint8_t> options = OptionBytes(Options{});
  {
    DetectionModel dm(options, 3, 3, DataType::kInt8, DataType::kFloat32, Q(0.1f, 0), {},
                      Q(0.1f, 0));
    EXPECT_THAT(BuildError(dm), HasSubstr("FLOAT32 or UINT8 expected"));
  }
  {
    DetectionModel dm(options, 3, 3, DataType::kFloat32, DataType::kInt32);
    EXPECT_THAT(BuildError(dm), HasSubstr("class predictions"));
  }
  {
    OpModel m;
    int enc = m.AddInput(DataType::kFloat32, {3, 4});
    int cls = m.AddInput(DataType::kFloat32, {1, 3, 3});
    int anc = m.AddInput(DataType::kFloat32, {3, 4});
    std::vector<int32_t> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(m.AddOutput(DataType::kFloat32));
    m.AddCustomOp(kOpName, {enc, cls, anc}, outs, options);
    Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("must have rank 3"));
  }
  {
    OpModel m;
    int enc = m.AddInput(DataType::kFloat32, {1, 3, 4});
    int cls = m.AddInput(DataType::kFloat32, {1, 2, 3});
    int anc = m.AddInput(DataType::kFloat32, {3, 4});
    std::vector<int32_t> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(m.AddOutput(DataType::kFloat32));
    m.AddCustomOp(kOpName, {enc, cls, anc}, outs, options);
    Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("class predictions have 2 boxes"));
  }
  {
    OpModel m;
    int enc = m.AddInput(DataType::kFloat32, {1, 3, 4});
    int cls = m.AddInput(DataType::kFloat32, {1, 3, 3});
    int anc = m.AddInput(DataType::kFloat32, {2, 4});
    std::vector<int32_t> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(m.AddOutput(DataType::kFloat32));
    m.AddCustomOp(kOpName, {enc, cls, anc}, outs, options);
    Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("anchors"));
  }
  {
    OpModel m;
    int enc = m.AddInput(DataType::kFloat32, {1, 3, 4});
    int cls = m.AddInput(DataType::kFloat32, {1, 3, 3});
    std::vector<int32_t> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(m.AddOutput(DataType::kFloat32));
    m.AddCustomOp(kOpName, {enc, cls}, outs, options);
    Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("expects 3 inputs"));
  }
}

}  // namespace
}  // namespace delegato
