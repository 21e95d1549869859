// GATHER and GATHER_ND over raw bytes. TFLite's reference kernels fail the
// invocation on an out-of-range index; these never read out of bounds: the
// slice of an out-of-range index is zero-filled and the function returns false.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace delegato::reference {

// params viewed as [batch, outer, axis_size, inner], indices as
// [batch, coords]; output is [batch, outer, coords, inner]. Sizes are element
// counts; inner_bytes = inner * element size.
template <class Index>
bool Gather(const uint8_t* params, int64_t batch, int64_t outer, int64_t axis_size,
            int64_t inner_bytes, const Index* indices, int64_t coords, uint8_t* output) {
  bool all_in_range = true;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < outer; ++o) {
      const uint8_t* slab = params + (b * outer + o) * axis_size * inner_bytes;
      for (int64_t i = 0; i < coords; ++i) {
        const int64_t index = static_cast<int64_t>(indices[b * coords + i]);
        if (index < 0 || index >= axis_size) {
          std::memset(output, 0, static_cast<size_t>(inner_bytes));
          all_in_range = false;
        } else if (inner_bytes != 0) {
          std::memcpy(output, slab + index * inner_bytes, static_cast<size_t>(inner_bytes));
        }
        output += inner_bytes;
      }
    }
  }
  return all_in_range;
}

constexpr int kMaxGatherNdDepth = 8;

// indices viewed as [num_slices, index_depth]; each row addresses the first
// index_depth dims of params (params_dims), selecting a slice of slice_bytes.
// index_depth in [1, kMaxGatherNdDepth].
template <class Index>
bool GatherNd(const uint8_t* params, const int32_t* params_dims, int index_depth,
              int64_t slice_bytes, const Index* indices, int64_t num_slices, uint8_t* output) {
  // Elements spanned by one step of each addressed dim, in slices.
  int64_t stride[kMaxGatherNdDepth];
  int64_t s = 1;
  for (int d = index_depth - 1; d >= 0; --d) {
    stride[d] = s;
    s *= params_dims[d];
  }
  bool all_in_range = true;
  for (int64_t n = 0; n < num_slices; ++n) {
    const Index* row = indices + n * index_depth;
    int64_t slice = 0;
    bool in_range = true;
    for (int d = 0; d < index_depth; ++d) {
      const int64_t index = static_cast<int64_t>(row[d]);
      if (index < 0 || index >= params_dims[d]) in_range = false;
      slice += index * stride[d];
    }
    if (!in_range) {
      std::memset(output, 0, static_cast<size_t>(slice_bytes));
      all_in_range = false;
    } else if (slice_bytes != 0) {
      std::memcpy(output, params + slice * slice_bytes, static_cast<size_t>(slice_bytes));
    }
    output += slice_bytes;
  }
  return all_in_range;
}

}  // namespace delegato::reference
