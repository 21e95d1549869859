#include "abi/tflite_abi.h"

#include <algorithm>
#include <cstdlib>

namespace delegato::abi {

TfLiteIntArray* MallocIntArray(int size) {
  auto* array = static_cast<TfLiteIntArray*>(std::malloc(sizeof(int) * (1 + std::max(size, 0))));
  if (array) array->size = size;
  return array;
}

}  // namespace delegato::abi
