// delegato convert: reads a model (with every check the loader makes) and
// writes it back through the writer. Normalises old files (both op code
// fields, 16-byte aligned buffers) and shows that a model survives a round trip.
#include <iostream>

#include "model/model.h"
#include "tools/commands.h"
#include "tools/flags.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

int Convert(const Args& args) {
  Flags flags;
  flags.Declare("graph", "input model .tflite file")
      .Declare("o", "output .tflite file")
      .Declare("output", "same as -o")
      .Declare("help", "show this help", true);
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato convert --graph IN.tflite -o OUT.tflite\n" << flags.Help();
    return 0;
  }
  std::string input = flags.GetString("graph");
  if (input.empty() && !flags.positional().empty()) input = flags.positional()[0];
  const std::string output = flags.GetString("o", flags.GetString("output"));
  if (input.empty()) throw UsageError("missing --graph IN.tflite");
  if (output.empty()) throw UsageError("missing -o OUT.tflite");
  if (flags.positional().size() > (flags.Has("graph") ? 0u : 1u)) {
    throw UsageError("unexpected argument '" + flags.positional().back() + "'");
  }

  const auto model = ReadModelFile(input);
  WriteModelFile(*model, output);
  return 0;
}

}  // namespace

int CmdConvert(const Args& args) {
  return RunCommand("convert", [&] { return Convert(args); });
}

}  // namespace delegato::tools
