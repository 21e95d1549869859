// int16 LOGISTIC and TANH (optimized::Int16SigmoidTanh) against the
// reference, bit for bit, over every int16 input: input scales that are
// powers of two (multiplier 0, several left shifts) and others (multiplier
// and rounding shift), ranges that start and end off the 8- and 16-lane
// grids, on every vector ISA this CPU has.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/optimized/activations16.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/activations16.h"

namespace delegato {
namespace {

// The vector ISAs of this architecture the CPU has (AVX-512: 16 lanes,
// AVX2 and NEON: 8).
std::vector<optimized::Isa> VectorIsas() {
  std::vector<optimized::Isa> isas;
  for (optimized::Isa isa : {optimized::Isa::kAvx2, optimized::Isa::kAvx512Vnni,
                             optimized::Isa::kNeon})
    if (optimized::Int16SigmoidTanhCovers(isa) && optimized::IsaSupported(isa))
      isas.push_back(isa);
  return isas;
}

TEST(OptimizedActivations16Test, EveryInputMatchesReference) {
  const std::vector<optimized::Isa> isas = VectorIsas();
  if (isas.empty())
    GTEST_SKIP() << "int16 LOGISTIC/TANH run the reference on "
                 << optimized::IsaName(optimized::SelectedIsa());
  std::vector<int16_t> in(65536 + 5);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int16_t>(i - 32768);
  std::vector<reference::Int16ActivationParams> params;
  for (int left : {0, 1, 3, 6, 10}) params.push_back({0, left});
  // Multipliers below 2^15, as Prepare makes them (larger ones overflow the
  // reference's int32 product, undefined behaviour): small ones, and what
  // Prepare makes of other scales, a multiplier in (2^14, 2^15), shifts 0-31.
  for (int32_t multiplier : {1, 3, 1000, 24576})
    for (int shift : {0, 1, 5, 12, 17}) params.push_back({multiplier, shift});
  for (int32_t multiplier : {16384, 20000, 32767})
    for (int shift : {0, 7, 15, 22, 30, 31}) params.push_back({multiplier, shift});
  for (optimized::Isa isa : isas)
    for (bool tanh : {false, true})
      for (const reference::Int16ActivationParams& p : params) {
        std::vector<int16_t> want(in.size()), got(in.size(), 0x5555);
        if (tanh)
          reference::TanhInt16(p, in.data(), want.data(), 0, in.size());
        else
          reference::LogisticInt16(p, in.data(), want.data(), 0, in.size());
        optimized::Int16SigmoidTanh(isa, tanh, p, in.data(), got.data(), 3, in.size());
        optimized::Int16SigmoidTanh(isa, tanh, p, in.data(), got.data(), 0, 3);
        ASSERT_EQ(got, want) << optimized::IsaName(isa) << (tanh ? " TANH" : " LOGISTIC")
                             << " multiplier " << p.multiplier << " shift " << p.left_shift;
      }
}

}  // namespace
}  // namespace delegato
