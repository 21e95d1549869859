// Vector matrix-vector products and activations for the LSTM steps of
// kernels/reference/lstm_float.h and lstm.h, handed to them as their Ops
// (the steps themselves, the cell update and the optional parts are the
// reference's code).
//
// float32: each weight matrix [rows][cols] is packed transposed, [cols][rows
// padded to 16], so a vector holds 16 (AVX2: 8) rows' sums; every sum starts
// at 0 and adds its products column by column with separate multiplies and
// adds, the reference's operations in its order: bit-exact. The sigmoid and
// tanh use the vector exp (FloatSigmoid, FloatTanh): within a few ulp / 2e-6
// relative of std::exp and std::tanh.
// Hybrid and integer: HybridGemm's int16 pairs (exact int32 sums), the row
// quantization of HybridQuantizeRow, the reference's requantization per row:
// bit-exact. The integer gates' 16-bit fixed-point sigmoid and tanh run the
// reference's operations lane by lane (fixed_point16.inc): bit-exact.
//
// Weights are found by the address the step passes (the constant tensor's
// data): a matrix the packing does not know runs the reference loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/hybrid_gemm.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/lstm.h"
#include "kernels/reference/lstm_float.h"

namespace delegato::optimized {

// Whether `isa` has the vector LSTM kernels (AVX2, AVX-512, NEON: the
// float32 products, sigmoid and tanh, the fixed-point activations and the
// int8 products on HybridGemm).
bool LstmVectorIsa(Isa isa);

// The packed weights of one LSTM node, built in Prepare.
class LstmPackedWeights {
 public:
  explicit LstmPackedWeights(Isa isa) : isa_(isa) {}
  Isa isa() const { return isa_; }

  void AddFloat(const float* matrix, int rows, int cols);
  void AddInt8(const int8_t* matrix, int rows, int cols);

  // Scratch for the int8 products: one widened row and one row of sums.
  size_t scratch_bytes() const;

  struct FloatMatrix {
    const float* source = nullptr;
    int rows = 0, cols = 0, padded_rows = 0;
    AlignedBuffer<float> packed;  // [cols][padded_rows]
  };
  struct Int8Matrix {
    const int8_t* source = nullptr;
    std::unique_ptr<HybridGemm> gemm;
  };
  const FloatMatrix* FindFloat(const float* matrix) const;
  const Int8Matrix* FindInt8(const int8_t* matrix) const;

 private:
  Isa isa_;
  std::vector<std::unique_ptr<FloatMatrix>> float_;
  std::vector<Int8Matrix> int8_;
};

// reference::LstmFloatOps' meaning, in vectors.
struct FloatLstmOps {
  const LstmPackedWeights* weights = nullptr;

  void MatVec(const float* matrix, int rows, int cols, const float* vector, int n_batch,
              float* result) const;
  void Activate(reference::LstmActivation act, float* v, int n) const;
};

// reference::LstmHybridOps' meaning; scratch: weights->scratch_bytes(), 64-byte aligned.
struct HybridLstmOps : FloatLstmOps {
  uint8_t* scratch = nullptr;

  void QuantizeRows(const float* v, int n_batch, int n, bool asymmetric, int8_t* q,
                    float* scales, int32_t* zero_points) const;
  void MatVecQuantized(const int8_t* matrix, float matrix_scale, const int32_t* row_sums,
                       int rows, int cols, const int8_t* q, const float* scales,
                       const int32_t* zero_points, bool asymmetric, int n_batch,
                       float* result) const;
};

// reference::LstmIntegerOps' meaning; scratch as HybridLstmOps.
struct IntegerLstmOps : reference::LstmIntegerOps {
  const LstmPackedWeights* weights = nullptr;
  uint8_t* scratch = nullptr;

  template <class T>
  void MatMulRequant(const int8_t* x, const int32_t* bias, const int8_t* matrix,
                     int32_t multiplier, int shift, int n_batch, int n_in, int n_out,
                     int32_t zero_point, T* output) const;
  void Sigmoid(int16_t* gate, int n) const;
  void Tanh(int integer_bits, const int16_t* in, int n, int16_t* out) const;
};

}  // namespace delegato::optimized
