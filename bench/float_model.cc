// float_model IN.tflite OUT.tflite: writes the float32 twin of a quantized
// (uint8 / int8) model, for benchmarking the float32 kernels on a real
// network's shapes without a converter: every 8-bit tensor becomes float32,
// constant weights dequantized ((q - zero_point) * scale, per axis where
// quantized so), quantized int32 biases scaled (q * scale), quantization
// parameters dropped, operator versions set to 1. Graphs with QUANTIZE or
// DEQUANTIZE are refused (they have no float32 twin). The outputs are not
// meant to be meaningful beyond what the dequantized weights give.
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/model.h"

namespace {

using namespace delegato;

std::vector<float> Dequantize(const TensorDef& t, std::span<const uint8_t> bytes) {
  const Quantization& q = t.quantization;
  size_t count = 1;
  for (int32_t d : t.shape) count *= d;
  // Elements per step of the quantized dimension (innermost dims multiplied).
  size_t inner = 1;
  size_t axis_size = 1;
  if (q.per_axis()) {
    axis_size = t.shape[q.quantized_dimension];
    for (size_t i = q.quantized_dimension + 1; i < t.shape.size(); ++i) inner *= t.shape[i];
  }
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t channel = q.per_axis() ? (i / inner) % axis_size : 0;
    const float scale = q.scale.empty() ? 1.0f : q.scale[channel];
    const int64_t zp = q.zero_point.empty() ? 0 : q.zero_point[q.per_axis() ? channel : 0];
    int64_t v = 0;
    switch (t.type) {
      case DataType::kUInt8: v = bytes[i]; break;
      case DataType::kInt8: v = static_cast<int8_t>(bytes[i]); break;
      default: {
        int32_t x;
        std::memcpy(&x, bytes.data() + 4 * i, 4);
        v = x;
      }
    }
    out[i] = static_cast<float>(v - zp) * scale;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: float_model IN.tflite OUT.tflite\n";
    return 2;
  }
  try {
    ModelDef model = *ReadModelFile(argv[1]);
    for (const OperatorCodeDef& code : model.operator_codes)
      if (code.builtin == BuiltinOp::kQuantize || code.builtin == BuiltinOp::kDequantize) {
        std::cerr << argv[1] << ": has QUANTIZE/DEQUANTIZE, no float32 twin\n";
        return 1;
      }
    for (OperatorCodeDef& code : model.operator_codes) code.version = 1;
    for (SubgraphDef& graph : model.subgraphs) {
      for (TensorDef& t : graph.tensors) {
        const bool eight_bit = t.type == DataType::kUInt8 || t.type == DataType::kInt8;
        const bool quantized_int32 = t.type == DataType::kInt32 && !t.quantization.empty() &&
                                     t.quantization.scale[0] != 0.0f;
        if (!eight_bit && !quantized_int32) continue;
        if (t.buffer != 0 && !model.buffers[t.buffer].empty()) {
          const std::vector<float> values = Dequantize(t, model.buffers[t.buffer].bytes());
          std::vector<uint8_t> bytes(values.size() * sizeof(float));
          std::memcpy(bytes.data(), values.data(), bytes.size());
          model.buffers.push_back(BufferDef(std::move(bytes)));
          t.buffer = static_cast<uint32_t>(model.buffers.size() - 1);
        }
        t.type = DataType::kFloat32;
        t.quantization = Quantization{};
      }
    }
    model.description = "float32 twin of " + std::string(argv[1]);
    WriteModelFile(model, argv[2]);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
