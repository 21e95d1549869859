#include "passes/values.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace delegato::passes {

int64_t ElementCount(const TensorView& t) {
  const size_t size = DataTypeSize(t.type);
  return size ? static_cast<int64_t>(t.bytes / size) : 0;
}

double RawValue(const TensorView& t, int64_t i) {
  switch (t.type) {
    case DataType::kFloat32: return static_cast<const float*>(t.data)[i];
    case DataType::kUInt8: return static_cast<const uint8_t*>(t.data)[i];
    case DataType::kInt8: return static_cast<const int8_t*>(t.data)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(t.data)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(t.data)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(t.data)[i]);
    case DataType::kBool: return static_cast<const uint8_t*>(t.data)[i] ? 1 : 0;
    default: Fail("tensor \"", t.name, "\": cannot read values of type ", DataTypeName(t.type));
  }
}

double RealValue(const TensorView& t, int64_t i) {
  const double raw = RawValue(t, i);
  if (t.scales.empty() || t.type == DataType::kFloat32 || t.type == DataType::kInt64) return raw;
  const double zp = t.zero_points.empty() ? 0.0 : static_cast<double>(t.zero_points[0]);
  return static_cast<double>(t.scales[0]) * (raw - zp);
}

namespace {
template <class T>
void Store(const TensorView& t, int64_t i, double v) {
  static_cast<T*>(t.data)[i] = static_cast<T>(v);
}
}  // namespace

void SetRealValue(const TensorView& t, int64_t i, double real) {
  double v = real;
  const bool quantized = !t.scales.empty() && t.scales[0] > 0 && t.type != DataType::kFloat32;
  if (quantized) {
    const double zp = t.zero_points.empty() ? 0.0 : static_cast<double>(t.zero_points[0]);
    v = std::round(real / t.scales[0]) + zp;
  } else if (t.type != DataType::kFloat32) {
    v = std::round(real);
  }
  switch (t.type) {
    case DataType::kFloat32: Store<float>(t, i, v); break;
    case DataType::kUInt8: Store<uint8_t>(t, i, std::clamp(v, 0.0, 255.0)); break;
    case DataType::kInt8: Store<int8_t>(t, i, std::clamp(v, -128.0, 127.0)); break;
    case DataType::kInt16: Store<int16_t>(t, i, std::clamp(v, -32768.0, 32767.0)); break;
    case DataType::kInt32: Store<int32_t>(t, i, std::clamp(v, -2147483648.0, 2147483647.0)); break;
    case DataType::kInt64: Store<int64_t>(t, i, v); break;
    case DataType::kBool: Store<uint8_t>(t, i, v != 0 ? 1 : 0); break;
    default: Fail("tensor \"", t.name, "\": cannot write values of type ", DataTypeName(t.type));
  }
}

void FillRandom(const TensorView& t, std::mt19937_64& rng) {
  const int64_t n = ElementCount(t);
  for (int64_t k = 0; k < n; ++k) {
    switch (t.type) {
      case DataType::kUInt8:
      case DataType::kInt8:
        static_cast<uint8_t*>(t.data)[k] = static_cast<uint8_t>(rng());
        break;
      case DataType::kInt16: static_cast<int16_t*>(t.data)[k] = static_cast<int16_t>(rng()); break;
      case DataType::kBool: static_cast<uint8_t*>(t.data)[k] = rng() & 1; break;
      case DataType::kFloat32:
        static_cast<float*>(t.data)[k] =
            std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        break;
      case DataType::kInt32: static_cast<int32_t*>(t.data)[k] = static_cast<int32_t>(rng() % 10); break;
      case DataType::kInt64: static_cast<int64_t*>(t.data)[k] = static_cast<int64_t>(rng() % 10); break;
      default: Fail("tensor \"", t.name, "\": cannot fill values of type ", DataTypeName(t.type));
    }
  }
}

void CopyValues(const TensorView& from, const TensorView& to) {
  const bool same = from.type == to.type && from.bytes == to.bytes &&
                    std::equal(from.scales.begin(), from.scales.end(), to.scales.begin(), to.scales.end()) &&
                    std::equal(from.zero_points.begin(), from.zero_points.end(),
                               to.zero_points.begin(), to.zero_points.end());
  if (same) {
    std::memcpy(to.data, from.data, from.bytes);
    return;
  }
  const int64_t n = ElementCount(from);
  DLG_CHECK(n == ElementCount(to), "cannot copy \"", from.name, "\" (", n, " elements) into \"",
            to.name, "\" (", ElementCount(to), " elements)");
  for (int64_t k = 0; k < n; ++k) SetRealValue(to, k, RealValue(from, k));
}

}  // namespace delegato::passes
