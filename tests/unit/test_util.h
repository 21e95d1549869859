// OpModel: builds a small model in memory (one op, or a few), runs it through
// the real interpreter, and reads outputs. In the spirit of TFLite's
// SingleOpModel: tests state inputs, parameters and expected raw values.
//
//   OpModel m;
//   int in = m.AddInput(DataType::kUInt8, {1, 4}, Q(0.5f, 128));
//   int w  = m.AddConst<uint8_t>(DataType::kUInt8, {2, 4}, {...}, Q(0.25f, 127));
//   int out = m.AddOutput(DataType::kUInt8, Q(1.0f, 128));
//   m.AddOp(BuiltinOp::kFullyConnected, {in, w, -1}, {out}, FullyConnectedParams{});
//   m.Build();                       // create interpreter + AllocateTensors; fails the test on error
//   m.SetInput<uint8_t>(0, {...});
//   m.Invoke();
//   EXPECT_THAT(m.GetOutput<uint8_t>(0), ElementsAre(...));
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "delegato/interpreter.h"
#include "kernels/optimized/isa.h"
#include "model/model.h"

namespace delegato::testing {

Quantization Q(float scale, int64_t zero_point);
Quantization QPerAxis(std::vector<float> scales, std::vector<int64_t> zero_points, int32_t axis);

class OpModel {
 public:
  OpModel();

  // Subgraphs: everything below adds to the current subgraph, 0 at first.
  // AddSubgraph appends an empty one (for IF, WHILE, CALL_ONCE to call) and
  // makes it current; SetSubgraph switches. Build runs subgraph 0.
  int AddSubgraph();
  void SetSubgraph(int index) { current_ = index; }

  // Graph input / output tensors (in the order added). Output dims are
  // computed by Prepare; the dims given here are only the declared shape.
  int AddInput(DataType type, std::vector<int32_t> dims, Quantization q = {},
               std::string name = "");
  int AddOutput(DataType type, Quantization q = {}, std::vector<int32_t> dims = {},
                std::string name = "");
  // An intermediate tensor (neither graph input nor output).
  int AddTensor(DataType type, Quantization q = {}, std::vector<int32_t> dims = {});
  // A constant tensor backed by a model buffer.
  template <class T>
  int AddConst(DataType type, std::vector<int32_t> dims, const std::vector<T>& values,
               Quantization q = {}) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return AddConstBytes(type, std::move(dims), std::move(bytes), std::move(q));
  }
  int AddConstBytes(DataType type, std::vector<int32_t> dims, std::vector<uint8_t> bytes,
                    Quantization q = {});

  // Without a version, Build stamps the one TFLite's converter would give the
  // node for its types, shapes and options (model/op_version.h); a version given
  // here is kept unless the node needs a higher one.
  static constexpr int kConverterVersion = 0;
  void AddOp(BuiltinOp op, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
             OpParams params = std::monostate{}, int version = kConverterVersion);
  void AddCustomOp(std::string custom_code, std::vector<int32_t> inputs,
                   std::vector<int32_t> outputs, std::vector<uint8_t> custom_options,
                   int version = 1);

  // Creates the interpreter and allocates; ADD_FAILURE with the message on error.
  // Tests of ops with an optimized kernel run each case with both kernel sets.
  void Build(int num_threads = 1, KernelSet kernels = KernelSet::kOptimized);
  // Same, returning the status instead (for tests of Prepare's errors).
  Status TryBuild(int num_threads = 1, KernelSet kernels = KernelSet::kOptimized);

  template <class T>
  void SetInput(int input, const std::vector<T>& values) {
    TensorView view = interpreter_->input(input);
    ASSERT_EQ(values.size() * sizeof(T), view.bytes) << "input " << input << " size";
    if (view.bytes != 0) std::memcpy(view.data, values.data(), view.bytes);
  }
  void Invoke();
  Status TryInvoke();

  template <class T>
  std::vector<T> GetOutput(int output) const {
    TensorView view = interpreter_->output(output);
    std::vector<T> values(view.bytes / sizeof(T));
    // Empty outputs may have no data pointer (memcpy's pointers must not be null).
    if (!values.empty()) std::memcpy(values.data(), view.data, values.size() * sizeof(T));
    return values;
  }
  std::vector<int32_t> GetOutputShape(int output) const;

  ModelDef& model() { return *model_; }
  Interpreter& interpreter() { return *interpreter_; }

 private:
  // With DELEGATO_OP_DUMP_DIR set, each successful Invoke is recorded for the
  // LiteRT replay (tests/conformance/test_single_ops.py): the model as the
  // writer serializes it, inputs and outputs as .npy, and meta.json.
  void DumpInvoke(const std::vector<std::vector<uint8_t>>& inputs);

  std::shared_ptr<ModelDef> model_;
  std::unique_ptr<Interpreter> interpreter_;
  int current_ = 0;  // the subgraph being built
  int num_threads_ = 1;
  KernelSet kernels_ = KernelSet::kOptimized;
  std::string dump_dir_;  // this interpreter's case directory, once created
  int dump_invokes_ = 0;
};

// Quantizes floats with the given parameters, rounding like TFLite's tests.
template <class T>
std::vector<T> Quantize(const std::vector<float>& values, float scale, int32_t zero_point);
template <class T>
std::vector<float> Dequantize(const std::vector<T>& values, float scale, int32_t zero_point);

// The source tree and the shared corpus (../shared beside it, or
// $DELEGATO_SHARED_DIR). Found from this file's compile-time path, which is
// relative to the build directory when ccache rewrites it, so tests run with
// the build directory as working directory (as ctest does).
std::filesystem::path SourceDir();
std::filesystem::path SharedDir();

// A model of the shared conformance corpus: $DELEGATO_SHARED_DIR/models/<name>,
// by default <source dir>/../shared/models/<name>. Empty when absent, so
// callers skip with GTEST_SKIP (see REQUIRE_SHARED_MODEL).
std::string SharedModelPath(const std::string& name);

#define REQUIRE_SHARED_MODEL(var, name)                                                 \
  const std::string var = ::delegato::testing::SharedModelPath(name);                  \
  if (var.empty()) GTEST_SKIP() << "shared model " << (name) << " not found (../shared/models; " \
                                   "set DELEGATO_SHARED_DIR)";

// The kernel ISAs this CPU can run (optimized-kernel tests run each).
inline std::vector<optimized::Isa> SupportedIsas() {
  std::vector<optimized::Isa> isas;
  for (int i = 0; i < optimized::kNumIsas; ++i) {
    const auto isa = static_cast<optimized::Isa>(i);
    if (optimized::IsaSupported(isa)) isas.push_back(isa);
  }
  return isas;
}

}  // namespace delegato::testing
