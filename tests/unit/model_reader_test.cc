// The .tflite reader: every shared model loads with the expected facts, and
// hostile input (truncated, corrupted, out-of-range indices, inconsistent
// sizes) is refused with a delegato::Error naming what is wrong, never a crash.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "model/model.h"
#include "tflite_schema_generated.h"
#include "test_util.h"

namespace delegato {
namespace {

namespace fs = std::filesystem;

using testing::SharedDir;

fs::path ModelPath(const std::string& name) { return SharedDir() / "models" / name; }

#define REQUIRE_MODEL(name)                                                                 \
  const fs::path model_path = ModelPath(name);                                              \
  if (!fs::exists(model_path)) GTEST_SKIP() << "shared model not found: " << model_path     \
                                            << " (set DELEGATO_SHARED_DIR)";

std::vector<fs::path> SharedModels() {
  std::vector<fs::path> models;
  const fs::path dir = SharedDir() / "models";
  std::error_code error;
  if (!fs::is_directory(dir, error)) return models;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tflite") models.push_back(entry.path());
  }
  std::sort(models.begin(), models.end());
  return models;
}

std::map<std::string, int> OpCounts(const ModelDef& model) {
  std::map<std::string, int> counts;
  for (const OperatorDef& op : model.subgraphs[0].operators) ++counts[model.OpName(op)];
  return counts;
}

// Runs `body`, expecting a delegato::Error whose message holds every fragment.
void ExpectError(const std::function<void()>& body, const std::vector<std::string>& fragments) {
  try {
    body();
    ADD_FAILURE() << "no error thrown; expected one mentioning " << fragments.front();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const std::string& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message \"" << message << "\" lacks \"" << fragment << "\"";
    }
  }
}

void ExpectReadError(const std::vector<uint8_t>& bytes, const std::vector<std::string>& fragments) {
  ExpectError([&] { ReadModelBuffer(bytes.data(), bytes.size(), "bad.tflite"); }, fragments);
}

// ----------------------------------------------------------------- shared models

TEST(ModelReader, EverySharedModelLoads) {
  const auto models = SharedModels();
  if (models.empty()) GTEST_SKIP() << "no shared models under " << SharedDir() / "models";
  for (const fs::path& path : models) {
    SCOPED_TRACE(path.string());
    std::shared_ptr<const ModelDef> model;
    ASSERT_NO_THROW(model = ReadModelFile(path.string()));
    ASSERT_FALSE(model->subgraphs.empty());
    EXPECT_EQ(model->version, 3u);
    for (const OperatorDef& op : model->subgraphs[0].operators) {
      EXPECT_LT(op.opcode_index, model->operator_codes.size());
    }
  }
}

TEST(ModelReader, MobilenetV1Facts) {
  REQUIRE_MODEL("mobilenet_v1_0.25_128_quant.tflite");
  const auto model = ReadModelFile(model_path.string());
  const SubgraphDef& graph = model->subgraphs[0];
  EXPECT_EQ(graph.tensors.size(), 89u);
  EXPECT_EQ(graph.operators.size(), 31u);
  const std::map<std::string, int> expected{{"CONV_2D", 15}, {"DEPTHWISE_CONV_2D", 13},
                                            {"AVERAGE_POOL_2D", 1}, {"RESHAPE", 1},
                                            {"SOFTMAX", 1}};
  EXPECT_EQ(OpCounts(*model), expected);
  ASSERT_EQ(graph.inputs.size(), 1u);
  const TensorDef& input = graph.tensors[graph.inputs[0]];
  EXPECT_EQ(input.type, DataType::kUInt8);
  EXPECT_EQ(input.shape, (std::vector<int32_t>{1, 128, 128, 3}));
  EXPECT_EQ(input.quantization.scale.size(), 1u);
  EXPECT_EQ(graph.tensors[graph.outputs[0]].shape, (std::vector<int32_t>{1, 1001}));
  ASSERT_EQ(model->metadata.size(), 2u);
  EXPECT_EQ(model->metadata[0].name, "min_runtime_version");
  EXPECT_EQ(model->description, "MLIR Converted.");

  const OperatorDef& first = graph.operators[0];
  ASSERT_EQ(model->OpName(first), "CONV_2D");
  const auto* conv = std::get_if<Conv2DParams>(&first.params);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->stride_w, 2);
  EXPECT_EQ(conv->padding, Padding::kSame);
  EXPECT_EQ(conv->activation, Activation::kRelu6);
  // Constant weights: [8,3,3,3] uint8 = 216 bytes.
  const TensorDef& weights = graph.tensors[first.inputs[1]];
  EXPECT_EQ(model->buffers[weights.buffer].size(), 8u * 3 * 3 * 3);
  EXPECT_FALSE(first.unparsed_options);
}

// Files from the old converter leave builtin_code at 0 and keep the op in the
// byte-sized deprecated_builtin_code: the reader must resolve max(both).
TEST(ModelReader, OldSchemaResolvesDeprecatedBuiltinCode) {
  REQUIRE_MODEL("person_detect.tflite");
  const auto model = ReadModelFile(model_path.string());
  const std::map<std::string, int> expected{{"CONV_2D", 14}, {"DEPTHWISE_CONV_2D", 14},
                                            {"AVERAGE_POOL_2D", 1}, {"RESHAPE", 1},
                                            {"SOFTMAX", 1}};
  EXPECT_EQ(OpCounts(*model), expected);
  EXPECT_EQ(model->operator_codes[0].builtin, BuiltinOp::kAveragePool2d);
  // Per-axis int8 weights.
  int per_axis = 0;
  for (const TensorDef& t : model->subgraphs[0].tensors) per_axis += t.quantization.per_axis();
  EXPECT_EQ(per_axis, 56);
  // Rank-1 per-channel biases carry the filter's axis 3 in this file: read as axis 0.
  const TensorDef& bias = model->subgraphs[0].tensors[33];
  EXPECT_EQ(bias.shape.size(), 1u);
  EXPECT_TRUE(bias.quantization.per_axis());
  EXPECT_EQ(bias.quantization.quantized_dimension, 0);
  const auto* reshape = std::get_if<ReshapeParams>(&model->subgraphs[0].operators[29].params);
  if (model->OpName(model->subgraphs[0].operators[29]) == "RESHAPE") {
    ASSERT_NE(reshape, nullptr);
    EXPECT_TRUE(reshape->has_new_shape);
  }
}

TEST(ModelReader, OldSchemaPadTransposeMean) {
  REQUIRE_MODEL("mobilenet_v2_quantized_1x3x224x224.tflite");
  const auto model = ReadModelFile(model_path.string());
  const auto counts = OpCounts(*model);
  EXPECT_EQ(counts.at("PAD"), 18);
  EXPECT_EQ(counts.at("TRANSPOSE"), 1);
  EXPECT_EQ(counts.at("MEAN"), 1);
  for (const OperatorDef& op : model->subgraphs[0].operators) {
    const std::string name = model->OpName(op);
    if (name == "PAD" || name == "TRANSPOSE") {
      EXPECT_TRUE(std::holds_alternative<EmptyParams>(op.params)) << name;
    }
    if (name == "MEAN") {
      EXPECT_TRUE(std::holds_alternative<ReducerParams>(op.params));
    }
    EXPECT_FALSE(op.unparsed_options) << name;
  }
}

TEST(ModelReader, CustomOps) {
  REQUIRE_MODEL("traffic_model.tflite");
  const auto model = ReadModelFile(model_path.string());
  const auto counts = OpCounts(*model);
  EXPECT_EQ(counts.at("TFLite_Detection_PostProcess"), 1);
  EXPECT_EQ(counts.at("CONV_2D"), 65);
  EXPECT_EQ(counts.at("RESIZE_NEAREST_NEIGHBOR"), 2);
  for (const OperatorDef& op : model->subgraphs[0].operators) {
    if (model->OpName(op) == "TFLite_Detection_PostProcess") {
      EXPECT_EQ(model->operator_codes[op.opcode_index].builtin, BuiltinOp::kCustom);
      EXPECT_EQ(op.custom_options.size(), 316u);
      EXPECT_TRUE(std::holds_alternative<std::monostate>(op.params));
    }
  }
  EXPECT_EQ(model->subgraphs[0].outputs.size(), 6u);
}

TEST(ModelReader, ModelWithoutBuffers) {
  REQUIRE_MODEL("model_invoking_error.tflite");
  const auto model = ReadModelFile(model_path.string());
  EXPECT_TRUE(model->buffers.empty());
  ASSERT_EQ(model->subgraphs[0].operators.size(), 1u);
  EXPECT_EQ(model->OpName(model->subgraphs[0].operators[0]), "fake-op-double");
}

TEST(ModelReader, LstmIntermediatesAndParams) {
  REQUIRE_MODEL("keras_lstm_mnist_ptq.tflite");
  const auto model = ReadModelFile(model_path.string());
  bool found = false;
  for (const OperatorDef& op : model->subgraphs[0].operators) {
    if (model->OpName(op) != "UNIDIRECTIONAL_SEQUENCE_LSTM") continue;
    found = true;
    EXPECT_EQ(op.intermediates.size(), 5u);
    EXPECT_TRUE(std::holds_alternative<SequenceLstmParams>(op.params));
  }
  EXPECT_TRUE(found);
  ASSERT_EQ(model->signature_defs.size(), 1u);
  EXPECT_EQ(model->signature_defs[0].key, "serving_default");
}

TEST(ModelReader, CastWithoutOptionsAndShapeSignature) {
  REQUIRE_MODEL("movenet_single_pose_lightning_ptq.tflite");
  const auto model = ReadModelFile(model_path.string());
  int casts = 0;
  for (const OperatorDef& op : model->subgraphs[0].operators) {
    if (model->OpName(op) != "CAST") continue;
    ++casts;
    const auto* cast = std::get_if<CastParams>(&op.params);
    ASSERT_NE(cast, nullptr);
    EXPECT_FALSE(cast->has_types);
  }
  EXPECT_EQ(casts, 5);
}

TEST(ModelReader, ShapeSignatureKept) {
  REQUIRE_MODEL("hello_world_int8.tflite");
  const auto model = ReadModelFile(model_path.string());
  const TensorDef& input = model->subgraphs[0].tensors[model->subgraphs[0].inputs[0]];
  EXPECT_EQ(input.shape, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(input.shape_signature, (std::vector<int32_t>{-1, 1}));
}

TEST(ModelReader, MissingFile) {
  ExpectError([] { ReadModelFile("/nonexistent/dir/model.tflite"); },
              {"/nonexistent/dir/model.tflite", "cannot open"});
  ExpectError([] { ReadModelFile("/tmp"); }, {"/tmp", "directory"});
  const fs::path empty = fs::temp_directory_path() / "delegato_reader_test_empty.tflite";
  { std::ofstream touch(empty); }
  ExpectError([&] { ReadModelFile(empty.string()); }, {empty.string(), "empty"});
  fs::remove(empty);
}

// ----------------------------------------------------------------- hostile input

// A small valid model built in code: CONV_2D (int8, per-axis weights, int32
// bias) then SOFTMAX, with metadata and a signature.
ModelDef SmallModel() {
  ModelDef m;
  m.description = "test model";
  m.buffers.resize(4);
  m.buffers[1].mutable_bytes().assign(4 * 3 * 3 * 2, 1);  // weights int8 [4,3,3,2]
  m.buffers[2].mutable_bytes().assign(4 * 4, 0);          // bias int32 [4]
  m.buffers[3].mutable_bytes() = {'1', '.', '0'};         // metadata
  m.operator_codes = {{BuiltinOp::kConv2d, "", 3}, {BuiltinOp::kSoftmax, "", 2}};
  SubgraphDef g;
  g.name = "main";
  auto tensor = [](std::string name, DataType type, std::vector<int32_t> shape, uint32_t buffer,
                   Quantization q) {
    TensorDef t;
    t.name = std::move(name);
    t.type = type;
    t.shape = std::move(shape);
    t.buffer = buffer;
    t.quantization = std::move(q);
    return t;
  };
  Quantization act;
  act.scale = {0.5f};
  act.zero_point = {-3};
  Quantization weights_q;
  weights_q.scale = {0.1f, 0.2f, 0.3f, 0.4f};
  weights_q.zero_point = {0, 0, 0, 0};
  weights_q.quantized_dimension = 0;
  Quantization bias_q = weights_q;
  g.tensors.push_back(tensor("input", DataType::kInt8, {1, 5, 5, 2}, 0, act));
  g.tensors.push_back(tensor("conv/weights", DataType::kInt8, {4, 3, 3, 2}, 1, weights_q));
  g.tensors.push_back(tensor("conv/bias", DataType::kInt32, {4}, 2, bias_q));
  g.tensors.push_back(tensor("conv/out", DataType::kInt8, {1, 5, 5, 4}, 0, act));
  g.tensors.push_back(tensor("softmax", DataType::kInt8, {1, 5, 5, 4}, 0, act));
  g.tensors[0].shape_signature = {-1, 5, 5, 2};
  g.inputs = {0};
  g.outputs = {4};
  OperatorDef conv;
  conv.opcode_index = 0;
  conv.inputs = {0, 1, 2};
  conv.outputs = {3};
  Conv2DParams conv_params;
  conv_params.stride_w = conv_params.stride_h = 1;
  conv.params = conv_params;
  OperatorDef softmax;
  softmax.opcode_index = 1;
  softmax.inputs = {3};
  softmax.outputs = {4};
  softmax.params = SoftmaxParams{1.0f};
  g.operators = {conv, softmax};
  m.subgraphs.push_back(std::move(g));
  m.metadata = {{"min_runtime_version", 3}};
  m.signature_defs = {{"serving_default", 0, {{"x", 0}}, {{"y", 4}}}};
  return m;
}

std::vector<uint8_t> SmallModelBytes() { return WriteModel(SmallModel()); }

// Mutates the small model through the generated object API, then re-packs it.
std::vector<uint8_t> Mutated(const std::function<void(tflite::ModelT&)>& mutate) {
  const std::vector<uint8_t> bytes = SmallModelBytes();
  std::unique_ptr<tflite::ModelT> model(tflite::GetModel(bytes.data())->UnPack());
  mutate(*model);
  flatbuffers::FlatBufferBuilder fbb;
  tflite::FinishModelBuffer(fbb, tflite::Model::Pack(fbb, model.get()));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

TEST(ModelReaderBadInput, SmallModelIsValid) {
  const auto bytes = SmallModelBytes();
  const auto model = ReadModelBuffer(bytes.data(), bytes.size(), "small.tflite");
  EXPECT_EQ(model->subgraphs[0].tensors.size(), 5u);
  // The object-API repack of an unmodified model is valid too.
  const auto same = Mutated([](tflite::ModelT&) {});
  EXPECT_NO_THROW(ReadModelBuffer(same.data(), same.size(), "repacked.tflite"));
}

TEST(ModelReaderBadInput, EmptyAndTinyFiles) {
  ExpectReadError({}, {"bad.tflite", "empty"});
  ExpectReadError({1, 2, 3}, {"bad.tflite", "too small"});
}

TEST(ModelReaderBadInput, WrongIdentifier) {
  auto bytes = SmallModelBytes();
  bytes[4] = 'X';
  bytes[7] = 0x01;
  ExpectReadError(bytes, {"bad.tflite", "file identifier", "X", "TFL3"});
}

TEST(ModelReaderBadInput, TruncatedAtManyPoints) {
  const auto bytes = SmallModelBytes();
  for (size_t length = 0; length < bytes.size(); length += (length < 64 ? 1 : 7)) {
    SCOPED_TRACE(length);
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    EXPECT_THROW(ReadModelBuffer(prefix.data(), prefix.size(), "cut.tflite"), Error);
  }
}

TEST(ModelReaderBadInput, RandomBytes) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint8_t> bytes(8 + rng() % 600);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (trial % 2 == 0) std::copy_n("TFL3", 4, bytes.begin() + 4);  // get past the identifier
    EXPECT_THROW(ReadModelBuffer(bytes.data(), bytes.size(), "random.tflite"), Error);
  }
}

// Flipping bytes of a valid model must load or throw Error: never crash.
TEST(ModelReaderBadInput, ByteFlipsNeverCrash) {
  const auto original = SmallModelBytes();
  std::mt19937 rng(99);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    auto bytes = original;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    try {
      ReadModelBuffer(bytes.data(), bytes.size(), "flipped.tflite");
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

TEST(ModelReaderBadInput, UnalignedBufferIsCopied) {
  const auto bytes = SmallModelBytes();
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  EXPECT_NO_THROW(ReadModelBuffer(shifted.data() + 1, bytes.size(), "unaligned.tflite"));
}

TEST(ModelReaderBadInput, OpcodeIndexOutOfRange) {
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->operators[1]->opcode_index = 7; }),
                  {"bad.tflite", "subgraph 0 operator 1", "opcode_index 7"});
}

TEST(ModelReaderBadInput, TensorIndexOutOfRange) {
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->operators[0]->inputs[1] = 99; }),
                  {"subgraph 0 operator 0 (CONV_2D)", "input 1", "tensor 99"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->operators[1]->outputs[0] = -1; }),
                  {"operator 1 (SOFTMAX)", "output 0", "tensor -1"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->operators[0]->inputs[0] = -2; }),
                  {"operator 0 (CONV_2D)", "tensor -2"});
  ExpectReadError(
      Mutated([](tflite::ModelT& m) { m.subgraphs[0]->operators[0]->intermediates = {5}; }),
      {"intermediate 0", "tensor 5"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->inputs = {12}; }),
                  {"graph input 0", "tensor 12"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->outputs = {-1}; }),
                  {"graph output 0", "tensor -1"});
}

TEST(ModelReaderBadInput, OptionalInputMayBeOmitted) {
  const auto bytes =
      Mutated([](tflite::ModelT& m) { m.subgraphs[0]->operators[0]->inputs[2] = -1; });
  const auto model = ReadModelBuffer(bytes.data(), bytes.size(), "no_bias.tflite");
  EXPECT_EQ(model->subgraphs[0].operators[0].inputs[2], -1);
}

TEST(ModelReaderBadInput, BufferIndexOutOfRange) {
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->tensors[1]->buffer = 50; }),
                  {"tensor 1 (\"conv/weights\")", "buffer 50"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.metadata[0]->buffer = 9; }),
                  {"metadata 0", "buffer 9"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.metadata_buffer = {2, 17}; }),
                  {"metadata_buffer 1", "buffer 17"});
}

TEST(ModelReaderBadInput, NegativeAndHugeDims) {
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->tensors[3]->shape = {1, -5, 5, 4}; }),
                  {"tensor 3 (\"conv/out\")", "negative", "[1,-5,5,4]"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->tensors[3]->shape = {2147483647, 2147483647, 2147483647};
                  }),
                  {"tensor 3", "overflow"});
  // Big but representable element counts only fail the buffer size check.
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->tensors[1]->shape = {1 << 30, 1 << 30, 4};
                  }),
                  {"tensor 1", "buffer 1 holds 72 bytes"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->tensors[0]->shape_signature = {-2, 5, 5, 2}; }),
                  {"tensor 0 (\"input\")", "shape_signature"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs[0]->tensors[0]->shape_signature = {-1, 5}; }),
                  {"tensor 0", "rank"});
}

TEST(ModelReaderBadInput, BufferSizeMismatch) {
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.buffers[1]->data.resize(70); }),
                  {"bad.tflite: subgraph 0 tensor 1 (\"conv/weights\"): buffer 1 holds 70 bytes, "
                   "INT8 [4,3,3,2] needs 72"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.buffers[2]->data.resize(20); }),
                  {"tensor 2 (\"conv/bias\")", "holds 20 bytes", "INT32 [4] needs 16"});
}

TEST(ModelReaderBadInput, BadTensorType) {
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->tensors[3]->type = static_cast<tflite::TensorType>(77);
                  }),
                  {"tensor 3", "type 77"});
}

TEST(ModelReaderBadInput, QuantizationInconsistent) {
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->tensors[1]->quantization->scale.push_back(0.5f);
                  }),
                  {"tensor 1 (\"conv/weights\")", "5 scales", "4 zero points"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    auto& q = *m.subgraphs[0]->tensors[1]->quantization;
                    q.scale = {1, 2, 3};
                    q.zero_point = {0, 0, 0};
                  }),
                  {"tensor 1", "3 scales", "dimension 0", "is 4"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->tensors[1]->quantization->quantized_dimension = 4;
                  }),
                  {"tensor 1", "dimension 4", "rank-4"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->tensors[1]->quantization->quantized_dimension = 3;
                  }),
                  {"tensor 1", "4 scales", "dimension 3 of [4,3,3,2] is 2"});
  // A rank-1 bias with a stray axis is read as per-channel over its only axis.
  const auto bytes = Mutated([](tflite::ModelT& m) {
    m.subgraphs[0]->tensors[2]->quantization->quantized_dimension = 3;
  });
  const auto model = ReadModelBuffer(bytes.data(), bytes.size(), "bias_axis.tflite");
  EXPECT_EQ(model->subgraphs[0].tensors[2].quantization.quantized_dimension, 0);
}

TEST(ModelReaderBadInput, OperatorCodes) {
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.operator_codes[1]->deprecated_builtin_code = 127;
                    m.operator_codes[1]->builtin_code = 0;
                  }),
                  {"operator code 1", "placeholder 127"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.operator_codes[1]->deprecated_builtin_code = 32;
                    m.operator_codes[1]->builtin_code = 32;
                  }),
                  {"operator code 1", "custom_code"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.operator_codes[0]->version = 0; }),
                  {"operator code 0", "version 0"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.operator_codes[0]->builtin_code = -4; }),
                  {"operator code 0", "negative"});
  // Codes above 127: the byte holds the placeholder, builtin_code the op.
  const auto bytes = Mutated([](tflite::ModelT& m) {
    m.operator_codes[1]->deprecated_builtin_code = 127;
    m.operator_codes[1]->builtin_code = static_cast<int32_t>(BuiltinOp::kGelu);
    m.subgraphs[0]->operators[1]->builtin_options.Reset();
  });
  const auto model = ReadModelBuffer(bytes.data(), bytes.size(), "gelu.tflite");
  EXPECT_EQ(model->operator_codes[1].builtin, BuiltinOp::kGelu);
  EXPECT_EQ(model->OpName(model->subgraphs[0].operators[1]), "GELU");
}

TEST(ModelReaderBadInput, OptionsMismatchAndBadEnums) {
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    auto& options = m.subgraphs[0]->operators[0]->builtin_options;
                    options.Reset();
                    options.Set(tflite::SoftmaxOptionsT{});
                  }),
                  {"operator 0 (CONV_2D)", "SoftmaxOptions", "expected Conv2DOptions"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->operators[0]->builtin_options.AsConv2DOptions()->padding =
                        static_cast<tflite::Padding>(9);
                  }),
                  {"operator 0 (CONV_2D)", "padding 9"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->operators[0]->builtin_options.AsConv2DOptions()
                        ->fused_activation_function = static_cast<tflite::ActivationFunctionType>(42);
                  }),
                  {"operator 0 (CONV_2D)", "activation 42"});
}

// builtin_options_type names a table that is absent (the FlatBuffers
// verifier accepts that): a clear error, not a null dereference.
TEST(ModelReaderBadInput, OptionsTypeWithoutTable) {
  std::vector<uint8_t> bytes = SmallModelBytes();
  const tflite::Operator* op = tflite::GetModel(bytes.data())->subgraphs()->Get(0)->operators()->Get(0);
  ASSERT_NE(op->builtin_options(), nullptr);
  // Zero the field's vtable entry: the field reads as absent, its type stays.
  const uint8_t* table = reinterpret_cast<const uint8_t*>(op);
  const uint8_t* vtable = table - flatbuffers::ReadScalar<flatbuffers::soffset_t>(table);
  ASSERT_GT(flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable),
            tflite::Operator::VT_BUILTIN_OPTIONS);
  const size_t entry = static_cast<size_t>(vtable - bytes.data()) + tflite::Operator::VT_BUILTIN_OPTIONS;
  bytes[entry] = 0;
  bytes[entry + 1] = 0;
  ASSERT_EQ(tflite::GetModel(bytes.data())->subgraphs()->Get(0)->operators()->Get(0)->builtin_options(),
            nullptr);
  ExpectReadError(bytes, {"operator 0 (CONV_2D)", "Conv2DOptions", "options table is missing"});
}

TEST(ModelReaderBadInput, UnknownOptionsAreCarriedAsUnparsed) {
  // An op whose options delegato does not interpret (EMBEDDING_LOOKUP_SPARSE) loads, flagged.
  const auto bytes = Mutated([](tflite::ModelT& m) {
    const auto op = BuiltinOp::kEmbeddingLookupSparse;
    m.operator_codes[1]->deprecated_builtin_code = static_cast<int8_t>(op);
    m.operator_codes[1]->builtin_code = static_cast<int32_t>(op);
    auto& options = m.subgraphs[0]->operators[1]->builtin_options;
    options.Reset();
    options.Set(tflite::EmbeddingLookupSparseOptionsT{});
  });
  const auto model = ReadModelBuffer(bytes.data(), bytes.size(), "lstm.tflite");
  EXPECT_TRUE(model->subgraphs[0].operators[1].unparsed_options);
  ExpectError([&] { WriteModel(*model); },
              {"operator 1 (EMBEDDING_LOOKUP_SPARSE)", "not parsed"});
}

TEST(ModelReaderBadInput, SignatureAndSubgraphs) {
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.signature_defs[0]->subgraph_index = 3; }),
                  {"signature 0 (\"serving_default\")", "subgraph 3"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.signature_defs[0]->outputs[0]->tensor_index = 40; }),
                  {"signature 0", "output \"y\"", "tensor 40"});
  ExpectReadError(Mutated([](tflite::ModelT& m) { m.subgraphs.clear(); }), {"no subgraph"});
}

TEST(ModelReaderBadInput, BufferOffsetsPastTheEnd) {
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.buffers[1]->data.clear();
                    m.buffers[1]->offset = 1u << 20;
                    m.buffers[1]->size = 72;
                  }),
                  {"buffer 1", "past the end"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.buffers[1]->data.clear();
                    m.buffers[1]->offset = 16;
                    m.buffers[1]->size = ~uint64_t{0} - 8;
                  }),
                  {"buffer 1", "past the end"});
  ExpectReadError(Mutated([](tflite::ModelT& m) {
                    m.subgraphs[0]->operators[0]->large_custom_options_offset = 1u << 30;
                    m.subgraphs[0]->operators[0]->large_custom_options_size = 4;
                  }),
                  {"operator 0 (CONV_2D)", "large custom options", "past the end"});
}

// Buffers stored past the FlatBuffer (offset/size) are read from the file.
TEST(ModelReaderBadInput, BufferStoredByOffset) {
  auto bytes = Mutated([](tflite::ModelT& m) {
    m.buffers[1]->data.clear();
    m.buffers[1]->offset = 0;  // patched below, once the FlatBuffer size is known
    m.buffers[1]->size = 72;
  });
  // Re-pack with the offset pointing at the end of the FlatBuffer.
  std::unique_ptr<tflite::ModelT> model(tflite::GetModel(bytes.data())->UnPack());
  const size_t flatbuffer_size = bytes.size() + 64;  // upper bound once offset is set
  model->buffers[1]->offset = flatbuffer_size;
  flatbuffers::FlatBufferBuilder fbb;
  tflite::FinishModelBuffer(fbb, tflite::Model::Pack(fbb, model.get()));
  std::vector<uint8_t> file(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  ASSERT_LE(file.size(), flatbuffer_size);
  file.resize(flatbuffer_size);
  for (int i = 0; i < 72; ++i) file.push_back(static_cast<uint8_t>(i));
  const auto loaded = ReadModelBuffer(file.data(), file.size(), "offset.tflite");
  ASSERT_EQ(loaded->buffers[1].size(), 72u);
  EXPECT_EQ(loaded->buffers[1].bytes()[71], 71);
}

// ---------------------------------------------------------- mapped files

fs::path WriteTemp(const std::string& name, const std::vector<uint8_t>& bytes) {
  const fs::path path = fs::temp_directory_path() /
                        ("delegato_reader_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

// A file's buffers are views of its mapping (no copy); bytes given by the
// caller are copied. Dropping the mapping's resident pages changes nothing a
// reader sees; asking to drop memory the mapping does not hold does nothing.
TEST(ModelReader, MappedFileBuffersAreViewsThatSurviveRelease) {
  const std::vector<uint8_t> bytes = SmallModelBytes();
  const fs::path path = WriteTemp("small.tflite", bytes);
  const auto mapped = ReadModelFile(path.string());
  fs::remove(path);  // the mapping keeps the file's bytes
  const auto copied = ReadModelBuffer(bytes.data(), bytes.size(), "small.tflite");
  ASSERT_NE(mapped->mapping, nullptr);
  EXPECT_EQ(copied->mapping, nullptr);
  ASSERT_EQ(mapped->buffers.size(), copied->buffers.size());
  for (size_t b = 0; b < mapped->buffers.size(); ++b) {
    if (copied->buffers[b].empty()) continue;
    EXPECT_TRUE(mapped->buffers[b].is_view()) << b;
    EXPECT_FALSE(copied->buffers[b].is_view()) << b;
  }
  ReleaseMappedPages(*mapped, mapped->mapping->data, mapped->mapping->size);
  for (size_t b = 0; b < mapped->buffers.size(); ++b)
    EXPECT_TRUE(std::ranges::equal(mapped->buffers[b].bytes(), copied->buffers[b].bytes())) << b;

  std::vector<uint8_t> heap(5 * 4096, 7);
  ReleaseMappedPages(*mapped, heap.data(), heap.size());
  EXPECT_EQ(std::count(heap.begin(), heap.end(), 7), static_cast<std::ptrdiff_t>(heap.size()));
}

// Converters align buffers to 4 bytes, not always more: a view that a
// tensor's elements would read misaligned is copied instead (the int32 bias
// 2 bytes off); one aligned to its element size stays a view.
TEST(ModelReader, MisalignedBufferViewsAreCopied) {
  for (const int shift : {2, 4}) {
    auto bytes = Mutated([](tflite::ModelT& m) {
      m.buffers[2]->data.clear();
      m.buffers[2]->offset = 0;  // patched below
      m.buffers[2]->size = 16;
    });
    std::unique_ptr<tflite::ModelT> model(tflite::GetModel(bytes.data())->UnPack());
    const size_t flatbuffer_size = (bytes.size() + 64) / 16 * 16;
    model->buffers[2]->offset = flatbuffer_size + shift;
    flatbuffers::FlatBufferBuilder fbb;
    tflite::FinishModelBuffer(fbb, tflite::Model::Pack(fbb, model.get()));
    std::vector<uint8_t> file(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    ASSERT_LE(file.size(), flatbuffer_size);
    file.resize(flatbuffer_size + shift);
    for (int i = 0; i < 16; ++i) file.push_back(static_cast<uint8_t>(i + 1));
    const fs::path path = WriteTemp("shifted.tflite", file);
    const auto loaded = ReadModelFile(path.string());
    fs::remove(path);
    const BufferDef& bias = loaded->buffers[2];
    EXPECT_EQ(bias.is_view(), shift == 4) << shift;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bias.data()) % 4, 0u) << shift;
    ASSERT_EQ(bias.size(), 16u);
    EXPECT_EQ(bias.bytes()[15], 16);
  }
}

// Every constant of a real converter's file is readable as its type in place.
TEST(ModelReader, SharedModelConstantsAreAlignedToTheirType) {
  const std::vector<fs::path> models = SharedModels();
  if (models.empty()) GTEST_SKIP() << "no shared models (set DELEGATO_SHARED_DIR)";
  for (const fs::path& path : models) {
    const auto model = ReadModelFile(path.string());
    for (const SubgraphDef& g : model->subgraphs)
      for (const TensorDef& t : g.tensors) {
        if (t.buffer == 0 || model->buffers[t.buffer].empty()) continue;
        const size_t alignment = std::min<size_t>(std::max<size_t>(DataTypeSize(t.type), 1), 16);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(model->buffers[t.buffer].data()) % alignment, 0u)
            << path.filename() << " tensor " << t.name;
      }
  }
}

TEST(ModelReader, OpNameForUnknownAndInvalidCodes) {
  ModelDef m;
  m.operator_codes = {{static_cast<BuiltinOp>(400), "", 1}, {BuiltinOp::kCustom, "MyOp", 1}};
  OperatorDef op;
  op.opcode_index = 0;
  EXPECT_EQ(m.OpName(op), "BUILTIN_400");
  op.opcode_index = 1;
  EXPECT_EQ(m.OpName(op), "MyOp");
  op.opcode_index = 5;
  EXPECT_NE(m.OpName(op).find("invalid"), std::string::npos);
}

}  // namespace
}  // namespace delegato
