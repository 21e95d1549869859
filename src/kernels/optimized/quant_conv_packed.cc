// QuantConv's packed state for PackedWeightStore (packed_state.h): the
// O(K * N) part of its construction (weights in the ISA's layout, the
// per-channel folded bias and sum of |w - w_zp|). Requantization constants and the work split are
// cheap and always recomputed.
#include "kernels/optimized/packed_state.h"
#include "kernels/optimized/quant_conv.h"

namespace delegato::optimized {
namespace {
constexpr uint32_t kQuantConvMagic = 0x564E4351;  // "QCNV"
}

uint64_t QuantConv::PackedFingerprint(const QuantConvParams& p) const {
  const reference::ConvGeometry& g = p.geometry;
  ParamsFingerprint f;
  for (int32_t v : {g.batches, g.input_height, g.input_width, g.input_depth, g.filter_height, g.filter_width,
                    g.filter_depth, g.output_height, g.output_width, g.output_depth, g.stride_height,
                    g.stride_width, g.dilation_height, g.dilation_width, g.pad_height, g.pad_width})
    f.Int(v);
  f.Int(p.is_uint8).Int(p.input_zero_point).Int(p.is_uint8 ? p.filter_zero_point : 0);
  f.Int(k_).Int(k_padded_).Int(k_weights_).Int(n_);
  f.Bytes(p.filter, static_cast<size_t>(k_) * n_);  // one byte per weight, uint8 or int8
  if (p.bias != nullptr) f.Bytes(p.bias, static_cast<size_t>(n_) * sizeof(int32_t));
  else f.Int(-1);
  return f.value();
}

std::vector<uint8_t> QuantConv::SerializePacked(const QuantConvParams& params) const {
  const PackedStateHeader header{kQuantConvMagic, kPackedLayoutVersion, isa_, PackedFingerprint(params)};
  return WritePackedState(header, {{weights8_.data(), sizeof(int8_t), weights8_.size()},
                                   {weights16_.data(), sizeof(int16_t), weights16_.size()},
                                   {column_bias_.data(), sizeof(int32_t), column_bias_.size()},
                                   {weight_abs_sum_.data(), sizeof(uint32_t), weight_abs_sum_.size()}});
}

bool QuantConv::LoadPacked(const QuantConvParams& params, std::span<const uint8_t> packed) {
  packed_rejection_.clear();
  if (packed.empty()) return false;
  const PackedStateHeader expected{kQuantConvMagic, kPackedLayoutVersion, isa_, PackedFingerprint(params)};
  packed_rejection_ = ReadPackedState(packed, expected,
                                      {{weights8_.data(), sizeof(int8_t), weights8_.size()},
                                       {weights16_.data(), sizeof(int16_t), weights16_.size()},
                                       {column_bias_.data(), sizeof(int32_t), column_bias_.size()},
                                   {weight_abs_sum_.data(), sizeof(uint32_t), weight_abs_sum_.size()}});
  return packed_rejection_.empty();
}

}  // namespace delegato::optimized
