// int16 LOGISTIC and TANH as TFLite's reference kernels compute them: the
// input (zero point 0) is brought to a fixed-point scale where 2^17 stands for
// 10.67 (= 32 / 3), the magnitude indexes a 256-entry table of sigmoid(i / 24)
// in unsigned 0.16 format with linear interpolation of the low bits, and the
// sign is applied by symmetry (TANH uses tanh(x) = 2 sigmoid(2x) - 1 on the
// same table). Outputs have scale 2^-15 and zero point 0.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>

namespace delegato::reference {

// sigmoid(i / 24) in unsigned 0.16 format for i in [0, 256): the values of
// TFLite's sigmoid_table_uint16 (within 1.2 units of 65536 * sigmoid(i / 24);
// the last entry is 65535).
inline constexpr std::array<uint16_t, 256> kSigmoidTable16 = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
};

// How an int16 input reaches the table's scale: with multiplier 0 the input
// scale is a power of two and x * (3 << left_shift) does it exactly;
// otherwise x * multiplier, rounding right shift by left_shift.
struct Int16ActivationParams {
  int32_t multiplier = 0;
  int32_t left_shift = 0;
};

namespace detail {

inline int32_t ScaleInt16ActivationInput(int16_t x, int32_t multiplier, int32_t shift) {
  const int32_t round = shift > 0 ? 1 << (shift - 1) : 0;
  return (static_cast<int32_t>(x) * multiplier + round) >> shift;
}

inline void EffectiveInt16Params(const Int16ActivationParams& p, int32_t* multiplier,
                                 int32_t* shift) {
  if (p.multiplier == 0) {
    *multiplier = 3 << p.left_shift;
    *shift = 0;
  } else {
    *multiplier = p.multiplier;
    *shift = p.left_shift;
  }
}

}  // namespace detail

inline void LogisticInt16(const Int16ActivationParams& p, const int16_t* in, int16_t* out,
                          int64_t begin, int64_t end) {
  const std::array<uint16_t, 256>& table = kSigmoidTable16;
  int32_t multiplier, shift;
  detail::EffectiveInt16Params(p, &multiplier, &shift);
  for (int64_t i = begin; i < end; ++i) {
    const int32_t x = detail::ScaleInt16ActivationInput(in[i], multiplier, shift);
    const uint32_t magnitude = static_cast<uint32_t>(std::abs(x));
    // 2^9 input steps per table entry (sigmoid's argument is twice tanh's).
    const uint32_t index = magnitude >> 9;
    uint32_t r;
    if (index >= 255) {
      r = uint32_t{0x7FFF} << 10;
    } else {
      const uint32_t a = table[index], b = table[index + 1];
      r = (a << 9) + (magnitude & 0x1FF) * (b - a);
    }
    r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
    out[i] = static_cast<int16_t>(r >> 10);
  }
}

inline void TanhInt16(const Int16ActivationParams& p, const int16_t* in, int16_t* out,
                      int64_t begin, int64_t end) {
  const std::array<uint16_t, 256>& table = kSigmoidTable16;
  int32_t multiplier, shift;
  detail::EffectiveInt16Params(p, &multiplier, &shift);
  for (int64_t i = begin; i < end; ++i) {
    const int32_t x = detail::ScaleInt16ActivationInput(in[i], multiplier, shift);
    const uint32_t magnitude = static_cast<uint32_t>(std::abs(x));
    const uint32_t index = magnitude >> 8;
    int32_t r;
    if (index >= 255) {
      r = 0xFFFF << 8;
    } else {
      const uint32_t a = table[index], b = table[index + 1];
      r = static_cast<int32_t>((a << 8) + (magnitude & 0xFF) * (b - a));
    }
    r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    out[i] = static_cast<int16_t>(r >> 8);
  }
}

}  // namespace delegato::reference
