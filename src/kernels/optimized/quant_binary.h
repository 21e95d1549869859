// Quantized 8-bit ADD, SUB and MUL with broadcasting, vectorized, bit-exact
// with reference::QuantizedAdd / QuantizedMulBroadcast.
//
// The output is walked in runs along the innermost (merged) dimension, as
// the reference does; in a run each input is either contiguous or one
// broadcast value (whose rescaled form is then computed once). Every lane
// performs the reference's integer steps: ADD/SUB rescale each input with
// (x + offset) << left_shift and a below-one fixed-point multiplier, add or
// subtract in int32 and rescale to the output; MUL multiplies the offset
// inputs in int32 and requantizes. Fixed-point multiplies use the exact
// vector form of requantize.h.
//
// Short inner rows (last merged dimension P <= 63) are walked as whole
// vectors across rows: an input repeating one row is rescaled once into a
// tile, an input with one value per row is rescaled for 16 (8) rows at once
// and permuted to its lanes. When one input is contiguous and the other
// repeats with period P <= 16 (P = 1: a broadcast value) over enough
// outputs, the outputs for every byte and phase are first computed with
// these same vector steps into a table, then looked up (byte shuffles for
// P = 1, gathers otherwise); when that input is a constant with P <= 64 the
// table is made once, in Prepare (TabulateConstant).
//
// aarch64 (neon; dotprod runs the same code): only the runs, 8 lanes at a
// time, the same integer steps (sqrdmulh for the fixed-point multiplies);
// not the row tiles or the lookup tables.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/requantize_magnitude.h"
#include "kernels/reference/elementwise.h"

namespace delegato::optimized {

class QuantBinary {
 public:
  enum class Kind { kAdd, kSub, kMul };

  // Whether the vector path reproduces these parameters exactly (8-bit
  // types; shifts in the ranges the reference computes without wrapping).
  static bool CoversAddSub(const reference::QuantizedAddParams& p);
  static bool CoversMul(const reference::QuantizedMulDivParams& p);

  QuantBinary(Kind kind, bool is_uint8, const reference::QuantizedAddParams& add,
              const reference::QuantizedMulDivParams& mul, Isa isa);

  Isa isa() const { return isa_; }
  // Output elements [begin, end) of `plan` (any split gives the same bytes).
  void Run(const reference::BroadcastPlan& plan, const void* a, const void* b, void* out,
           int64_t begin, int64_t end) const;

  // When `constant` (input a if constant_is_a, else b) repeats one row of
  // P <= kMaxConstantPeriod values along the output (a per-channel scale or
  // shift: strides 0 except the last) and the other input covers the output
  // contiguously, tabulates the outputs for every phase and byte now
  // (Prepare), so Run only looks them up (x86 vector ISAs). Returns whether
  // it did.
  static constexpr int64_t kMaxConstantPeriod = 64;
  bool TabulateConstant(const reference::BroadcastPlan& plan, const uint8_t* constant,
                        bool constant_is_a);
  bool tabulated() const { return table_period_ > 0; }
  // Both tabulated, `first`'s output being this kernel's tabulated (non-
  // constant) input, in the same element order: makes this table the
  // composition (this after first), read from `first`'s input. False (and
  // nothing changed) when the periods' least common multiple exceeds
  // kMaxConstantPeriod.
  bool ComposeAfter(const QuantBinary& first);

  // One run: n outputs, input strides 0 (broadcast) or 1.
  void RunSpan(const uint8_t* a, int64_t stride_a, const uint8_t* b, int64_t stride_b,
               uint8_t* out, int64_t n) const;
  // `rows` runs of n outputs, written one after another: run r reads
  // a + r * a_row and b + r * b_row.
  void RunRows(const uint8_t* a, int64_t stride_a, int64_t a_row, const uint8_t* b,
               int64_t stride_b, int64_t b_row, uint8_t* out, int64_t n, int64_t rows) const;

  Kind kind() const { return kind_; }
  bool is_uint8() const { return is_uint8_; }
  const reference::QuantizedAddParams& add() const { return add_; }
  const reference::QuantizedMulDivParams& mul() const { return mul_; }
  // How the x86 runs rescale (requantize_magnitude.h): the general form;
  // the magnitude form, proven exact here (ADD / SUB: each input on every
  // byte, the output by MagnitudeExact over the largest sum; MUL: over the
  // largest product); or, where MagnitudeExact refuses the output's, the
  // inputs as before and the output in the magnitude form with its tie term
  // (exact for any value). Its constants: ADD / SUB input 1's in channels
  // 0-15, input 2's in 16-31, the output's in 32-47; MUL the output's in
  // 0-15.
  enum Form { kGeneralForm = 0, kMagnitudeForm = 1, kMagnitudeTieForm = 2 };
  Form form() const { return form_; }
  bool magnitude_form() const { return form_ != kGeneralForm; }
  const MagnitudeChannels& magnitude_constants() const { return magnitude_; }

 private:
  void PrepareAddMagnitude();
  void PrepareMulMagnitude();
  static Form OutputForm(int32_t multiplier, int32_t shift, int64_t bound);

  Kind kind_;
  bool is_uint8_;
  reference::QuantizedAddParams add_;
  reference::QuantizedMulDivParams mul_;
  Isa isa_;
  Form form_ = kGeneralForm;
  MagnitudeChannels magnitude_;
  // TabulateConstant: [phase][byte] outputs (then padding for 4-byte
  // gathers) and (i % P) * 256 for i < P + 16.
  int64_t table_period_ = 0;
  bool table_linear_is_a_ = false;
  AlignedBuffer<uint8_t> table_bytes_;
  std::vector<int32_t> table_phase_base_;
};

}  // namespace delegato::optimized
