#include "tools/image.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace delegato::tools {
namespace {

uint32_t U32(std::span<const uint8_t> b, size_t at) {
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (uint32_t{b[at + 3]} << 24);
}
uint16_t U16(std::span<const uint8_t> b, size_t at) { return b[at] | (b[at + 1] << 8); }

}  // namespace

RgbImage ReadBmp(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  DLG_CHECK(file, path, ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return ParseBmp(bytes, path);
}

RgbImage ParseBmp(std::span<const uint8_t> b, const std::string& path) {
  DLG_CHECK(b.size() >= 54 && b[0] == 'B' && b[1] == 'M', path, ": not a BMP file");
  const uint32_t data_offset = U32(b, 10);
  const uint32_t header_size = U32(b, 14);
  DLG_CHECK(header_size >= 40, path, ": unsupported BMP header (size ", header_size, ")");
  const int32_t width = static_cast<int32_t>(U32(b, 18));
  const int32_t raw_height = static_cast<int32_t>(U32(b, 22));
  const uint16_t bits = U16(b, 28);
  const uint32_t compression = U32(b, 30);
  DLG_CHECK(bits == 24 || bits == 32, path, ": ", bits, "-bit BMP not supported (24 or 32 bits)");
  DLG_CHECK(compression == 0 || (compression == 3 && bits == 32), path,
            ": compressed BMP not supported");
  DLG_CHECK(width > 0 && width <= 16384 && raw_height != 0 &&
                raw_height >= -16384 && raw_height <= 16384,
            path, ": bad BMP size ", width, "x", raw_height);
  const int height = std::abs(raw_height);
  const bool bottom_up = raw_height > 0;
  const size_t bytes_per_pixel = bits / 8;
  const size_t row_bytes = (static_cast<size_t>(width) * bytes_per_pixel + 3) / 4 * 4;
  DLG_CHECK(data_offset <= b.size() && b.size() - data_offset >= row_bytes * height, path,
            ": truncated pixel data");
  RgbImage image;
  image.width = width;
  image.height = height;
  image.rgb.resize(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    const int src_row = bottom_up ? height - 1 - y : y;
    const uint8_t* row = b.data() + data_offset + row_bytes * src_row;
    for (int x = 0; x < width; ++x) {
      const uint8_t* px = row + x * bytes_per_pixel;  // stored B, G, R
      uint8_t* out = &image.rgb[(static_cast<size_t>(y) * width + x) * 3];
      out[0] = px[2];
      out[1] = px[1];
      out[2] = px[0];
    }
  }
  return image;
}

void FillInputFromImage(const RgbImage& image, const TensorView& input) {
  DLG_CHECK(input.dims.size() == 4 && input.dims[0] == 1, "input \"", input.name,
            "\" is not an image tensor [1,H,W,C] or [1,3,H,W]");
  const bool nchw = input.dims[1] == 3 && input.dims[3] != 3 && input.dims[3] != 1;
  const int height = nchw ? input.dims[2] : input.dims[1];
  const int width = nchw ? input.dims[3] : input.dims[2];
  const int channels = nchw ? input.dims[1] : input.dims[3];
  DLG_CHECK(channels == 1 || channels == 3, "input \"", input.name, "\" has ", channels,
            " channels; images fill 1 or 3");
  DLG_CHECK(input.type == DataType::kUInt8 || input.type == DataType::kInt8 ||
                input.type == DataType::kFloat32,
            "input \"", input.name, "\" has type ", DataTypeName(input.type),
            "; images fill UINT8, INT8 or FLOAT32 inputs");
  // Bilinear with half-pixel centers: sample the source at (y + 0.5) * scale - 0.5.
  const float scale_y = static_cast<float>(image.height) / height;
  const float scale_x = static_cast<float>(image.width) / width;
  for (int y = 0; y < height; ++y) {
    const float sy = std::clamp((y + 0.5f) * scale_y - 0.5f, 0.0f, image.height - 1.0f);
    const int y0 = static_cast<int>(sy);
    const int y1 = std::min(y0 + 1, image.height - 1);
    const float fy = sy - y0;
    for (int x = 0; x < width; ++x) {
      const float sx = std::clamp((x + 0.5f) * scale_x - 0.5f, 0.0f, image.width - 1.0f);
      const int x0 = static_cast<int>(sx);
      const int x1 = std::min(x0 + 1, image.width - 1);
      const float fx = sx - x0;
      float rgb[3];
      for (int c = 0; c < 3; ++c) {
        auto at = [&](int yy, int xx) {
          return static_cast<float>(image.rgb[(static_cast<size_t>(yy) * image.width + xx) * 3 + c]);
        };
        const float top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * fx;
        const float bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * fx;
        rgb[c] = top + (bottom - top) * fy;
      }
      for (int c = 0; c < channels; ++c) {
        const float pixel = channels == 1 ? 0.299f * rgb[0] + 0.587f * rgb[1] + 0.114f * rgb[2]
                                          : rgb[c];
        const size_t index = nchw ? (static_cast<size_t>(c) * height + y) * width + x
                                  : (static_cast<size_t>(y) * width + x) * channels + c;
        const float rounded = std::clamp(std::round(pixel), 0.0f, 255.0f);
        switch (input.type) {
          case DataType::kUInt8:
            static_cast<uint8_t*>(input.data)[index] = static_cast<uint8_t>(rounded);
            break;
          case DataType::kInt8:
            static_cast<int8_t*>(input.data)[index] = static_cast<int8_t>(rounded - 128.0f);
            break;
          default:
            static_cast<float*>(input.data)[index] = pixel / 127.5f - 1.0f;
            break;
        }
      }
    }
  }
}

}  // namespace delegato::tools
