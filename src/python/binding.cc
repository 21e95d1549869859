// delegato._core: the C++ interpreter and the CLI's commands for Python.
//
// Kept thin: the Python package (python/delegato/) shapes these answers into
// LiteRT's API (details dicts, signature runners, argument checks); the errors
// raised here carry LiteRT's exception types and messages where a drop-in
// user would meet them.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "delegate/emulated_delegate.h"
#include "delegate/target.h"
#include "delegato/external_delegate.h"
#include "delegato/interpreter.h"
#include "model/model.h"
#include "tools/commands.h"
#include "tools/placement.h"

namespace py = pybind11;

namespace delegato::python {
namespace {

// numpy's format character of each element type the runtime executes.
const char* NumpyFormat(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "f";
    case DataType::kFloat16: return "e";
    case DataType::kFloat64: return "d";
    case DataType::kInt8: return "b";
    case DataType::kUInt8: return "B";
    case DataType::kInt16: return "h";
    case DataType::kUInt16: return "H";
    case DataType::kInt32: return "i";
    case DataType::kUInt32: return "I";
    case DataType::kInt64: return "q";
    case DataType::kUInt64: return "Q";
    case DataType::kBool: return "?";
    case DataType::kComplex64: return "F";
    case DataType::kComplex128: return "D";
    default: return nullptr;
  }
}

// The TFLite type name of a numpy dtype ("FLOAT64"), for set_tensor's messages.
std::string NumpyTypeName(const py::dtype& dtype, DataType* type) {
  const char kind = dtype.kind();
  const ssize_t size = dtype.itemsize();
  struct Entry { char kind; ssize_t size; DataType type; };
  static constexpr Entry kTable[] = {
      {'f', 4, DataType::kFloat32}, {'f', 2, DataType::kFloat16}, {'f', 8, DataType::kFloat64},
      {'i', 1, DataType::kInt8},    {'u', 1, DataType::kUInt8},   {'i', 2, DataType::kInt16},
      {'u', 2, DataType::kUInt16},  {'i', 4, DataType::kInt32},   {'u', 4, DataType::kUInt32},
      {'i', 8, DataType::kInt64},   {'u', 8, DataType::kUInt64},  {'b', 1, DataType::kBool},
      {'c', 8, DataType::kComplex64}, {'c', 16, DataType::kComplex128},
  };
  for (const Entry& e : kTable)
    if (e.kind == kind && e.size == size) {
      *type = e.type;
      return std::string(DataTypeName(e.type));
    }
  *type = static_cast<DataType>(-1);
  return "NOTYPE";
}

std::string FormatShape(std::span<const int32_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

class PyInterpreter {
 public:
  PyInterpreter(std::shared_ptr<const ModelDef> model, bool reference, int num_threads,
                const std::string& target, std::vector<std::shared_ptr<ExternalDelegate>> plugins,
                size_t max_memory_bytes)
      : model_(std::move(model)), plugins_(std::move(plugins)) {
    options_.num_threads = num_threads;
    options_.max_memory_bytes = max_memory_bytes;
    options_.kernels = reference ? KernelSet::kReference : KernelSet::kOptimized;
    if (!target.empty()) {
      try {
        const Target t = FindTarget(target, tools::TargetsDir());
        delegate_ = MakeTargetDelegate(t, *model_, "", TargetDelegateOptions(t, -1, -1, {}, -1, -1),
                                       num_threads);
      } catch (const Error& e) {
        throw py::value_error(e.what());
      }
      delegate_->UseKernels(options_.kernels);
    }
    Status status;
    interpreter_ = Interpreter::Create(model_, options_, &status);
    // Like LiteRT, a model with an op the runtime lacks loads (its details can
    // be read) and fails at allocate_tensors.
    if (!status.ok()) {
      create_error_ = status.message();
      return;
    }
  }

  static std::shared_ptr<const ModelDef> Load(const std::string& path) {
    try {
      return ReadModelFile(path);
    } catch (const Error& e) {
      throw py::value_error(e.what());
    }
  }
  static std::shared_ptr<const ModelDef> LoadBytes(const py::bytes& content) {
    const std::string_view bytes = content;
    try {
      return ReadModelBuffer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "model_content");
    } catch (const Error& e) {
      throw py::value_error(e.what());
    }
  }

  void AllocateTensors() {
    if (!interpreter_) throw std::runtime_error(create_error_);
    Status status;
    {
      py::gil_scoped_release release;
      // The delegates take their partitions at the first allocation
      // (ModifyGraphWithDelegate allocates): the target's first, then the
      // plugins in list order, each seeing what earlier ones left on the CPU.
      // Later allocations re-plan with them.
      std::lock_guard<std::mutex> lock(mutex_);
      if (!delegates_applied_ && (delegate_ || !plugins_.empty())) {
        if (delegate_) status = interpreter_->ModifyGraphWithDelegate(delegate_.get());
        for (const auto& plugin : plugins_)
          if (status.ok()) status = interpreter_->ModifyGraphWithDelegate(plugin.get());
        delegates_applied_ = status.ok();
      } else {
        status = interpreter_->AllocateTensors();
      }
    }
    allocated_ = status.ok();
    if (!status.ok()) throw std::runtime_error(status.message());
  }

  void Invoke() {
    if (!allocated_) throw std::runtime_error("Invoke called on model that is not ready.");
    Status status;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      status = interpreter_->Invoke();
    }
    if (!status.ok()) throw std::runtime_error(status.message());
  }

  int num_tensors() const { return static_cast<int>(model_->subgraphs[0].tensors.size()); }

  std::vector<int> Inputs() const {
    if (!interpreter_) return model_->subgraphs[0].inputs;
    std::vector<int> indices;
    for (int i = 0; i < interpreter_->num_inputs(); ++i) indices.push_back(interpreter_->input(i).index);
    return indices;
  }
  std::vector<int> Outputs() const {
    if (!interpreter_) return model_->subgraphs[0].outputs;
    std::vector<int> indices;
    for (int i = 0; i < interpreter_->num_outputs(); ++i) indices.push_back(interpreter_->output(i).index);
    return indices;
  }

  // (name, dims, type name, scales, zero points, quantized dimension, shape signature)
  py::tuple TensorInfo(int index) const {
    CheckIndex(index);
    if (!interpreter_) {
      const TensorDef& def = model_->subgraphs[0].tensors[index];
      std::vector<int32_t> zero_points(def.quantization.zero_point.begin(), def.quantization.zero_point.end());
      return py::make_tuple(def.name, def.shape, std::string(DataTypeName(def.type)), def.quantization.scale,
                            zero_points, def.quantization.quantized_dimension,
                            def.shape_signature.empty() ? def.shape : def.shape_signature);
    }
    const TensorView t = View(index);
    std::vector<int32_t> signature;
    const auto& defs = model_->subgraphs[0].tensors;
    if (index < static_cast<int>(defs.size())) signature = defs[index].shape_signature;
    if (signature.empty()) signature.assign(t.dims.begin(), t.dims.end());
    std::vector<int32_t> zero_points(t.zero_points.begin(), t.zero_points.end());
    return py::make_tuple(std::string(t.name), std::vector<int32_t>(t.dims.begin(), t.dims.end()),
                          std::string(DataTypeName(t.type)),
                          std::vector<float>(t.scales.begin(), t.scales.end()), zero_points,
                          t.quantized_dimension, signature);
  }

  void SetTensor(int index, const py::object& value) {
    CheckIndex(index);
    // The conversion may run Python code (and switch threads): before the lock.
    py::array array = py::array::ensure(value, py::array::c_style);
    if (!array) throw py::value_error("Cannot set tensor: the value is not convertible to a numpy array");
    std::lock_guard<std::mutex> lock(mutex_);
    const TensorView t = View(index);
    DataType value_type;
    const std::string value_type_name = NumpyTypeName(array.dtype(), &value_type);
    if (value_type != t.type)
      throw py::value_error("Cannot set tensor: Got value of type " + value_type_name +
                            " but expected type " + std::string(DataTypeName(t.type)) + " for input " +
                            std::to_string(index) + ", name: " + std::string(t.name) + " ");
    const std::vector<int32_t> value_dims(array.shape(), array.shape() + array.ndim());
    if (value_dims.size() != t.dims.size())
      throw py::value_error("Cannot set tensor: Dimension mismatch. Got " + std::to_string(value_dims.size()) +
                            " but expected " + std::to_string(t.dims.size()) + " for input " +
                            std::to_string(index) + ". (name: " + std::string(t.name) + ", value shape " +
                            FormatShape(value_dims) + ", tensor shape " + FormatShape(t.dims) + ")");
    for (size_t d = 0; d < value_dims.size(); ++d)
      if (value_dims[d] != t.dims[d])
        throw py::value_error("Cannot set tensor: Dimension mismatch. Got " + std::to_string(value_dims[d]) +
                              " but expected " + std::to_string(t.dims[d]) + " for dimension " +
                              std::to_string(d) + " of input " + std::to_string(index) + ". (name: " +
                              std::string(t.name) + ", value shape " + FormatShape(value_dims) +
                              ", tensor shape " + FormatShape(t.dims) + ")");
    if (t.is_constant)
      throw py::value_error("Cannot set tensor: tensor " + std::to_string(index) + " (" + std::string(t.name) +
                            ") is a constant of the model");
    if (t.data == nullptr)
      throw py::value_error("Cannot set tensor: Tensor is unallocated. Try calling allocate_tensors() first");
    if (static_cast<size_t>(array.nbytes()) != t.bytes)
      throw py::value_error("Cannot set tensor: input " + std::to_string(index) + " (" + std::string(t.name) +
                            ") holds " + std::to_string(t.bytes) + " bytes, the value " +
                            std::to_string(array.nbytes()));
    std::memcpy(t.data, array.data(), t.bytes);
  }

  py::array GetTensor(int index) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const TensorView t = View(index);
    const char* format = NumpyFormat(t.type);
    if (format == nullptr)
      throw py::value_error("tensor " + std::to_string(index) + " (" + std::string(t.name) + ") has type " +
                            std::string(DataTypeName(t.type)) + ", which has no numpy equivalent here");
    if (t.data == nullptr && !(t.bytes == 0 && t.is_constant))
      throw py::value_error("Tensor data is null. Run allocate_tensors() first");
    std::vector<ssize_t> shape(t.dims.begin(), t.dims.end());
    py::array array(py::dtype(format), shape);
    if (t.bytes) std::memcpy(array.mutable_data(), t.data, std::min<size_t>(t.bytes, array.nbytes()));
    return array;
  }

  // A view of the tensor's memory whose base is `self` (the wrapper), so the
  // Python layer sees live views in the wrapper's reference count, as LiteRT does.
  static py::array TensorView_(py::object self, int index) {
    PyInterpreter& me = self.cast<PyInterpreter&>();
    const TensorView t = me.View(index);
    const char* format = NumpyFormat(t.type);
    if (format == nullptr)
      throw py::value_error("tensor " + std::to_string(index) + " has type " +
                            std::string(DataTypeName(t.type)) + ", which has no numpy equivalent here");
    if (t.data == nullptr) throw py::value_error("Tensor data is null. Run allocate_tensors() first");
    std::vector<ssize_t> shape(t.dims.begin(), t.dims.end());
    py::array array(py::dtype(format), shape, {}, t.data, self);
    // Constants live in the shared model: read-only.
    if (t.is_constant) py::detail::array_proxy(array.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return array;
  }

  void ResizeInput(int tensor_index, const std::vector<int32_t>& dims, bool strict) {
    if (!interpreter_) throw std::runtime_error(create_error_);
    int input = -1;
    for (int i = 0; i < interpreter_->num_inputs(); ++i)
      if (interpreter_->input(i).index == tensor_index) input = i;
    if (input < 0)
      throw std::runtime_error("tensor " + std::to_string(tensor_index) +
                               " is not an input of the model; only inputs can be resized");
    const TensorView t = interpreter_->input(input);
    if (strict) {
      const auto& signature = model_->subgraphs[0].tensors[tensor_index].shape_signature;
      if (signature.size() != dims.size() && !signature.empty())
        throw std::runtime_error("ResizeInputTensorStrict: tensor " + std::to_string(tensor_index) + " has rank " +
                                 std::to_string(signature.size()) + ", the new shape " +
                                 FormatShape(dims));
      for (size_t d = 0; d < dims.size() && d < t.dims.size(); ++d) {
        const int32_t sig = signature.empty() ? t.dims[d] : signature[d];
        if (sig != -1 && dims[d] != t.dims[d])
          throw std::runtime_error("Attempting to resize dimension " + std::to_string(d) + " of tensor " +
                                   std::to_string(tensor_index) + " with value " + std::to_string(t.dims[d]) +
                                   " to " + std::to_string(dims[d]) +
                                   ". ResizeInputTensorStrict only allows mutating unknown dimensions "
                                   "identified by -1.");
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    const Status status = interpreter_->ResizeInput(input, dims);
    if (!status.ok()) throw std::runtime_error(status.message());
    allocated_ = false;
  }

  // Variable tensors back to their initial value (zero, int8: the zero point).
  void ResetVariables() {
    if (!interpreter_) return;
    const auto& defs = model_->subgraphs[0].tensors;
    for (size_t i = 0; i < defs.size(); ++i) {
      if (!defs[i].is_variable) continue;
      const TensorView t = interpreter_->tensor(static_cast<int>(i));
      if (t.data == nullptr || t.is_constant) continue;
      int value = 0;
      if (t.type == DataType::kInt8 && !t.zero_points.empty()) value = static_cast<int8_t>(t.zero_points[0]);
      std::memset(t.data, value, t.bytes);
    }
  }

  // [(key, [(input name, tensor)], [(output name, tensor)])] of subgraph 0's signatures.
  py::list SignatureDefs() const {
    py::list result;
    for (const SignatureDefinition& s : model_->signature_defs) {
      if (s.subgraph_index != 0) continue;
      std::vector<std::pair<std::string, int>> inputs, outputs;
      for (const SignatureTensor& t : s.inputs) inputs.emplace_back(t.name, static_cast<int>(t.tensor_index));
      for (const SignatureTensor& t : s.outputs) outputs.emplace_back(t.name, static_cast<int>(t.tensor_index));
      result.append(py::make_tuple(s.key, inputs, outputs));
    }
    return result;
  }

  py::list OpsDetails() const {
    py::list result;
    if (!interpreter_) return result;
    for (int i : interpreter_->execution_plan()) {
      const NodeView n = interpreter_->node(i);
      py::dict d;
      d["index"] = n.index;
      d["op_name"] = std::string(n.op_name);
      d["version"] = n.version;
      d["inputs"] = std::vector<int32_t>(n.inputs.begin(), n.inputs.end());
      d["outputs"] = std::vector<int32_t>(n.outputs.begin(), n.outputs.end());
      result.append(d);
    }
    return result;
  }

  std::vector<std::string> DelegationLog() const {
    return interpreter_ ? interpreter_->delegation_log() : std::vector<std::string>{};
  }
  std::vector<std::string> Warnings() const {
    return interpreter_ ? interpreter_->warnings() : std::vector<std::string>{};
  }

 private:
  void CheckIndex(int index) const {
    const int n = num_tensors();
    if (index < 0 || index >= n)
      throw py::value_error("Invalid tensor index " + std::to_string(index) + " exceeds max tensor index " +
                            std::to_string(n - 1));
  }
  // The tensor, once the interpreter exists (else LiteRT's "not allocated" error).
  TensorView View(int index) const {
    CheckIndex(index);
    if (!interpreter_) throw py::value_error("Tensor data is null. Run allocate_tensors() first");
    return interpreter_->tensor(index);
  }

  std::shared_ptr<const ModelDef> model_;
  InterpreterOptions options_;
  std::unique_ptr<EmulatedDelegate> delegate_;  // outlives interpreter_ (declared first)
  std::vector<std::shared_ptr<ExternalDelegate>> plugins_;  // likewise
  std::unique_ptr<Interpreter> interpreter_;
  // One interpreter used from several threads: invoke runs without the GIL,
  // so the calls that touch its memory take turns (no parallelism, no races).
  mutable std::mutex mutex_;
  std::string create_error_;  // why the interpreter could not be built (interpreter_ null)
  bool delegates_applied_ = false;
  bool allocated_ = false;
};

// Loads a TFLite external delegate plugin. A plugin whose create returns NULL
// gives ValueError with the messages it reported, bare: the Python layer
// wraps them as LiteRT's load_delegate does ("Failed to load delegate from
// <library>\n<messages>").
std::shared_ptr<ExternalDelegate> LoadExternalDelegate(const std::string& path,
                                                       const ExternalDelegateOptions& options) {
  std::unique_ptr<ExternalDelegate> plugin;
  const Status status = ExternalDelegate::Load(path, options, &plugin);
  if (status.ok()) return std::shared_ptr<ExternalDelegate>(std::move(plugin));
  std::string message = status.message();
  const std::string create_failed = "external delegate " + path + ": tflite_plugin_create_delegate failed";
  if (message == create_failed + " (no message)") message.clear();
  else if (message.rfind(create_failed + ": ", 0) == 0) message.erase(0, create_failed.size() + 2);
  throw py::value_error(message);
}

// Runs one CLI subcommand in-process; returns (exit code, stdout, stderr).
// std::cout/std::cerr are process-wide, so one command runs at a time.
std::tuple<int, std::string, std::string> RunCommand(const std::string& name,
                                                     const std::vector<std::string>& args) {
  using Command = int (*)(const tools::Args&);
  static const std::pair<const char*, Command> kCommands[] = {
      {"run", tools::CmdRun},     {"inspect", tools::CmdInspect}, {"plan", tools::CmdPlan},
      {"fix", tools::CmdFix},     {"bench", tools::CmdBench},     {"diff", tools::CmdDiff},
      {"convert", tools::CmdConvert},
  };
  Command command = nullptr;
  for (const auto& [n, c] : kCommands)
    if (name == n) command = c;
  if (command == nullptr) throw py::value_error("unknown delegato command '" + name + "'");
  static std::mutex mutex;
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(mutex);
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  int code = 1;
  try {
    code = command(args);
  } catch (const std::exception& e) {
    err << "delegato " << name << ": " << e.what() << "\n";
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {code, out.str(), err.str()};
}

}  // namespace
}  // namespace delegato::python

PYBIND11_MODULE(_core, m) {
  using delegato::python::PyInterpreter;
  m.doc() = "delegato's C++ interpreter and tools (use the delegato package, not this module)";
  m.attr("__version__") = DELEGATO_VERSION;
  py::class_<delegato::ModelDef, std::shared_ptr<delegato::ModelDef>>(m, "_Model");
  m.def("load_model", [](const std::string& path) {
    return std::const_pointer_cast<delegato::ModelDef>(PyInterpreter::Load(path));
  });
  m.def("load_model_bytes", [](const py::bytes& content) {
    return std::const_pointer_cast<delegato::ModelDef>(PyInterpreter::LoadBytes(content));
  });
  py::class_<PyInterpreter>(m, "Interpreter")
      .def(py::init([](std::shared_ptr<delegato::ModelDef> model, bool reference, int num_threads,
                       const std::string& target,
                       std::vector<std::shared_ptr<delegato::ExternalDelegate>> plugins,
                       size_t max_memory_bytes) {
             return std::make_unique<PyInterpreter>(std::move(model), reference, num_threads, target,
                                                    std::move(plugins), max_memory_bytes);
           }),
           py::arg("model"), py::arg("reference"), py::arg("num_threads"), py::arg("target"),
           py::arg("plugins"), py::arg("max_memory_bytes"))
      .def("allocate_tensors", &PyInterpreter::AllocateTensors)
      .def("invoke", &PyInterpreter::Invoke)
      .def("num_tensors", &PyInterpreter::num_tensors)
      .def("inputs", &PyInterpreter::Inputs)
      .def("outputs", &PyInterpreter::Outputs)
      .def("tensor_info", &PyInterpreter::TensorInfo)
      .def("set_tensor", &PyInterpreter::SetTensor)
      .def("get_tensor", &PyInterpreter::GetTensor)
      .def("tensor", &PyInterpreter::TensorView_)
      .def("resize_input", &PyInterpreter::ResizeInput)
      .def("reset_variables", &PyInterpreter::ResetVariables)
      .def("signature_defs", &PyInterpreter::SignatureDefs)
      .def("ops_details", &PyInterpreter::OpsDetails)
      .def("delegation_log", &PyInterpreter::DelegationLog)
      .def("warnings", &PyInterpreter::Warnings);
  py::class_<delegato::ExternalDelegate, std::shared_ptr<delegato::ExternalDelegate>>(m, "_ExternalDelegate")
      .def_property_readonly("name", &delegato::ExternalDelegate::name)
      .def_property_readonly("prepare_error", &delegato::ExternalDelegate::prepare_error);
  m.def("load_external_delegate", &delegato::python::LoadExternalDelegate, py::arg("path"), py::arg("options"));
  m.def("run_command", &delegato::python::RunCommand, py::arg("name"), py::arg("args"));
  m.def("targets_dir", &delegato::tools::TargetsDir);
}
