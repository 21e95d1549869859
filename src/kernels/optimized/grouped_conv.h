// A grouped convolution run as one ungrouped kernel per group
// (FloatGroupedConv, QuantGroupedConv, Conv16x8Grouped, HybridGroupedConv):
// each group's geometry, the tasks, a task's scratch, and the loop over a
// task's groups: a group's input channels gathered from every pixel into a
// contiguous image, its kernel run, its output channels scattered back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/optimized/aligned_buffer.h"
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

// dst[p * dst_stride ..][0..run) = src[p * src_stride ..][0..run) for
// `pixels` pixels, bytes. A group's run is a few dozen bytes (8 float
// channels: 32): a memcpy of a constant size is a few moves where a call
// per pixel cost as much as the group's GEMM on small layers.
template <size_t kRun>
inline void CopyRunsOf(const uint8_t* src, size_t src_stride, uint8_t* dst, size_t dst_stride,
                       int64_t pixels) {
  for (int64_t px = 0; px < pixels; ++px) std::memcpy(dst + px * dst_stride, src + px * src_stride, kRun);
}

inline void CopyRuns(const uint8_t* src, size_t src_stride, uint8_t* dst, size_t dst_stride,
                     int64_t pixels, size_t run) {
  switch (run) {
    case 4: return CopyRunsOf<4>(src, src_stride, dst, dst_stride, pixels);
    case 8: return CopyRunsOf<8>(src, src_stride, dst, dst_stride, pixels);
    case 16: return CopyRunsOf<16>(src, src_stride, dst, dst_stride, pixels);
    case 32: return CopyRunsOf<32>(src, src_stride, dst, dst_stride, pixels);
    case 64: return CopyRunsOf<64>(src, src_stride, dst, dst_stride, pixels);
    default: break;
  }
  if (run % 16 == 0 && run <= 256) {
    for (int64_t px = 0; px < pixels; ++px)
      for (size_t c = 0; c < run; c += 16)
        std::memcpy(dst + px * dst_stride + c, src + px * src_stride + c, 16);
    return;
  }
  for (int64_t px = 0; px < pixels; ++px) std::memcpy(dst + px * dst_stride, src + px * src_stride, run);
}

// dst[p][0..run) = src[p * stride + offset ..][0..run) for `pixels` pixels;
// sizes in bytes.
inline void GatherChannels(const uint8_t* src, int64_t pixels, size_t stride, size_t offset,
                           size_t run, uint8_t* dst) {
  CopyRuns(src + offset, stride, dst, run, pixels, run);
}

// dst[p * stride + offset ..][0..run) = src[p][0..run): GatherChannels' inverse.
inline void ScatterChannels(const uint8_t* src, int64_t pixels, size_t stride, size_t offset,
                            size_t run, uint8_t* dst) {
  CopyRuns(src, run, dst + offset, stride, pixels, run);
}

// A task's scratch: the group's gathered input (elements of `in_element`
// bytes), then its outputs (`out_element` bytes), then the group kernel's
// own scratch, each 64-byte aligned.
struct GroupedScratch {
  size_t out_offset = 0, kernel_offset = 0, per_task_bytes = 0;
};
inline GroupedScratch PlanGroupedScratch(const reference::ConvGeometry& g, size_t in_element,
                                         size_t out_element, size_t kernel_bytes) {
  const size_t in_pixels = static_cast<size_t>(g.batches) * g.input_height * g.input_width;
  const size_t out_pixels = static_cast<size_t>(g.output_rows()) * g.output_width;
  GroupedScratch s;
  s.out_offset = RoundUp(in_pixels * g.filter_depth * in_element, 64);
  s.kernel_offset =
      s.out_offset + RoundUp(out_pixels * g.filters_per_group() * out_element, 64);
  s.per_task_bytes = s.kernel_offset + RoundUp(kernel_bytes, 64);
  return s;
}

// Task `task` of `tasks` over its groups (whole groups, in order): each
// group's input channels gathered into the task's scratch, then
// run(group, group_input, group_output, kernel_scratch) writes the group's
// outputs, scattered into its output channels.
template <class Run>
void RunTaskGroups(const reference::ConvGeometry& g, const GroupedScratch& s, int task,
                   int tasks, const void* input, size_t in_element, void* output,
                   size_t out_element, uint8_t* scratch, Run&& run) {
  const int groups = g.groups();
  const int first = static_cast<int>(int64_t{groups} * task / tasks);
  const int last = static_cast<int>(int64_t{groups} * (task + 1) / tasks);
  uint8_t* base = scratch + s.per_task_bytes * static_cast<size_t>(task);
  const int64_t in_pixels = int64_t{g.batches} * g.input_height * g.input_width;
  const int64_t out_pixels = g.output_rows() * g.output_width;
  const size_t in_run = static_cast<size_t>(g.filter_depth) * in_element;
  const size_t out_run = static_cast<size_t>(g.filters_per_group()) * out_element;
  for (int gi = first; gi < last; ++gi) {
    GatherChannels(static_cast<const uint8_t*>(input), in_pixels, g.input_depth * in_element,
                   gi * in_run, in_run, base);
    run(gi, base, base + s.out_offset, base + s.kernel_offset);
    ScatterChannels(base + s.out_offset, out_pixels, g.output_depth * out_element, gi * out_run,
                    out_run, static_cast<uint8_t*>(output));
  }
}

}  // namespace delegato::optimized
