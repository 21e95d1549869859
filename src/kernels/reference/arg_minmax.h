// ARG_MAX / ARG_MIN along one axis: the input viewed as [outer, axis, inner];
// ties resolve to the first index (strict comparison, as TFLite's reference).
#pragma once

#include <cstdint>

namespace delegato::reference {

template <class T, class Index, bool kIsMax>
void ArgMinMax(const T* input, int64_t outer, int64_t axis_size, int64_t inner, Index* output) {
  for (int64_t o = 0; o < outer; ++o) {
    const T* slab = input + o * axis_size * inner;
    for (int64_t i = 0; i < inner; ++i) {
      T best = slab[i];
      Index best_index = 0;
      for (int64_t a = 1; a < axis_size; ++a) {
        const T value = slab[a * inner + i];
        if (kIsMax ? value > best : value < best) {
          best = value;
          best_index = static_cast<Index>(a);
        }
      }
      output[o * inner + i] = best_index;
    }
  }
}

}  // namespace delegato::reference
