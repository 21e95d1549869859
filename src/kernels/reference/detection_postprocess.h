// TFLite_Detection_PostProcess: decodes SSD box encodings against anchors and
// runs non-maximum suppression, bit-exact with TFLite's kernel.
//
// Semantics reproduced:
//  - decoding in double (centre = enc / scale * anchor_size + anchor_centre,
//    half size = 0.5 * exp(enc / scale) * anchor_size), stored as float corners;
//  - uint8 inputs dequantized as (float(q) - zero_point) * scale;
//  - single-class NMS: keep scores >= threshold, stable sort by score
//    descending (ties keep box order), greedily select, suppress later boxes
//    whose IoU is strictly above the IoU threshold;
//  - fast NMS: per box the top max_classes_per_detection classes
//    (std::partial_sort, or the first maximum when only one is needed) and
//    one NMS pass over each box's best score;
//  - regular NMS: one NMS pass per class (at most
//    min(detections_per_class, max_detections) boxes each), results merged
//    stably into a running top-max_detections list (earlier classes win ties).
// Every buffer comes from a DetectionScratch laid out by DetectionScratchLayout,
// so nothing here allocates.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>

namespace delegato::reference {

struct DetectionPostProcessParams {
  int32_t max_detections = 0;
  int32_t max_classes_per_detection = 0;  // fast NMS
  int32_t detections_per_class = 100;     // regular NMS
  float score_threshold = 0.0f;
  float iou_threshold = 0.0f;
  int32_t num_classes = 0;
  bool use_regular_nms = false;
  float y_scale = 0.0f, x_scale = 0.0f, h_scale = 0.0f, w_scale = 0.0f;
};

struct BoxCorners {
  float ymin, xmin, ymax, xmax;
};

struct CenterSizeBox {
  float y, x, h, w;
};

// One entry of the regular-NMS result list: flat score index and its score.
struct ScoredIndex {
  int32_t index;
  float score;
};

// Sizes that fix the scratch layout.
struct DetectionShape {
  int32_t num_boxes = 0;
  int32_t num_classes_with_background = 0;
  bool dequantize_scores = false;  // class predictions are uint8
};

// Pointers into the scratch block. Unused buffers have zero length.
struct DetectionScratch {
  BoxCorners* decoded_boxes;   // num_boxes
  float* dequantized_scores;   // num_boxes * classes_with_background (uint8 scores)
  float* nms_input_scores;     // num_boxes: one class's scores, or each box's best
  float* kept_scores;          // num_boxes: scores at or above the threshold
  int32_t* kept_boxes;         // num_boxes: their box indices
  int32_t* order;              // num_boxes: kept positions sorted by score
  int32_t* merge_buffer;       // num_boxes: merge sort temporary
  uint8_t* active;             // num_boxes: still a candidate
  int32_t* selected;           // max_detections (fast) / per-class limit (regular)
  int32_t* class_row;          // num_classes: one box's class order (fast)
  int32_t* top_classes;        // num_boxes * categories per box (fast)
  ScoredIndex* merged;         // 2 * max_detections (regular)
  ScoredIndex* merged_buffer;  // 2 * max_detections (regular)
};

// Computes the scratch layout: Bytes() for Prepare, Bind(base) for Eval.
class DetectionScratchLayout {
 public:
  DetectionScratchLayout(const DetectionPostProcessParams& params, const DetectionShape& shape) {
    const size_t boxes = static_cast<size_t>(shape.num_boxes);
    const size_t max_det = static_cast<size_t>(params.max_detections);
    const size_t categories = static_cast<size_t>(
        std::min(params.max_classes_per_detection, params.num_classes));
    Add(&decoded_boxes_, boxes * sizeof(BoxCorners));
    Add(&dequantized_scores_,
        shape.dequantize_scores
            ? boxes * static_cast<size_t>(shape.num_classes_with_background) * sizeof(float)
            : 0);
    Add(&nms_input_scores_, boxes * sizeof(float));
    Add(&kept_scores_, boxes * sizeof(float));
    Add(&kept_boxes_, boxes * sizeof(int32_t));
    Add(&order_, boxes * sizeof(int32_t));
    Add(&merge_buffer_, boxes * sizeof(int32_t));
    Add(&active_, boxes);
    Add(&selected_, max_det * sizeof(int32_t));
    if (params.use_regular_nms) {
      Add(&class_row_, 0);
      Add(&top_classes_, 0);
      Add(&merged_, 2 * max_det * sizeof(ScoredIndex));
      Add(&merged_buffer_, 2 * max_det * sizeof(ScoredIndex));
    } else {
      Add(&class_row_, static_cast<size_t>(params.num_classes) * sizeof(int32_t));
      Add(&top_classes_, boxes * categories * sizeof(int32_t));
      Add(&merged_, 0);
      Add(&merged_buffer_, 0);
    }
  }

  size_t Bytes() const { return total_; }

  DetectionScratch Bind(uint8_t* base) const {
    auto at = [base](size_t offset) { return base + offset; };
    return DetectionScratch{
        reinterpret_cast<BoxCorners*>(at(decoded_boxes_)),
        reinterpret_cast<float*>(at(dequantized_scores_)),
        reinterpret_cast<float*>(at(nms_input_scores_)),
        reinterpret_cast<float*>(at(kept_scores_)),
        reinterpret_cast<int32_t*>(at(kept_boxes_)),
        reinterpret_cast<int32_t*>(at(order_)),
        reinterpret_cast<int32_t*>(at(merge_buffer_)),
        at(active_),
        reinterpret_cast<int32_t*>(at(selected_)),
        reinterpret_cast<int32_t*>(at(class_row_)),
        reinterpret_cast<int32_t*>(at(top_classes_)),
        reinterpret_cast<ScoredIndex*>(at(merged_)),
        reinterpret_cast<ScoredIndex*>(at(merged_buffer_)),
    };
  }

 private:
  static constexpr size_t kAlign = 64;
  void Add(size_t* offset, size_t bytes) {
    *offset = total_;
    total_ += (bytes + kAlign - 1) / kAlign * kAlign;
  }

  size_t total_ = 0;
  size_t decoded_boxes_ = 0, dequantized_scores_ = 0, nms_input_scores_ = 0, kept_scores_ = 0,
         kept_boxes_ = 0, order_ = 0, merge_buffer_ = 0, active_ = 0, selected_ = 0,
         class_row_ = 0, top_classes_ = 0, merged_ = 0, merged_buffer_ = 0;
};

// Affine dequantization of one uint8 value, in float as the kernel does it.
inline float DequantizeBoxValue(uint8_t q, int32_t zero_point, float scale) {
  return (static_cast<float>(q) - static_cast<float>(zero_point)) * scale;
}

// Class scores use the Dequantize op's formula (double scale, then float).
inline void DequantizeScores(const uint8_t* input, int64_t count, int32_t zero_point, float scale,
                             float* output) {
  const double scale_d = static_cast<double>(scale);
  for (int64_t i = 0; i < count; ++i) {
    const int32_t value = input[i];
    output[i] = static_cast<float>(scale_d * (value - zero_point));
  }
}

inline BoxCorners DecodeCenterSizeBox(const CenterSizeBox& encoding, const CenterSizeBox& anchor,
                                      const DetectionPostProcessParams& params) {
  const double y_center = static_cast<double>(encoding.y) / static_cast<double>(params.y_scale) *
                              static_cast<double>(anchor.h) +
                          static_cast<double>(anchor.y);
  const double x_center = static_cast<double>(encoding.x) / static_cast<double>(params.x_scale) *
                              static_cast<double>(anchor.w) +
                          static_cast<double>(anchor.x);
  const double half_h_d = 0.5 *
                          std::exp(static_cast<double>(encoding.h) /
                                   static_cast<double>(params.h_scale)) *
                          static_cast<double>(anchor.h);
  const double half_w_d = 0.5 *
                          std::exp(static_cast<double>(encoding.w) /
                                   static_cast<double>(params.w_scale)) *
                          static_cast<double>(anchor.w);
  const float yc = static_cast<float>(y_center);
  const float xc = static_cast<float>(x_center);
  const float half_h = static_cast<float>(half_h_d);
  const float half_w = static_cast<float>(half_w_d);
  return BoxCorners{yc - half_h, xc - half_w, yc + half_h, xc + half_w};
}

// Float box encodings: `encodings` has `encoding_length` (>= 4) values per
// box, anchors 4 per box (y, x, h, w).
inline void DecodeBoxes(const DetectionPostProcessParams& params, int32_t num_boxes,
                        const float* encodings, int32_t encoding_length, const float* anchors,
                        BoxCorners* decoded) {
  for (int32_t i = 0; i < num_boxes; ++i) {
    const float* e = encodings + static_cast<int64_t>(i) * encoding_length;
    const float* a = anchors + static_cast<int64_t>(i) * 4;
    decoded[i] = DecodeCenterSizeBox(CenterSizeBox{e[0], e[1], e[2], e[3]},
                                     CenterSizeBox{a[0], a[1], a[2], a[3]}, params);
  }
}

// uint8 box encodings and anchors, each with its own quantization.
inline void DecodeBoxes(const DetectionPostProcessParams& params, int32_t num_boxes,
                        const uint8_t* encodings, int32_t encoding_length,
                        int32_t encoding_zero_point, float encoding_scale, const uint8_t* anchors,
                        int32_t anchor_zero_point, float anchor_scale, BoxCorners* decoded) {
  for (int32_t i = 0; i < num_boxes; ++i) {
    const uint8_t* e = encodings + static_cast<int64_t>(i) * encoding_length;
    const uint8_t* a = anchors + static_cast<int64_t>(i) * 4;
    auto de = [&](uint8_t q) { return DequantizeBoxValue(q, encoding_zero_point, encoding_scale); };
    auto da = [&](uint8_t q) { return DequantizeBoxValue(q, anchor_zero_point, anchor_scale); };
    decoded[i] = DecodeCenterSizeBox(CenterSizeBox{de(e[0]), de(e[1]), de(e[2]), de(e[3])},
                                     CenterSizeBox{da(a[0]), da(a[1]), da(a[2]), da(a[3])},
                                     params);
  }
}

// False when a decoded box has ymin > ymax or xmin > xmax (NaN passes, as in
// TFLite); the kernel refuses to run NMS on such boxes.
inline bool BoxesAreValid(const BoxCorners* boxes, int32_t num_boxes) {
  for (int32_t i = 0; i < num_boxes; ++i) {
    if (boxes[i].ymin > boxes[i].ymax || boxes[i].xmin > boxes[i].xmax) return false;
  }
  return true;
}

inline float IntersectionOverUnion(const BoxCorners& a, const BoxCorners& b) {
  const float area_a = (a.ymax - a.ymin) * (a.xmax - a.xmin);
  const float area_b = (b.ymax - b.ymin) * (b.xmax - b.xmin);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float ymin = std::max<float>(a.ymin, b.ymin);
  const float xmin = std::max<float>(a.xmin, b.xmin);
  const float ymax = std::min<float>(a.ymax, b.ymax);
  const float xmax = std::min<float>(a.xmax, b.xmax);
  const float intersection =
      std::max<float>(ymax - ymin, 0.0f) * std::max<float>(xmax - xmin, 0.0f);
  return intersection / (area_a + area_b - intersection);
}

// Stable argsort of values[0, n) by decreasing value into `order`, using
// `buffer` (n entries). Bottom-up merge sort; equal values keep index order,
// which is what std::stable_sort gives (values hold no NaN: they passed a
// >= threshold test).
inline void StableArgSortDecreasing(const float* values, int32_t n, int32_t* order,
                                    int32_t* buffer) {
  std::iota(order, order + n, 0);
  int32_t* from = order;
  int32_t* to = buffer;
  for (int32_t width = 1; width < n; width *= 2) {
    for (int32_t left = 0; left < n; left += 2 * width) {
      const int32_t mid = std::min(left + width, n);
      const int32_t right = std::min(left + 2 * width, n);
      int32_t i = left, j = mid, k = left;
      while (i < mid && j < right) {
        // Take from the right run only when strictly greater: stability.
        to[k++] = values[from[j]] > values[from[i]] ? from[j++] : from[i++];
      }
      while (i < mid) to[k++] = from[i++];
      while (j < right) to[k++] = from[j++];
    }
    std::swap(from, to);
    if (width > n / 2) break;  // the next width would exceed n; avoid int overflow
  }
  if (from != order) std::copy(from, from + n, order);
}

// Greedy NMS over one score per box. Writes the selected box indices (best
// first) to scratch.selected and returns how many (<= max_detections).
inline int32_t NonMaxSuppressionSingleClass(const DetectionPostProcessParams& params,
                                            const BoxCorners* boxes, int32_t num_boxes,
                                            const float* scores, int32_t max_detections,
                                            const DetectionScratch& scratch) {
  int32_t num_kept = 0;
  for (int32_t i = 0; i < num_boxes; ++i) {
    if (scores[i] >= params.score_threshold) {
      scratch.kept_scores[num_kept] = scores[i];
      scratch.kept_boxes[num_kept] = i;
      ++num_kept;
    }
  }
  StableArgSortDecreasing(scratch.kept_scores, num_kept, scratch.order, scratch.merge_buffer);

  const int32_t output_size = std::min(num_kept, max_detections);
  std::fill(scratch.active, scratch.active + num_kept, uint8_t{1});
  int32_t num_active = num_kept;
  int32_t num_selected = 0;
  for (int32_t i = 0; i < num_kept; ++i) {
    if (num_active == 0 || num_selected >= output_size) break;
    if (!scratch.active[i]) continue;
    const int32_t box_i = scratch.kept_boxes[scratch.order[i]];
    scratch.selected[num_selected++] = box_i;
    scratch.active[i] = 0;
    --num_active;
    for (int32_t j = i + 1; j < num_kept; ++j) {
      if (!scratch.active[j]) continue;
      const int32_t box_j = scratch.kept_boxes[scratch.order[j]];
      if (IntersectionOverUnion(boxes[box_i], boxes[box_j]) > params.iou_threshold) {
        scratch.active[j] = 0;
        --num_active;
      }
    }
  }
  return num_selected;
}

// Output tensors, all float: boxes [max_detections * max_classes_per_detection][4],
// classes and scores [same count], num_detections [1].
struct DetectionOutputs {
  float* boxes;
  float* classes;
  float* scores;
  float* num_detections;
  int64_t num_slots;  // max_detections * max_classes_per_detection
};

inline void WriteBox(float* out, const BoxCorners& box) {
  out[0] = box.ymin;
  out[1] = box.xmin;
  out[2] = box.ymax;
  out[3] = box.xmax;
}

// The fast variant: classes ranked per box, NMS once over each box's best score.
inline void NonMaxSuppressionFast(const DetectionPostProcessParams& params, int32_t num_boxes,
                                  int32_t num_classes_with_background, const float* scores,
                                  const BoxCorners* boxes, const DetectionScratch& scratch,
                                  const DetectionOutputs& out) {
  const int32_t num_classes = params.num_classes;
  const int32_t label_offset = num_classes_with_background - num_classes;
  const int32_t categories = std::min(params.max_classes_per_detection, num_classes);
  for (int32_t row = 0; row < num_boxes; ++row) {
    const float* box_scores =
        scores + static_cast<int64_t>(row) * num_classes_with_background + label_offset;
    int32_t* top = scratch.top_classes + static_cast<int64_t>(row) * categories;
    if (categories == 1) {
      // First maximum, as an arg-max scan with '>' finds it.
      int32_t best = 0;
      for (int32_t c = 1; c < num_classes; ++c) {
        if (box_scores[c] > box_scores[best]) best = c;
      }
      top[0] = best;
    } else {
      int32_t* row_order = scratch.class_row;
      std::iota(row_order, row_order + num_classes, 0);
      std::partial_sort(row_order, row_order + categories, row_order + num_classes,
                        [box_scores](int32_t a, int32_t b) {
                          return box_scores[a] > box_scores[b];
                        });
      std::copy(row_order, row_order + categories, top);
    }
    scratch.nms_input_scores[row] = box_scores[top[0]];
  }

  const int32_t num_selected = NonMaxSuppressionSingleClass(
      params, boxes, num_boxes, scratch.nms_input_scores, params.max_detections, scratch);
  for (int32_t n = 0; n < num_selected; ++n) {
    const int32_t box = scratch.selected[n];
    const float* box_scores =
        scores + static_cast<int64_t>(box) * num_classes_with_background + label_offset;
    const int32_t* top = scratch.top_classes + static_cast<int64_t>(box) * categories;
    for (int32_t c = 0; c < categories; ++c) {
      const int64_t slot = static_cast<int64_t>(params.max_classes_per_detection) * n + c;
      WriteBox(out.boxes + slot * 4, boxes[box]);
      out.classes[slot] = static_cast<float>(top[c]);
      out.scores[slot] = box_scores[top[c]];
    }
  }
  out.num_detections[0] = static_cast<float>(num_selected);
}

// Stable merge of the sorted runs [0, mid) and [mid, end) of `list` (by
// decreasing score; the first run wins ties), through `buffer`.
inline void MergeByScore(ScoredIndex* list, int32_t mid, int32_t end, ScoredIndex* buffer) {
  int32_t i = 0, j = mid, k = 0;
  while (i < mid && j < end) buffer[k++] = list[j].score > list[i].score ? list[j++] : list[i++];
  while (i < mid) buffer[k++] = list[i++];
  while (j < end) buffer[k++] = list[j++];
  std::copy(buffer, buffer + end, list);
}

// The regular variant: NMS per class, keeping the best max_detections overall.
inline void NonMaxSuppressionRegular(const DetectionPostProcessParams& params, int32_t num_boxes,
                                     int32_t num_classes_with_background, const float* scores,
                                     const BoxCorners* boxes, const DetectionScratch& scratch,
                                     const DetectionOutputs& out) {
  const int32_t num_classes = params.num_classes;
  const int32_t label_offset = num_classes_with_background - num_classes;
  const int32_t per_class = std::min(params.detections_per_class, params.max_detections);
  int32_t num_merged = 0;
  for (int32_t col = 0; col < num_classes; ++col) {
    for (int32_t row = 0; row < num_boxes; ++row) {
      scratch.nms_input_scores[row] =
          scores[static_cast<int64_t>(row) * num_classes_with_background + col + label_offset];
    }
    const int32_t num_selected = NonMaxSuppressionSingleClass(
        params, boxes, num_boxes, scratch.nms_input_scores, per_class, scratch);
    if (num_selected == 0) continue;
    for (int32_t n = 0; n < num_selected; ++n) {
      const int32_t box = scratch.selected[n];
      scratch.merged[num_merged + n] =
          ScoredIndex{box * num_classes_with_background + col + label_offset,
                      scratch.nms_input_scores[box]};
    }
    MergeByScore(scratch.merged, num_merged, num_merged + num_selected, scratch.merged_buffer);
    num_merged = std::min(num_merged + num_selected, params.max_detections);
  }

  for (int32_t n = 0; n < num_merged; ++n) {
    const int32_t flat = scratch.merged[n].index;
    const int32_t anchor = flat / num_classes_with_background;
    const int32_t class_index = flat - anchor * num_classes_with_background - label_offset;
    WriteBox(out.boxes + static_cast<int64_t>(n) * 4, boxes[anchor]);
    out.classes[n] = static_cast<float>(class_index);
    out.scores[n] = scratch.merged[n].score;
  }
  out.num_detections[0] = static_cast<float>(num_merged);
}

// Runs NMS on decoded boxes and float scores. Slots without a detection are
// zero. Returns false (outputs unspecified) when a decoded box is inverted.
inline bool DetectionNonMaxSuppression(const DetectionPostProcessParams& params,
                                       int32_t num_boxes, int32_t num_classes_with_background,
                                       const float* scores, const DetectionScratch& scratch,
                                       const DetectionOutputs& out) {
  std::fill(out.boxes, out.boxes + out.num_slots * 4, 0.0f);
  std::fill(out.classes, out.classes + out.num_slots, 0.0f);
  std::fill(out.scores, out.scores + out.num_slots, 0.0f);
  out.num_detections[0] = 0.0f;
  if (!BoxesAreValid(scratch.decoded_boxes, num_boxes)) return false;
  if (params.use_regular_nms) {
    NonMaxSuppressionRegular(params, num_boxes, num_classes_with_background, scores,
                             scratch.decoded_boxes, scratch, out);
  } else {
    NonMaxSuppressionFast(params, num_boxes, num_classes_with_background, scores,
                          scratch.decoded_boxes, scratch, out);
  }
  return true;
}

}  // namespace delegato::reference
