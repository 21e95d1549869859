// Latency driver for bench/compare_litert.py: loads a model once and runs
// timed batches on request, so the script can interleave it with LiteRT.
//
//   time_model MODEL [--num_threads N] [--kernels optimized|reference]
//              [--input INDEX=FILE.npy]...
// Prints one JSON line after initialization (with "isa": the instruction set
// the optimized kernels selected), then answers stdin commands,
// one JSON line each:
//   run N   -> {"latencies_ms": [...], "cpu_ms": [...]}
//              (N invocations: wall time and process CPU time of each)
//   quit    -> {"peak_rss_mb": ...}      (VmHWM of the process)
// Inputs not given are filled with seeded random values.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "delegato/interpreter.h"
#include "kernels/optimized/isa.h"
#include "tools/npy.h"
#include "tools/tool_util.h"

namespace {

double StatusMb(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t key_len = std::strlen(key);
  while (std::getline(status, line)) {
    if (line.compare(0, key_len, key) == 0) return std::stod(line.substr(key_len + 1)) / 1024.0;
  }
  return 0.0;
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double ProcessCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

std::string JsonList(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.4f", i ? ", " : "", values[i]);
    out += buf;
  }
  return out + "]";
}

int Fail(const std::string& message) {
  std::cerr << "time_model: " << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Fail("usage: time_model MODEL [--num_threads N] [--kernels K] [--input I=F.npy]");
  const std::string path = argv[1];
  delegato::InterpreterOptions options;
  std::vector<std::pair<int, std::string>> inputs;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Fail("missing value for " + flag);
    const std::string value = argv[++i];
    if (flag == "--num_threads") {
      options.num_threads = std::stoi(value);
    } else if (flag == "--kernels") {
      options.kernels = delegato::tools::ParseKernelSet(value);
    } else if (flag == "--input") {
      const size_t eq = value.find('=');
      if (eq == std::string::npos) return Fail("--input wants INDEX=FILE.npy");
      inputs.emplace_back(std::stoi(value.substr(0, eq)), value.substr(eq + 1));
    } else {
      return Fail("unknown flag " + flag);
    }
  }

  const double rss_before = StatusMb("VmRSS:");
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const delegato::ModelDef> model;
  delegato::Status status = delegato::LoadModel(path, &model);
  if (!status.ok()) return Fail(status.message());
  auto interpreter = delegato::Interpreter::Create(model, options, &status);
  if (status.ok()) status = interpreter->AllocateTensors();
  if (!status.ok()) return Fail(status.message());
  const auto t1 = std::chrono::steady_clock::now();

  delegato::tools::FillRandomInputs(*interpreter, 0);
  for (const auto& [index, file] : inputs) {
    if (index < 0 || index >= interpreter->num_inputs()) return Fail("no input " + std::to_string(index));
    const delegato::tools::NpyArray array = delegato::tools::ReadNpy(file);
    delegato::TensorView view = interpreter->input(index);
    if (array.type != view.type || array.data.size() != view.bytes)
      return Fail("input " + std::to_string(index) + ": " + file + " does not match the tensor");
    std::memcpy(view.data, array.data.data(), view.bytes);
  }
  const auto t2 = std::chrono::steady_clock::now();
  status = interpreter->Invoke();
  if (!status.ok()) return Fail(status.message());
  const auto t3 = std::chrono::steady_clock::now();

  std::printf(
      "{\"init_ms\": %.3f, \"first_inference_ms\": %.3f, \"rss_before_load_mb\": %.3f, "
      "\"arena_mb\": %.3f, \"isa\": \"%s\"}\n",
      Ms(t1 - t0), Ms(t3 - t2), rss_before, interpreter->arena_bytes() / 1048576.0,
      delegato::optimized::IsaName(delegato::optimized::SelectedIsa()));
  std::fflush(stdout);

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream command(line);
    std::string verb;
    command >> verb;
    if (verb == "run") {
      int runs = 1;
      command >> runs;
      std::vector<double> latencies, cpu;
      latencies.reserve(runs);
      cpu.reserve(runs);
      for (int r = 0; r < runs; ++r) {
        const double cpu_start = ProcessCpuMs();
        const auto start = std::chrono::steady_clock::now();
        status = interpreter->Invoke();
        latencies.push_back(Ms(std::chrono::steady_clock::now() - start));
        cpu.push_back(ProcessCpuMs() - cpu_start);
        if (!status.ok()) return Fail(status.message());
      }
      std::printf("{\"latencies_ms\": %s, \"cpu_ms\": %s}\n", JsonList(latencies).c_str(),
                  JsonList(cpu).c_str());
      std::fflush(stdout);
    } else if (verb == "quit") {
      break;
    }
  }
  std::printf("{\"peak_rss_mb\": %.3f}\n", StatusMb("VmHWM:"));
  std::fflush(stdout);
  return 0;
}
