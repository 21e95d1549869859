// Quantized CONV_2D (uint8 with per-tensor weights, int8 with per-tensor or
// per-channel weights) as a packed GEMM, bit-exact with
// reference::ConvQuantized.
//
// The convolution is output[m][n] = requant(sum_k A[m][k] * W[k][n]) with
// m = output pixel, k = (filter_y, filter_x, in_channel) and n = out channel.
// Weights are packed once (Prepare) into slabs of up to 64 output channels;
// each Eval packs blocks of A rows into per-thread scratch (im2col; 1x1
// stride-1 convolutions are a plain copy), padded taps filled with the input
// zero point so that they contribute exactly 0, as the reference's skipped
// taps do.
//
// Exactness: the reference accumulates (w - w_zp)(x - x_zp) in int32 with
// wraparound. Every variant computes that same sum modulo 2^32:
//   avx512vnni: vpdpbusd multiplies unsigned bytes by signed bytes. int8:
//     u = x + 128 (unsigned) times w, and sum w (x - x_zp) =
//     sum w u - (128 + x_zp) sum w, the second term folded per channel into
//     the bias. uint8: x (unsigned) times w' = w - 128 (signed), and
//     sum (w - w_zp)(x - x_zp) = sum x w' + (128 - w_zp) sum x
//                                + K w_zp x_zp - x_zp sum w,
//     per-channel terms folded into the bias, the per-pixel sum of x computed
//     while packing.
//   avx512vnni with AMX (AmxSelected(), at least kAmxMinTaps taps): the same
//     panel, weights and folded terms, multiplied 16 rows x 64 taps x 16
//     channels per tdpbusd (also u8 x s8 into s32); the weights padded with
//     zeros to a multiple of 64 taps. The tile sums then take the vnni
//     output stage.
//   dotprod (aarch64): sdot (int8) / udot (uint8) of raw bytes, 4 per lane;
//     sum (w - w_zp)(x - x_zp) = sum w x - x_zp sum w + K w_zp x_zp
//     - w_zp sum x: per-channel terms folded into the bias, the per-pixel
//     sum of x (uint8 with w_zp != 0 only) computed after packing.
//   i8mm (aarch64): smmla (int8) / ummla (uint8) of raw bytes, a 2 x 8 block
//     of panel rows times an 8 x 2 block of weights per instruction (k
//     padded to 8), the zero-point terms as for dotprod.
//   avx2 / neon / scalar: A holds x - x_zp and W holds w - w_zp as int16 (both in
//     [-255, 255]); vpmaddwd adds two products (|sum| <= 130050) into int32
//     exactly, with no saturation (neon: smlal, one product at a time).
//     No correction terms. avx2 with one output channel: dot products of 8
//     panel rows at a time, reduced together (one requantization per 8
//     outputs instead of one per output).
// The int32 sum is then requantized exactly as the reference does
// (requantize.h). With few input channels requantization, not the
// multiply-adds, sets the speed, so vnni and avx2 choose per slab (vnni: up
// to 64 output channels, avx2: 16) the cheapest exact form: the magnitude
// form (requantize_magnitude.h) when Prepare proves it exact for every
// channel of the slab, bounding |acc| <= |bias| + max|x - x_zp| * sum|w -
// w_zp| (vnni with IFMA's 52-bit multiply-adds when the CPU has them and
// every bound is below 2^20); otherwise, on vnni, one 64-bit rounding shift
// (requantize64.h) when every channel's shift allows; otherwise the general
// form. Results do not depend
// on the ISA or the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/requantize.h"
#include "kernels/optimized/requantize64.h"
#include "kernels/optimized/requantize_magnitude.h"
#include "kernels/reference/conv.h"

namespace delegato::optimized {

struct QuantConvParams {
  reference::ConvGeometry geometry;  // groups() must be 1
  bool is_uint8 = false;             // uint8 data and weights; otherwise int8
  int32_t input_zero_point = 0;
  int32_t filter_zero_point = 0;  // uint8 only: int8 convolution weights are symmetric
  int32_t output_zero_point = 0;
  int32_t act_min = 0, act_max = 0;
  const int32_t* multiplier = nullptr;  // one per output channel
  const int32_t* shift = nullptr;
  const void* filter = nullptr;   // [out][filter_y][filter_x][in], uint8 or int8
  const int32_t* bias = nullptr;  // one per output channel, or null
  // FULLY_CONNECTED's reference rescales in double instead of fixed point:
  // out = round(double(acc) * output_scale[c]) (reference::RescaleDouble).
  // When set, multiplier/shift are ignored.
  const double* output_scale = nullptr;
};

class QuantConv {
 public:
  // Whether this kernel handles the geometry (ungrouped, sizes in range).
  static bool Covers(const reference::ConvGeometry& g);

  // Packs the weights for `isa` and plans `num_threads` tasks. With
  // `packed` (SerializePacked of an earlier kernel), takes the packed
  // weights from it instead when it was packed from the same weights and
  // parameters for the same ISA and layout (see packed_state.h); otherwise
  // packs, and packed_rejection() says why.
  QuantConv(const QuantConvParams& params, Isa isa, int num_threads,
            std::span<const uint8_t> packed = {});

  // The layout of the packed arrays SerializePacked writes: bump whenever
  // the packing (weights8_, weights16_, column_bias_, weight_abs_sum_) changes.
  static constexpr uint32_t kPackedLayoutVersion = 3;
  // `params`: those this kernel was built from (their weights are fingerprinted).
  std::vector<uint8_t> SerializePacked(const QuantConvParams& params) const;
  bool reused_packed() const { return reused_packed_; }
  const std::string& packed_rejection() const { return packed_rejection_; }

  Isa isa() const { return isa_; }
  // avx512vnni: whether the GEMM runs on AMX tiles: AmxSelected() and at
  // least kAmxMinTaps taps (below, requantization sets the speed and the
  // vnni kernels, accumulating in registers, are faster: kernels_bench).
  static constexpr int kAmxMinTaps = 64;
  bool uses_amx() const { return amx_; }
  // Whether requantize64.h's constants are set up (its slabs may still take
  // the magnitude form).
  bool shift64_requant() const { return shift64_requant_; }
  // How each slab requantizes (tests check coverage).
  enum class SlabRequant : uint8_t { kGeneral, kShift64, kMagnitude, kMagnitudeIfma, kDouble };
  int num_slabs() const { return static_cast<int>(slabs_.size()); }
  SlabRequant slab_requant(int slab) const { return slabs_[slab].requant; }
  // Per-Eval scratch for all tasks (packed input rows).
  size_t scratch_bytes() const { return per_task_bytes_ * num_tasks_; }
  // Eval runs tasks [0, num_tasks()) in any order, on any threads; each
  // writes its own output elements.
  int num_tasks() const { return num_tasks_; }
  void RunTask(int task, const void* input, void* output, uint8_t* scratch) const;

  // Packed weight bytes (for memory reports).
  size_t packed_bytes() const {
    return weights8_.bytes() + weights16_.bytes() + dot_weights_.bytes() +
           weight_abs_sum_.bytes() + magnitude_.bytes();
  }

 private:
  struct Slab {
    int n0 = 0;       // first output channel
    int blocks = 0;   // 16-channel blocks (1..4)
    size_t offset = 0;  // into the packed weights, in elements
    SlabRequant requant = SlabRequant::kGeneral;
  };

  template <class Ops>
  void Run(int task, const uint8_t* input, uint8_t* output, uint8_t* scratch) const;
  int TileRows(int rows) const;
  template <class Ops>
  void PackPanel(const uint8_t* input, int64_t m0, int rows, typename Ops::Elem* panel,
                 int32_t* row_terms) const;

  // vnni, avx2: the slabs whose every channel takes the magnitude form exactly.
  void PrepareMagnitudeRequant(const QuantConvParams& p, int padded_n);
  const double* DoubleScale() const { return double_rescale_ ? double_scale_.data() : nullptr; }
  // What SerializePacked records and LoadPacked checks (packed_state.cc).
  uint64_t PackedFingerprint(const QuantConvParams& p) const;
  bool LoadPacked(const QuantConvParams& p, std::span<const uint8_t> packed);

  friend struct VnniOps;
  friend struct Avx2Ops;
  friend struct ScalarOps;
  friend struct NeonOps;
  friend struct DotprodOps;
  friend struct I8mmOps;

  reference::ConvGeometry g_;
  Isa isa_ = Isa::kScalar;
  bool is_uint8_ = false;
  int k_ = 0;         // filter_height * filter_width * input_depth
  int k_padded_ = 0;  // rounded up to the k group (8 for i8mm, 4 for vnni/dotprod, 2 otherwise)
  int k_weights_ = 0;  // taps per packed weight column: k_padded_, or a multiple of 64 with AMX
  bool amx_ = false;
  int n_ = 0;
  int64_t m_ = 0;  // output pixels
  std::vector<Slab> slabs_;
  // vnni: [slab][k/4][block][16][4] (k padded to k_weights_); dotprod: [slab][k/4][16][4];
  // i8mm: [slab][k/8][8 channel pairs][2][8]
  AlignedBuffer<int8_t> weights8_;
  AlignedBuffer<int16_t> weights16_;  // avx2/neon/scalar: [slab][k/2][16][2]
  AlignedBuffer<int16_t> dot_weights_;  // avx2, one output channel: [k] (see Avx2DotKernel)
  AlignedBuffer<int32_t> column_bias_;  // bias + folded zero-point terms
  AlignedBuffer<uint32_t> weight_abs_sum_;  // per channel, sum |w - w_zp| (bounds |acc|)
  RequantChannels requant_;
  // vnni: requantization as one 64-bit rounding shift (requantize64.h) when
  // every channel's shift allows it.
  Requant64Channels requant64_;
  bool shift64_requant_ = false;
  MagnitudeChannels magnitude_;  // vnni, avx2: constants of the magnitude slabs' channels
  AlignedBuffer<double> double_scale_;  // FULLY_CONNECTED mode (empty otherwise)
  bool double_rescale_ = false;
  int32_t row_coefficient_ = 0;  // uint8: times each row's sum of x (vnni 128 - w_zp, dotprod -w_zp)
  uint8_t pad_byte_ = 0;         // vnni/dotprod: packed value of a padded tap
  uint8_t xor_mask_ = 0;         // vnni: 0x80 turns int8 into x + 128
  // 1x1, stride 1, unpadded: GEMM row m is input pixel m (no im2col).
  bool pointwise_ = false;
  bool in_place_rows_ = false;   // vnni: kernels read 1x1 uint8 input rows in place
  int32_t input_zero_point_ = 0;
  int block_rows_ = 0;  // rows packed at a time (a multiple of 48)
  int num_tasks_ = 1;
  bool split_rows_ = true;  // tasks split rows (else output-channel slabs)
  size_t panel_bytes_ = 0;
  size_t per_task_bytes_ = 0;
  bool reused_packed_ = false;
  std::string packed_rejection_;
};

// A grouped 8-bit CONV_2D (filter depth below the input depth) as one
// QuantConv per group, bit-exact like it: a task takes whole groups and, for
// each, gathers the group's input channels into its scratch, runs the
// group's GEMM on the calling thread and scatters the outputs into the
// group's output channels. The groups' packed weights are built in Prepare
// and not stored in the compilation cache.
class QuantGroupedConv {
 public:
  // More than one group, each of which QuantConv covers.
  static bool Covers(const reference::ConvGeometry& g);
  QuantGroupedConv(const QuantConvParams& params, Isa isa, int num_threads);

  int num_tasks() const { return num_tasks_; }
  size_t scratch_bytes() const { return scratch_.per_task_bytes * num_tasks_; }
  // Task `task` of num_tasks(): its own groups; scratch holds
  // scratch_bytes(), 64-byte aligned.
  void RunTask(int task, const void* input, void* output, uint8_t* scratch) const;
  size_t packed_bytes() const;

 private:
  reference::ConvGeometry g_;
  std::vector<std::unique_ptr<QuantConv>> groups_;
  int num_tasks_ = 1;
  GroupedScratch scratch_;
};

}  // namespace delegato::optimized
