// The .tflite writer: read -> write -> read gives an equal ModelDef for every
// shared model; every params struct survives a round trip; the file carries
// what LiteRT expects (both op code fields, 16-byte aligned buffers); models
// the writer cannot represent are refused with a clear error.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "model/model.h"
#include "tflite_schema_generated.h"
#include "tools/commands.h"
#include "test_util.h"

namespace delegato {
namespace {

namespace fs = std::filesystem;
using testing::SharedDir;

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

void ExpectQuantizationEqual(const Quantization& a, const Quantization& b) {
  EXPECT_EQ(a.scale, b.scale);
  EXPECT_EQ(a.zero_point, b.zero_point);
  EXPECT_EQ(a.quantized_dimension, b.quantized_dimension);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
}

// Field-by-field equality of everything but the params payload, which is
// compared by serializing both models (the writer emits every params field).
void ExpectModelsEqual(const ModelDef& a, const ModelDef& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.description, b.description);
  ASSERT_EQ(a.operator_codes.size(), b.operator_codes.size());
  for (size_t i = 0; i < a.operator_codes.size(); ++i) {
    EXPECT_EQ(a.operator_codes[i].builtin, b.operator_codes[i].builtin);
    EXPECT_EQ(a.operator_codes[i].custom_code, b.operator_codes[i].custom_code);
    EXPECT_EQ(a.operator_codes[i].version, b.operator_codes[i].version);
  }
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i)
    EXPECT_TRUE(std::ranges::equal(a.buffers[i].bytes(), b.buffers[i].bytes())) << i;
  ASSERT_EQ(a.subgraphs.size(), b.subgraphs.size());
  for (size_t s = 0; s < a.subgraphs.size(); ++s) {
    const SubgraphDef& ga = a.subgraphs[s];
    const SubgraphDef& gb = b.subgraphs[s];
    EXPECT_EQ(ga.name, gb.name);
    EXPECT_EQ(ga.inputs, gb.inputs);
    EXPECT_EQ(ga.outputs, gb.outputs);
    ASSERT_EQ(ga.tensors.size(), gb.tensors.size());
    for (size_t t = 0; t < ga.tensors.size(); ++t) {
      SCOPED_TRACE(::testing::Message() << "tensor " << t);
      const TensorDef& ta = ga.tensors[t];
      const TensorDef& tb = gb.tensors[t];
      EXPECT_EQ(ta.name, tb.name);
      EXPECT_EQ(ta.type, tb.type);
      EXPECT_EQ(ta.shape, tb.shape);
      EXPECT_EQ(ta.shape_signature, tb.shape_signature);
      EXPECT_EQ(ta.buffer, tb.buffer);
      EXPECT_EQ(ta.is_variable, tb.is_variable);
      EXPECT_EQ(ta.has_sparsity, tb.has_sparsity);
      ExpectQuantizationEqual(ta.quantization, tb.quantization);
    }
    ASSERT_EQ(ga.operators.size(), gb.operators.size());
    for (size_t o = 0; o < ga.operators.size(); ++o) {
      SCOPED_TRACE(::testing::Message() << "operator " << o);
      const OperatorDef& oa = ga.operators[o];
      const OperatorDef& ob = gb.operators[o];
      EXPECT_EQ(oa.opcode_index, ob.opcode_index);
      EXPECT_EQ(oa.inputs, ob.inputs);
      EXPECT_EQ(oa.outputs, ob.outputs);
      EXPECT_EQ(oa.intermediates, ob.intermediates);
      EXPECT_EQ(oa.params.index(), ob.params.index());
      EXPECT_EQ(oa.unparsed_options, ob.unparsed_options);
      EXPECT_EQ(oa.custom_options, ob.custom_options);
    }
  }
  ASSERT_EQ(a.metadata.size(), b.metadata.size());
  for (size_t i = 0; i < a.metadata.size(); ++i) {
    EXPECT_EQ(a.metadata[i].name, b.metadata[i].name);
    EXPECT_EQ(a.metadata[i].buffer, b.metadata[i].buffer);
  }
  ASSERT_EQ(a.signature_defs.size(), b.signature_defs.size());
  for (size_t i = 0; i < a.signature_defs.size(); ++i) {
    const SignatureDefinition& sa = a.signature_defs[i];
    const SignatureDefinition& sb = b.signature_defs[i];
    EXPECT_EQ(sa.key, sb.key);
    EXPECT_EQ(sa.subgraph_index, sb.subgraph_index);
    ASSERT_EQ(sa.inputs.size(), sb.inputs.size());
    ASSERT_EQ(sa.outputs.size(), sb.outputs.size());
    for (size_t k = 0; k < sa.inputs.size(); ++k) {
      EXPECT_EQ(sa.inputs[k].name, sb.inputs[k].name);
      EXPECT_EQ(sa.inputs[k].tensor_index, sb.inputs[k].tensor_index);
    }
    for (size_t k = 0; k < sa.outputs.size(); ++k) {
      EXPECT_EQ(sa.outputs[k].name, sb.outputs[k].name);
      EXPECT_EQ(sa.outputs[k].tensor_index, sb.outputs[k].tensor_index);
    }
  }
  // Same bytes when written again: covers every params field.
  EXPECT_EQ(WriteModel(a), WriteModel(b));
}

void ExpectBuffersAligned(const std::vector<uint8_t>& bytes) {
  const tflite::Model* model = tflite::GetModel(bytes.data());
  ASSERT_NE(model->buffers(), nullptr);
  for (uint32_t i = 0; i < model->buffers()->size(); ++i) {
    const auto* data = model->buffers()->Get(i)->data();
    if (!data || data->size() == 0) continue;
    EXPECT_EQ((data->data() - bytes.data()) % 16, 0) << "buffer " << i;
  }
}

TEST(ModelWriter, EverySharedModelRoundTrips) {
  const auto models = SharedModels();
  if (models.empty()) GTEST_SKIP() << "no shared models under " << SharedDir() / "models";
  for (const fs::path& path : models) {
    SCOPED_TRACE(path.string());
    const auto original = ReadModelFile(path.string());
    std::vector<uint8_t> bytes;
    ASSERT_NO_THROW(bytes = WriteModel(*original));
    const auto again = ReadModelBuffer(bytes.data(), bytes.size(), "written.tflite");
    ExpectModelsEqual(*original, *again);
    ExpectBuffersAligned(bytes);
    // Both op code fields are written: old readers look at the byte only.
    const tflite::Model* fb = tflite::GetModel(bytes.data());
    for (uint32_t i = 0; i < fb->operator_codes()->size(); ++i) {
      const auto* code = fb->operator_codes()->Get(i);
      const int32_t builtin = static_cast<int32_t>(original->operator_codes[i].builtin);
      EXPECT_EQ(code->builtin_code(), builtin);
      EXPECT_EQ(code->deprecated_builtin_code(), std::min(builtin, 127));
    }
  }
}

// One op of every params kind, with non-default values everywhere.
ModelDef EveryParamsModel() {
  ModelDef m;
  m.buffers.resize(1);
  SubgraphDef g;
  TensorDef t;
  t.name = "x";
  t.shape = {1, 2};
  g.tensors = {t, t};
  g.inputs = {0};
  g.outputs = {1};
  auto add = [&](BuiltinOp op, OpParams params) {
    m.operator_codes.push_back({op, "", 2});
    OperatorDef def;
    def.opcode_index = static_cast<uint32_t>(m.operator_codes.size() - 1);
    def.inputs = {0};
    def.outputs = {1};
    def.params = std::move(params);
    g.operators.push_back(std::move(def));
  };
  add(BuiltinOp::kConv2d, Conv2DParams{Padding::kValid, 2, 3, 4, 5, Activation::kRelu6, DataType::kInt64});
  add(BuiltinOp::kDepthwiseConv2d, DepthwiseConv2DParams{Padding::kValid, 2, 3, 4, 5, 6, Activation::kRelu});
  add(BuiltinOp::kFullyConnected, FullyConnectedParams{Activation::kReluN1To1, 1, true, true, DataType::kInt32});
  add(BuiltinOp::kMaxPool2d, Pool2DParams{Padding::kValid, 2, 3, 4, 5, Activation::kTanh});
  add(BuiltinOp::kAdd, ElementwiseParams{Activation::kRelu, false});
  add(BuiltinOp::kSub, ElementwiseParams{Activation::kRelu6, false});
  add(BuiltinOp::kMul, ElementwiseParams{Activation::kRelu, true});
  add(BuiltinOp::kDiv, ElementwiseParams{Activation::kRelu6, true});
  add(BuiltinOp::kSoftmax, SoftmaxParams{0.25f});
  add(BuiltinOp::kConcatenation, ConcatenationParams{-1, Activation::kRelu});
  add(BuiltinOp::kReshape, ReshapeParams{{2, -1}, true});
  add(BuiltinOp::kReshape, ReshapeParams{{}, false});
  add(BuiltinOp::kReshape, ReshapeParams{{}, true});
  add(BuiltinOp::kSplit, SplitParams{3});
  add(BuiltinOp::kSplitV, SplitParams{4});
  add(BuiltinOp::kMean, ReducerParams{true});
  add(BuiltinOp::kReduceMax, ReducerParams{true});
  add(BuiltinOp::kResizeBilinear, ResizeParams{true, false});
  add(BuiltinOp::kResizeNearestNeighbor, ResizeParams{false, true});
  add(BuiltinOp::kArgMax, ArgMinMaxParams{DataType::kInt32});
  add(BuiltinOp::kArgMin, ArgMinMaxParams{DataType::kInt32});
  add(BuiltinOp::kCast, CastParams{DataType::kInt8, DataType::kFloat32, true});
  add(BuiltinOp::kCast, CastParams{});
  add(BuiltinOp::kPack, PackParams{3, 1});
  add(BuiltinOp::kUnpack, UnpackParams{2, -1});
  add(BuiltinOp::kSqueeze, SqueezeParams{{0, 2}});
  add(BuiltinOp::kGather, GatherParams{1, 1});
  add(BuiltinOp::kStridedSlice, StridedSliceParams{1, 2, 4, 8, 16, true});
  add(BuiltinOp::kLeakyRelu, LeakyReluParams{0.125f});
  add(BuiltinOp::kTransposeConv, TransposeConvParams{Padding::kValid, 2, 3, Activation::kRelu});
  add(BuiltinOp::kSvdf, SvdfParams{2, Activation::kRelu, true});
  add(BuiltinOp::kUnidirectionalSequenceLstm,
      SequenceLstmParams{Activation::kTanh, 1.5f, 2.5f, true, true, true});
  add(BuiltinOp::kConv3d, Conv3DParams{Padding::kValid, 2, 3, 4, Activation::kRelu6, 5, 6, 7});
  for (BuiltinOp op : {BuiltinOp::kPad, BuiltinOp::kPadv2, BuiltinOp::kTranspose,
                       BuiltinOp::kQuantize, BuiltinOp::kDequantize, BuiltinOp::kFloorDiv,
                       BuiltinOp::kGatherNd, BuiltinOp::kHardSwish}) {
    add(op, EmptyParams{});
  }
  add(BuiltinOp::kLogistic, std::monostate{});
  add(BuiltinOp::kGelu, std::monostate{});  // code above 127
  m.operator_codes.push_back({BuiltinOp::kCustom, "MyCustom", 1});
  OperatorDef custom;
  custom.opcode_index = static_cast<uint32_t>(m.operator_codes.size() - 1);
  custom.inputs = {0, -1};
  custom.outputs = {1};
  custom.custom_options = {1, 2, 3, 4, 5};
  g.operators.push_back(custom);
  m.subgraphs.push_back(std::move(g));
  return m;
}

template <class P>
const P& ParamsOf(const ModelDef& m, size_t op) {
  const P* p = std::get_if<P>(&m.subgraphs[0].operators[op].params);
  if (!p) throw Error(StrCat("operator ", op, " has params index ",
                             m.subgraphs[0].operators[op].params.index()));
  return *p;
}

TEST(ModelWriter, EveryParamsKindRoundTrips) {
  const ModelDef original = EveryParamsModel();
  const auto bytes = WriteModel(original);
  const auto read = ReadModelBuffer(bytes.data(), bytes.size(), "params.tflite");
  ExpectModelsEqual(original, *read);
  const ModelDef& m = *read;
  size_t i = 0;
  {
    const auto& p = ParamsOf<Conv2DParams>(m, i++);
    EXPECT_EQ(p.padding, Padding::kValid);
    EXPECT_EQ(p.stride_w, 2);
    EXPECT_EQ(p.stride_h, 3);
    EXPECT_EQ(p.dilation_w, 4);
    EXPECT_EQ(p.dilation_h, 5);
    EXPECT_EQ(p.activation, Activation::kRelu6);
    EXPECT_EQ(p.quantized_bias_type, DataType::kInt64);
  }
  {
    const auto& p = ParamsOf<DepthwiseConv2DParams>(m, i++);
    EXPECT_EQ(p.stride_w, 2);
    EXPECT_EQ(p.stride_h, 3);
    EXPECT_EQ(p.depth_multiplier, 4);
    EXPECT_EQ(p.dilation_w, 5);
    EXPECT_EQ(p.dilation_h, 6);
    EXPECT_EQ(p.activation, Activation::kRelu);
  }
  {
    const auto& p = ParamsOf<FullyConnectedParams>(m, i++);
    EXPECT_EQ(p.activation, Activation::kReluN1To1);
    EXPECT_EQ(p.weights_format, 1);
    EXPECT_TRUE(p.keep_num_dims);
    EXPECT_TRUE(p.asymmetric_quantize_inputs);
    EXPECT_EQ(p.quantized_bias_type, DataType::kInt32);
  }
  {
    const auto& p = ParamsOf<Pool2DParams>(m, i++);
    EXPECT_EQ(p.filter_w, 4);
    EXPECT_EQ(p.filter_h, 5);
    EXPECT_EQ(p.activation, Activation::kTanh);
  }
  EXPECT_FALSE(ParamsOf<ElementwiseParams>(m, i++).pot_scale_int16);  // ADD
  EXPECT_EQ(ParamsOf<ElementwiseParams>(m, i++).activation, Activation::kRelu6);  // SUB
  EXPECT_EQ(ParamsOf<ElementwiseParams>(m, i++).activation, Activation::kRelu);   // MUL
  EXPECT_EQ(ParamsOf<ElementwiseParams>(m, i++).activation, Activation::kRelu6);  // DIV
  EXPECT_EQ(ParamsOf<SoftmaxParams>(m, i++).beta, 0.25f);
  EXPECT_EQ(ParamsOf<ConcatenationParams>(m, i++).axis, -1);
  {
    const auto& p = ParamsOf<ReshapeParams>(m, i++);
    EXPECT_TRUE(p.has_new_shape);
    EXPECT_EQ(p.new_shape, (std::vector<int32_t>{2, -1}));
    EXPECT_FALSE(ParamsOf<ReshapeParams>(m, i++).has_new_shape);
    EXPECT_TRUE(ParamsOf<ReshapeParams>(m, i++).has_new_shape);  // present but empty
  }
  EXPECT_EQ(ParamsOf<SplitParams>(m, i++).num_splits, 3);
  EXPECT_EQ(ParamsOf<SplitParams>(m, i++).num_splits, 4);
  EXPECT_TRUE(ParamsOf<ReducerParams>(m, i++).keep_dims);
  EXPECT_TRUE(ParamsOf<ReducerParams>(m, i++).keep_dims);
  EXPECT_TRUE(ParamsOf<ResizeParams>(m, i++).align_corners);
  EXPECT_TRUE(ParamsOf<ResizeParams>(m, i++).half_pixel_centers);
  EXPECT_EQ(ParamsOf<ArgMinMaxParams>(m, i++).output_type, DataType::kInt32);
  EXPECT_EQ(ParamsOf<ArgMinMaxParams>(m, i++).output_type, DataType::kInt32);
  {
    const auto& p = ParamsOf<CastParams>(m, i++);
    EXPECT_TRUE(p.has_types);
    EXPECT_EQ(p.in_type, DataType::kInt8);
    EXPECT_FALSE(ParamsOf<CastParams>(m, i++).has_types);
  }
  EXPECT_EQ(ParamsOf<PackParams>(m, i).values_count, 3);
  EXPECT_EQ(ParamsOf<PackParams>(m, i++).axis, 1);
  EXPECT_EQ(ParamsOf<UnpackParams>(m, i++).axis, -1);
  EXPECT_EQ(ParamsOf<SqueezeParams>(m, i++).squeeze_dims, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(ParamsOf<GatherParams>(m, i++).batch_dims, 1);
  {
    const auto& p = ParamsOf<StridedSliceParams>(m, i++);
    EXPECT_EQ(p.begin_mask, 1);
    EXPECT_EQ(p.end_mask, 2);
    EXPECT_EQ(p.ellipsis_mask, 4);
    EXPECT_EQ(p.new_axis_mask, 8);
    EXPECT_EQ(p.shrink_axis_mask, 16);
    EXPECT_TRUE(p.offset);
  }
  EXPECT_EQ(ParamsOf<LeakyReluParams>(m, i++).alpha, 0.125f);
  EXPECT_EQ(ParamsOf<TransposeConvParams>(m, i++).stride_h, 3);
  EXPECT_EQ(ParamsOf<SvdfParams>(m, i++).rank, 2);
  {
    const auto& p = ParamsOf<SequenceLstmParams>(m, i++);
    EXPECT_EQ(p.cell_clip, 1.5f);
    EXPECT_EQ(p.proj_clip, 2.5f);
    EXPECT_TRUE(p.time_major);
    EXPECT_TRUE(p.diagonal_recurrent_tensors);
  }
  {
    const auto& p = ParamsOf<Conv3DParams>(m, i++);
    EXPECT_EQ(p.padding, Padding::kValid);
    EXPECT_EQ(p.stride_d, 2);
    EXPECT_EQ(p.stride_w, 3);
    EXPECT_EQ(p.stride_h, 4);
    EXPECT_EQ(p.activation, Activation::kRelu6);
    EXPECT_EQ(p.dilation_d, 5);
    EXPECT_EQ(p.dilation_w, 6);
    EXPECT_EQ(p.dilation_h, 7);
  }
  for (int k = 0; k < 8; ++k) EXPECT_NO_THROW(ParamsOf<EmptyParams>(m, i++));
  EXPECT_NO_THROW(ParamsOf<std::monostate>(m, i++));
  EXPECT_EQ(m.operator_codes[m.subgraphs[0].operators[i].opcode_index].builtin, BuiltinOp::kGelu);
  ++i;
  EXPECT_EQ(m.OpName(m.subgraphs[0].operators[i]), "MyCustom");
  EXPECT_EQ(m.subgraphs[0].operators[i].custom_options, (std::vector<uint8_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(m.subgraphs[0].operators[i].inputs, (std::vector<int32_t>{0, -1}));

  // Codes above 127 keep the placeholder in the byte-sized field.
  const tflite::Model* fb = tflite::GetModel(bytes.data());
  bool saw_gelu = false;
  for (const auto* code : *fb->operator_codes()) {
    if (code->builtin_code() == static_cast<int32_t>(BuiltinOp::kGelu)) {
      saw_gelu = true;
      EXPECT_EQ(code->deprecated_builtin_code(), 127);
    }
  }
  EXPECT_TRUE(saw_gelu);
}

void ExpectWriteError(const ModelDef& model, const std::vector<std::string>& fragments) {
  try {
    WriteModel(model);
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    for (const auto& fragment : fragments) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
}

TEST(ModelWriter, RefusesWhatItCannotRepresent) {
  {
    ModelDef m = EveryParamsModel();
    m.subgraphs[0].operators[4].params = Conv2DParams{};  // on ADD
    ExpectWriteError(m, {"operator 4 (ADD)", "Conv2DParams", "AddOptions"});
  }
  {
    ModelDef m = EveryParamsModel();
    m.subgraphs[0].operators[0].params = EmptyParams{};  // on CONV_2D
    ExpectWriteError(m, {"operator 0 (CONV_2D)", "empty params"});
  }
  {
    ModelDef m = EveryParamsModel();
    m.subgraphs[0].operators[2].unparsed_options = true;
    ExpectWriteError(m, {"operator 2 (FULLY_CONNECTED)", "not parsed"});
  }
  {
    ModelDef m = EveryParamsModel();
    m.subgraphs[0].tensors[1].has_sparsity = true;
    ExpectWriteError(m, {"tensor 1", "sparse"});
  }
  {
    ModelDef m = EveryParamsModel();
    m.subgraphs[0].operators[0].opcode_index = 999;
    ExpectWriteError(m, {"operator 0", "opcode_index 999"});
  }
  {
    ModelDef m = EveryParamsModel();
    m.operator_codes.back().custom_code.clear();
    ExpectWriteError(m, {"CUSTOM", "custom code"});
  }
}

TEST(ModelWriter, WriteModelFileReplacesAtomically) {
  const fs::path dir = fs::temp_directory_path() / ("delegato_writer_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / "out.tflite";
  {
    std::ofstream old(path);
    old << "old content";
  }
  WriteModelFile(EveryParamsModel(), path.string());
  const auto read = ReadModelFile(path.string());
  EXPECT_EQ(read->subgraphs[0].operators.size(), EveryParamsModel().subgraphs[0].operators.size());
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);  // no temporary left behind
  EXPECT_THROW(WriteModelFile(EveryParamsModel(), (dir / "missing_dir" / "x.tflite").string()),
               Error);
  fs::remove_all(dir);
}

TEST(ConvertCommand, ConvertsAndReportsErrors) {
  const fs::path dir = fs::temp_directory_path() / ("delegato_convert_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path in = dir / "in.tflite";
  const fs::path out = dir / "out.tflite";
  WriteModelFile(EveryParamsModel(), in.string());
  EXPECT_EQ(tools::CmdConvert({"--graph", in.string(), "-o", out.string()}), 0);
  EXPECT_EQ(WriteModel(*ReadModelFile(in.string())), WriteModel(*ReadModelFile(out.string())));
  EXPECT_EQ(tools::CmdConvert({"--graph=" + in.string(), "--output=" + out.string()}), 0);
  EXPECT_EQ(tools::CmdConvert({"--graph", (dir / "nope.tflite").string(), "-o", out.string()}), 1);
  EXPECT_EQ(tools::CmdConvert({"--graph", in.string()}), 2);
  EXPECT_EQ(tools::CmdConvert({"-o", out.string()}), 2);
  EXPECT_EQ(tools::CmdConvert({"--bogus"}), 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace delegato
