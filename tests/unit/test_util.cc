#include "test_util.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "model/op_version.h"
#include "tools/npy.h"

namespace delegato::testing {

Quantization Q(float scale, int64_t zero_point) {
  Quantization q;
  q.scale = {scale};
  q.zero_point = {zero_point};
  return q;
}

Quantization QPerAxis(std::vector<float> scales, std::vector<int64_t> zero_points, int32_t axis) {
  Quantization q;
  q.scale = std::move(scales);
  q.zero_point = std::move(zero_points);
  q.quantized_dimension = axis;
  return q;
}

OpModel::OpModel() : model_(std::make_shared<ModelDef>()) {
  model_->subgraphs.emplace_back();
  model_->buffers.emplace_back();  // buffer 0: the empty sentinel
}

namespace {
int AppendTensor(ModelDef& model, int subgraph, DataType type, std::vector<int32_t> dims,
                 Quantization q, std::string name) {
  SubgraphDef& graph = model.subgraphs.at(subgraph);
  TensorDef t;
  t.type = type;
  t.shape = std::move(dims);
  t.quantization = std::move(q);
  if (name.empty()) {
    // Formatted, not "t" + to_string(...): GCC 12 warns (-Wrestrict, a false
    // positive) on the inlined string concatenation.
    char text[32];
    std::snprintf(text, sizeof(text), "t%zu", graph.tensors.size());
    name = text;
  }
  t.name = std::move(name);
  graph.tensors.push_back(std::move(t));
  return static_cast<int>(graph.tensors.size()) - 1;
}
}  // namespace

int OpModel::AddSubgraph() {
  model_->subgraphs.emplace_back();
  current_ = static_cast<int>(model_->subgraphs.size()) - 1;
  return current_;
}

int OpModel::AddInput(DataType type, std::vector<int32_t> dims, Quantization q, std::string name) {
  int t = AppendTensor(*model_, current_, type, std::move(dims), std::move(q), std::move(name));
  model_->subgraphs.at(current_).inputs.push_back(t);
  return t;
}

int OpModel::AddOutput(DataType type, Quantization q, std::vector<int32_t> dims,
                       std::string name) {
  int t = AppendTensor(*model_, current_, type, std::move(dims), std::move(q), std::move(name));
  model_->subgraphs.at(current_).outputs.push_back(t);
  return t;
}

int OpModel::AddTensor(DataType type, Quantization q, std::vector<int32_t> dims) {
  return AppendTensor(*model_, current_, type, std::move(dims), std::move(q), "");
}

int OpModel::AddConstBytes(DataType type, std::vector<int32_t> dims, std::vector<uint8_t> bytes,
                           Quantization q) {
  int t = AppendTensor(*model_, current_, type, std::move(dims), std::move(q), "");
  model_->buffers.push_back(BufferDef{std::move(bytes)});
  model_->subgraphs.at(current_).tensors[t].buffer = static_cast<uint32_t>(model_->buffers.size() - 1);
  return t;
}

namespace {
uint32_t OpcodeIndex(ModelDef& model, BuiltinOp op, const std::string& custom_code, int version) {
  for (size_t i = 0; i < model.operator_codes.size(); ++i) {
    const OperatorCodeDef& c = model.operator_codes[i];
    if (c.builtin == op && c.custom_code == custom_code && c.version == version)
      return static_cast<uint32_t>(i);
  }
  model.operator_codes.push_back(OperatorCodeDef{op, custom_code, version});
  return static_cast<uint32_t>(model.operator_codes.size() - 1);
}
}  // namespace

void OpModel::AddOp(BuiltinOp op, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                    OpParams params, int version) {
  OperatorDef def;
  def.inputs = std::move(inputs);
  def.outputs = std::move(outputs);
  def.params = std::move(params);
  if (version == kConverterVersion) version = StampedOpVersion(op, model_->subgraphs.at(current_), def);
  def.opcode_index = OpcodeIndex(*model_, op, "", version);
  model_->subgraphs.at(current_).operators.push_back(std::move(def));
}

void OpModel::AddCustomOp(std::string custom_code, std::vector<int32_t> inputs,
                          std::vector<int32_t> outputs, std::vector<uint8_t> custom_options,
                          int version) {
  OperatorDef def;
  def.opcode_index = OpcodeIndex(*model_, BuiltinOp::kCustom, custom_code, version);
  def.inputs = std::move(inputs);
  def.outputs = std::move(outputs);
  def.custom_options = std::move(custom_options);
  model_->subgraphs.at(current_).operators.push_back(std::move(def));
}

Status OpModel::TryBuild(int num_threads, KernelSet kernels) {
  num_threads_ = num_threads;
  kernels_ = kernels;
  dump_dir_.clear();
  dump_invokes_ = 0;
  StampOpVersions(*model_, VersionStamp::kRaise);
  Status status;
  InterpreterOptions options;
  options.num_threads = num_threads;
  options.kernels = kernels;
  interpreter_ = Interpreter::Create(model_, options, &status);
  if (!status.ok()) return status;
  return interpreter_->AllocateTensors();
}

void OpModel::Build(int num_threads, KernelSet kernels) {
  Status status = TryBuild(num_threads, kernels);
  ASSERT_TRUE(status.ok()) << status.message();
}

Status OpModel::TryInvoke() {
  static const char* const dump_root = std::getenv("DELEGATO_OP_DUMP_DIR");
  if (dump_root == nullptr || *dump_root == '\0') return interpreter_->Invoke();
  // Inputs are captured before Invoke: the replay must see what the kernels saw.
  std::vector<std::vector<uint8_t>> inputs;
  for (int i = 0; i < interpreter_->num_inputs(); ++i) {
    const TensorView view = interpreter_->input(i);
    const auto* data = static_cast<const uint8_t*>(view.data);
    inputs.emplace_back(data, data + (data != nullptr ? view.bytes : 0));
  }
  Status status = interpreter_->Invoke();
  if (status.ok()) DumpInvoke(inputs);
  return status;
}

namespace {

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonTensor(const TensorView& view) {
  std::ostringstream out;
  out << "{\"name\": " << JsonString(view.name) << ", \"type\": " << JsonString(DataTypeName(view.type))
      << ", \"shape\": [";
  for (size_t d = 0; d < view.dims.size(); ++d) out << (d ? ", " : "") << view.dims[d];
  out << "]}";
  return out.str();
}

// "Suite.Test/param" -> a directory-name-safe "Suite.Test_param".
std::string SafeName(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return name;
}

}  // namespace

void OpModel::DumpInvoke(const std::vector<std::vector<uint8_t>>& inputs) {
  namespace fs = std::filesystem;
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string suite = info != nullptr ? info->test_suite_name() : "no_test";
  const std::string test = info != nullptr ? info->name() : "no_test";
  if (dump_dir_.empty()) {
    // One directory per built interpreter: Invokes on it are replayed in order
    // on one LiteRT interpreter, so stateful ops (variable tensors) compare too.
    static int counter = 0;
    char suffix[16];
    std::snprintf(suffix, sizeof(suffix), "_%03d", counter++);
    dump_dir_ = (fs::path(std::getenv("DELEGATO_OP_DUMP_DIR")) /
                 (SafeName(suite + "." + test) + suffix)).string();
    fs::remove_all(dump_dir_);
    fs::create_directories(dump_dir_);
    WriteModelFile(*model_, (fs::path(dump_dir_) / "model.tflite").string());
  }
  const fs::path invoke_dir = fs::path(dump_dir_) / ("invoke_" + std::to_string(dump_invokes_));
  fs::create_directories(invoke_dir);
  std::string error;
  try {
    for (int i = 0; i < interpreter_->num_inputs(); ++i) {
      const TensorView view = interpreter_->input(i);
      tools::WriteNpy((invoke_dir / ("input_" + std::to_string(i) + ".npy")).string(), view.type,
                      std::vector<int32_t>(view.dims.begin(), view.dims.end()),
                      inputs[i].data(), inputs[i].size());
    }
    for (int i = 0; i < interpreter_->num_outputs(); ++i) {
      const TensorView view = interpreter_->output(i);
      tools::WriteNpy((invoke_dir / ("output_" + std::to_string(i) + ".npy")).string(), view.type,
                      std::vector<int32_t>(view.dims.begin(), view.dims.end()), view.data,
                      view.data != nullptr ? view.bytes : 0);
    }
  } catch (const std::exception& e) {
    error = e.what();  // e.g. a tensor type .npy cannot hold: recorded, not replayed
  }
  ++dump_invokes_;

  std::ostringstream meta;
  meta << "{\n  \"suite\": " << JsonString(suite) << ",\n  \"test\": " << JsonString(test)
       << ",\n  \"ops\": [";
  // The ops of every subgraph (those IF, WHILE, CALL_ONCE call run too).
  bool first_op = true;
  for (const SubgraphDef& graph : model_->subgraphs)
    for (const OperatorDef& op : graph.operators) {
      // "needed": the version the node's types, shapes and options call for; a
      // case verifies its op's version only where the two agree.
      meta << (first_op ? "" : ", ") << "{\"name\": " << JsonString(model_->OpName(op))
           << ", \"version\": " << model_->operator_codes[op.opcode_index].version
           << ", \"needed\": " << MinimumOpVersion(*model_, graph, op) << "}";
      first_op = false;
    }
  meta << "],\n  \"kernels\": \"" << (kernels_ == KernelSet::kReference ? "reference" : "optimized")
       << "\",\n  \"num_threads\": " << num_threads_ << ",\n  \"invokes\": " << dump_invokes_
       << ",\n  \"inputs\": [";
  for (int i = 0; i < interpreter_->num_inputs(); ++i)
    meta << (i ? ", " : "") << JsonTensor(interpreter_->input(i));
  meta << "],\n  \"outputs\": [";
  for (int i = 0; i < interpreter_->num_outputs(); ++i)
    meta << (i ? ", " : "") << JsonTensor(interpreter_->output(i));
  meta << "]";
  if (!error.empty()) meta << ",\n  \"dump_error\": " << JsonString(error);
  meta << "\n}\n";
  std::ofstream(fs::path(dump_dir_) / "meta.json") << meta.str();
}

void OpModel::Invoke() {
  Status status = TryInvoke();
  ASSERT_TRUE(status.ok()) << status.message();
}

std::vector<int32_t> OpModel::GetOutputShape(int output) const {
  TensorView view = interpreter_->output(output);
  return std::vector<int32_t>(view.dims.begin(), view.dims.end());
}

template <class T>
std::vector<T> Quantize(const std::vector<float>& values, float scale, int32_t zero_point) {
  std::vector<T> out;
  out.reserve(values.size());
  for (float v : values) {
    const float q = std::round(v / scale) + static_cast<float>(zero_point);
    const float clamped = std::min<float>(std::max<float>(q, std::numeric_limits<T>::min()),
                                          std::numeric_limits<T>::max());
    out.push_back(static_cast<T>(clamped));
  }
  return out;
}

template <class T>
std::vector<float> Dequantize(const std::vector<T>& values, float scale, int32_t zero_point) {
  std::vector<float> out;
  out.reserve(values.size());
  for (T v : values) out.push_back(scale * (static_cast<int32_t>(v) - zero_point));
  return out;
}

template std::vector<uint8_t> Quantize<uint8_t>(const std::vector<float>&, float, int32_t);
template std::vector<int8_t> Quantize<int8_t>(const std::vector<float>&, float, int32_t);
template std::vector<int16_t> Quantize<int16_t>(const std::vector<float>&, float, int32_t);
template std::vector<int32_t> Quantize<int32_t>(const std::vector<float>&, float, int32_t);
template std::vector<float> Dequantize<uint8_t>(const std::vector<uint8_t>&, float, int32_t);
template std::vector<float> Dequantize<int8_t>(const std::vector<int8_t>&, float, int32_t);
template std::vector<float> Dequantize<int16_t>(const std::vector<int16_t>&, float, int32_t);
template std::vector<float> Dequantize<int32_t>(const std::vector<int32_t>&, float, int32_t);

std::filesystem::path SourceDir() {
  return std::filesystem::absolute(__FILE__).lexically_normal().parent_path().parent_path().parent_path();
}

std::filesystem::path SharedDir() {
  if (const char* env = std::getenv("DELEGATO_SHARED_DIR")) return env;
  return SourceDir().parent_path() / "shared";
}

std::string SharedModelPath(const std::string& name) {
  const std::filesystem::path path = SharedDir() / "models" / name;
  return std::filesystem::exists(path) ? path.string() : std::string();
}

}  // namespace delegato::testing
