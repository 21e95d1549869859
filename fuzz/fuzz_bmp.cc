// libFuzzer target: BMP images as `delegato run --image` reads them, then
// filled into small image inputs of each supported type and layout.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/error.h"
#include "tools/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using delegato::DataType;
  try {
    const delegato::tools::RgbImage image =
        delegato::tools::ParseBmp(std::span<const uint8_t>(data, size), "fuzz.bmp");
    if (image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) __builtin_trap();
    struct Layout {
      DataType type;
      std::vector<int32_t> dims;
    };
    const Layout layouts[] = {{DataType::kUInt8, {1, 5, 7, 3}},
                              {DataType::kInt8, {1, 4, 4, 1}},
                              {DataType::kFloat32, {1, 3, 6, 5}}};
    for (const Layout& layout : layouts) {
      size_t count = 1;
      for (int32_t d : layout.dims) count *= static_cast<size_t>(d);
      std::vector<uint8_t> buffer(count * delegato::DataTypeSize(layout.type));
      delegato::TensorView view;
      view.name = "image";
      view.type = layout.type;
      view.dims = layout.dims;
      view.data = buffer.data();
      view.bytes = buffer.size();
      delegato::tools::FillInputFromImage(image, view);
    }
  } catch (const delegato::Error&) {
  }
  return 0;
}
