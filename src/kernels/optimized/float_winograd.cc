#include "kernels/optimized/float_winograd.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/optimized/float_lanes.h"

namespace delegato::optimized {

#if DELEGATO_X86
namespace avx512 {
using namespace lanes::avx512;
#define WK_TARGET DLG_TARGET_AVX512
#define WK_ROWS 8
#include "kernels/optimized/float_winograd_kernels.inc"
#undef WK_TARGET
#undef WK_ROWS
}  // namespace avx512

namespace avx2 {
using namespace lanes::avx2;
#define WK_TARGET DLG_TARGET_AVX2
#define WK_ROWS 6
#include "kernels/optimized/float_winograd_kernels.inc"
#undef WK_TARGET
#undef WK_ROWS
}  // namespace avx2
#endif  // DELEGATO_X86

#if DELEGATO_ARM
namespace neon {
using namespace lanes::neon;
#define WK_TARGET
#define WK_ROWS 8
#define WK_BY_LANE
#include "kernels/optimized/float_winograd_kernels.inc"
#undef WK_TARGET
#undef WK_ROWS
#undef WK_BY_LANE
}  // namespace neon
#endif  // DELEGATO_ARM

namespace {

int VectorLanes(Isa isa) {
  if (isa == Isa::kAvx512Vnni) return 16;
  if (isa == Isa::kAvx2) return 8;
  return 4;
}

int BlockRows(Isa isa) { return isa == Isa::kAvx2 ? 6 : 8; }

// Below this many multiply-adds the layer runs as one task.
constexpr int64_t kMinParallelMacs = int64_t{1} << 17;

}  // namespace

bool FloatWinograd::Covers(const reference::ConvGeometry& g, Isa isa) {
  const bool vector_isa = isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni || IsArmIsa(isa);
  if (!vector_isa || g.groups() != 1 || g.filter_height != 3 || g.filter_width != 3 ||
      g.stride_height != 1 || g.stride_width != 1 || g.dilation_height != 1 ||
      g.dilation_width != 1 || g.input_depth <= 0 || g.output_depth <= 0 ||
      g.output_height <= 0 || g.output_width <= 0)
    return false;
  // cp * kp bounded without overflow for any channel counts.
  const size_t max_pairs = kMaxWeightBytes / (16 * sizeof(float));
  const size_t cp = RoundUp(static_cast<size_t>(g.input_depth), 16);
  const size_t kp = RoundUp(static_cast<size_t>(g.output_depth), 16);
  return cp <= max_pairs && kp <= max_pairs && cp * kp <= max_pairs;
}

bool FloatWinograd::Pays(const reference::ConvGeometry& g) {
  static const bool enabled = [] {
    const char* env = std::getenv("DELEGATO_WINOGRAD");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  if (!enabled) return false;
  // kernels_bench, 1 thread: 8 -> 8 channels on 32x32 19.3 -> 16.8 us (AVX2),
  // 16 -> 4 32.6 -> 27.5; with 3 or 4 input channels the transforms cost more
  // than the products they save (64x64x3 -> 16: 53.6 -> 99.7 us).
  return g.input_depth >= 8 && g.output_depth >= 4;
}

FloatWinograd::FloatWinograd(const FloatConvParams& p, Isa isa, int num_threads) : isa_(isa) {
  const reference::ConvGeometry& g = p.geometry;
  // At most 8 output channels on AVX-512: half of every vector would be padding.
  if (isa_ == Isa::kAvx512Vnni && g.output_depth <= 8) isa_ = Isa::kAvx2;
  const int lanes = VectorLanes(isa_);
  l_.batches = g.batches;
  l_.in_h = g.input_height;
  l_.in_w = g.input_width;
  l_.in_c = g.input_depth;
  l_.out_h = g.output_height;
  l_.out_w = g.output_width;
  l_.out_c = g.output_depth;
  l_.pad_h = g.pad_height;
  l_.pad_w = g.pad_width;
  l_.tiles_y = (g.output_height + 1) / 2;
  l_.tiles_x = (g.output_width + 1) / 2;
  l_.cp = static_cast<int>(RoundUp(g.input_depth, lanes));
  l_.kp = static_cast<int>(RoundUp(g.output_depth, lanes));
  l_.rows = BlockRows(isa_);
  l_.act_min = p.act_min;
  l_.act_max = p.act_max;

  // U = G g G^T per (output, input) channel pair, in double, rounded once;
  // packed [xi][panel][cp][panel width] with panels of two vectors (the last
  // may be one).
  const int cp = l_.cp, kp = l_.kp, panel = 2 * lanes;
  weights_.Resize(size_t{16} * cp * kp);
  std::fill(weights_.data(), weights_.data() + weights_.size(), 0.0f);
  for (int o = 0; o < l_.out_c; ++o) {
    const int n0 = o / panel * panel;
    const int width = std::min(panel, kp - n0);
    for (int c = 0; c < l_.in_c; ++c) {
      double gk[3][3];
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 3; ++x)
          gk[y][x] = p.filter[((static_cast<size_t>(o) * 3 + y) * 3 + x) * l_.in_c + c];
      double gg[4][3];  // G g
      for (int x = 0; x < 3; ++x) {
        gg[0][x] = gk[0][x];
        gg[1][x] = 0.5 * (gk[0][x] + gk[1][x] + gk[2][x]);
        gg[2][x] = 0.5 * (gk[0][x] - gk[1][x] + gk[2][x]);
        gg[3][x] = gk[2][x];
      }
      for (int i = 0; i < 4; ++i) {
        const double u[4] = {gg[i][0], 0.5 * (gg[i][0] + gg[i][1] + gg[i][2]),
                             0.5 * (gg[i][0] - gg[i][1] + gg[i][2]), gg[i][2]};
        for (int j = 0; j < 4; ++j) {
          const size_t xi = static_cast<size_t>(i) * 4 + j;
          weights_.data()[xi * cp * kp + static_cast<size_t>(n0) * cp +
                          static_cast<size_t>(c) * width + (o - n0)] = static_cast<float>(u[j]);
        }
      }
    }
  }
  bias_.Resize(kp);
  std::fill(bias_.data(), bias_.data() + kp, 0.0f);
  if (p.bias != nullptr) std::copy(p.bias, p.bias + l_.out_c, bias_.data());

  const int64_t blocks = (tiles() + l_.rows - 1) / l_.rows;
  const int64_t macs = int64_t{l_.batches} * l_.out_h * l_.out_w * l_.out_c * 9 * l_.in_c;
  num_tasks_ = macs >= kMinParallelMacs ? static_cast<int>(std::min<int64_t>(
                                              std::max(1, num_threads), blocks))
                                        : 1;
  num_tasks_ = std::max(1, num_tasks_);
  blocks_per_task_ = (blocks + num_tasks_ - 1) / num_tasks_;
  per_task_bytes_ = RoundUp(
      (size_t{16} * l_.rows * cp + size_t{16} * l_.rows * kp + static_cast<size_t>(cp)) *
          sizeof(float),
      64);
}

void FloatWinograd::RunTask(int task, const float* input, float* output, uint8_t* scratch) const {
  const int64_t begin = std::min(tiles(), task * blocks_per_task_ * l_.rows);
  const int64_t end = std::min(tiles(), (task + 1) * blocks_per_task_ * l_.rows);
  if (begin >= end) return;
  RunTiles(begin, end, input, output,
           reinterpret_cast<float*>(scratch + per_task_bytes_ * static_cast<size_t>(task)));
}

void FloatWinograd::RunTiles(int64_t begin, int64_t end, const float* input, float* output,
                             float* scratch) const {
#if DELEGATO_X86
  if (isa_ == Isa::kAvx512Vnni)
    return avx512::WinogradTiles(l_, weights_.data(), bias_.data(), begin, end, input, output,
                                 scratch);
  if (isa_ == Isa::kAvx2)
    return avx2::WinogradTiles(l_, weights_.data(), bias_.data(), begin, end, input, output,
                               scratch);
#endif
#if DELEGATO_ARM
  if (IsArmIsa(isa_))
    return neon::WinogradTiles(l_, weights_.data(), bias_.data(), begin, end, input, output,
                               scratch);
#endif
  (void)begin, (void)end, (void)input, (void)output, (void)scratch;
}

}  // namespace delegato::optimized
