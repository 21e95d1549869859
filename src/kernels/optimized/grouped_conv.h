// A grouped convolution run as one ungrouped kernel per group
// (FloatGroupedConv, QuantGroupedConv, HybridGroupedConv): each group's
// geometry, the groups a task takes, and the group's channel slices: its
// input channels gathered from every pixel into a contiguous image, its
// output channels scattered back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/reference/conv.h"

namespace delegato::optimized {

// The geometry of one group of a grouped layer (input depth the filter
// depth, output depth the filters per group); false when `g` is not grouped
// (one group) or its channel counts do not split into equal groups.
inline bool GroupGeometry(const reference::ConvGeometry& g, reference::ConvGeometry* group) {
  if (g.filter_depth <= 0 || g.input_depth % g.filter_depth != 0 || g.groups() < 2 ||
      g.output_depth % g.groups() != 0 || g.filters_per_group() <= 0)
    return false;
  *group = g;
  group->input_depth = g.filter_depth;
  group->output_depth = g.filters_per_group();
  return true;
}

// Tasks for a grouped layer: whole groups each, one when the layer's
// multiply-adds are below `min_parallel_macs`.
inline int GroupedTasks(const reference::ConvGeometry& g, int num_threads,
                        int64_t min_parallel_macs) {
  const int64_t macs = g.output_rows() * g.output_width * g.output_depth * g.filter_height *
                       g.filter_width * int64_t{g.filter_depth};
  return macs >= min_parallel_macs ? std::max(1, std::min(num_threads, g.groups())) : 1;
}

// The groups [first, last) of task `task` of `tasks`.
struct GroupRange {
  int first = 0, last = 0;
};
inline GroupRange TaskGroups(int groups, int task, int tasks) {
  return {static_cast<int>(int64_t{groups} * task / tasks),
          static_cast<int>(int64_t{groups} * (task + 1) / tasks)};
}

// dst[p][0..run) = src[p * stride + offset ..][0..run) for `pixels` pixels;
// sizes in bytes.
inline void GatherChannels(const uint8_t* src, int64_t pixels, size_t stride, size_t offset,
                           size_t run, uint8_t* dst) {
  src += offset;
  for (int64_t px = 0; px < pixels; ++px) std::memcpy(dst + px * run, src + px * stride, run);
}

// dst[p * stride + offset ..][0..run) = src[p][0..run): GatherChannels' inverse.
inline void ScatterChannels(const uint8_t* src, int64_t pixels, size_t stride, size_t offset,
                            size_t run, uint8_t* dst) {
  dst += offset;
  for (int64_t px = 0; px < pixels; ++px) std::memcpy(dst + px * stride, src + px * run, run);
}

}  // namespace delegato::optimized
