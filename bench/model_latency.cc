// Whole-model latency on the CPU for the shared CNN models (Google Benchmark).
// A starting figure for speed work, not a pass/fail test: timings on a shared
// machine are noisy. Models are read from $DELEGATO_SHARED_DIR/models or
// ../shared/models; missing ones are skipped with a message.
//   build/bench_model_latency --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "delegato/interpreter.h"
#include "model/model.h"
#include "tools/tool_util.h"

namespace {

std::filesystem::path ModelsDir() {
  if (const char* dir = std::getenv("DELEGATO_SHARED_DIR")) return std::filesystem::path(dir) / "models";
  return std::filesystem::path(DELEGATO_SOURCE_DIR) / ".." / "shared" / "models";
}

void BM_Model(benchmark::State& state, std::string name) {
  const auto path = ModelsDir() / (name + ".tflite");
  std::shared_ptr<const delegato::ModelDef> model;
  delegato::Status status = delegato::LoadModel(path.string(), &model);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  auto interpreter = delegato::Interpreter::Create(
      model, delegato::InterpreterOptions{static_cast<int>(state.range(0))}, &status);
  if (status.ok()) status = interpreter->AllocateTensors();
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  delegato::tools::FillRandomInputs(*interpreter, 0);
  for (auto _ : state) {
    status = interpreter->Invoke();
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      return;
    }
  }
  state.counters["arena_MB"] = interpreter->arena_bytes() / 1e6;
}

}  // namespace

#define MODEL_BENCHMARK(id, file) \
  BENCHMARK_CAPTURE(BM_Model, id, file)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()

MODEL_BENCHMARK(mobilenet_v1_025_128_quant, "mobilenet_v1_0.25_128_quant");
MODEL_BENCHMARK(mobilenet_v2_224_quant, "mobilenet_v2_1.0_224_quant");
MODEL_BENCHMARK(tf2_mobilenet_v2_224_ptq, "tf2_mobilenet_v2_1.0_224_ptq");
MODEL_BENCHMARK(mobilenet_v2_1x3x224x224, "mobilenet_v2_quantized_1x3x224x224");
MODEL_BENCHMARK(person_detect, "person_detect");
MODEL_BENCHMARK(deeplabv3_mnv2_dm05, "deeplabv3_mnv2_dm05_pascal_quant");
MODEL_BENCHMARK(movenet_lightning_ptq, "movenet_single_pose_lightning_ptq");

BENCHMARK_MAIN();
