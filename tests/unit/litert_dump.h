// Saves a case that ran in an OpModel (the model with its computed output
// shapes, the input bytes and delegato's output bytes) when the environment
// variable DELEGATO_LITERT_DUMP names a directory, so that
// tests/python/test_layers_litert.py can replay it in LiteRT's reference
// kernels and compare. Does nothing otherwise.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

#include "model/model.h"
#include "test_util.h"

namespace delegato::testing {

inline void DumpForLiteRt(OpModel& m, const std::string& name) {
  const char* dir = std::getenv("DELEGATO_LITERT_DUMP");
  if (dir == nullptr || *dir == '\0') return;
  SubgraphDef& graph = m.model().subgraphs[0];
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    graph.tensors[graph.outputs[i]].shape = m.GetOutputShape(static_cast<int>(i));
  const std::string base = std::string(dir) + "/" + name;
  WriteModelFile(m.model(), base + ".tflite");
  auto write = [](const std::string& path, const TensorView& view) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(static_cast<const char*>(view.data), static_cast<std::streamsize>(view.bytes));
  };
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    write(base + ".in" + std::to_string(i) + ".bin", m.interpreter().input(static_cast<int>(i)));
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    write(base + ".out" + std::to_string(i) + ".bin",
          m.interpreter().output(static_cast<int>(i)));
}

}  // namespace delegato::testing
