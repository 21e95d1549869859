// delegato: the command-line tool. Each subcommand lives in its own file.
#include <cstring>
#include <iostream>

#include "tools/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const delegato::tools::Args&);
  const char* help;
};

constexpr Command kCommands[] = {
    {"run", delegato::tools::CmdRun, "run a model on inputs (.npy, BMP or random) and write outputs"},
    {"inspect", delegato::tools::CmdInspect, "show a model's inputs, outputs, ops, quantization, arena"},
    {"plan", delegato::tools::CmdPlan, "which nodes run on an accelerator target, which fall back and why"},
    {"convert", delegato::tools::CmdConvert, "re-serialize a model through delegato's reader and writer"},
    {"fix", delegato::tools::CmdFix, "rewrite a model so it runs (fully) on a target, with the accuracy cost measured"},
    {"generate", delegato::tools::CmdGenerate, "write the built-in demo model to a .tflite file"},
    {"bench", delegato::tools::CmdBench, "benchmark a model like TFLite's benchmark_model (same flags and output)"},
    {"diff", delegato::tools::CmdDiff, "compare a configuration (threads, kernels, target, rewritten model) with the reference, per output and per layer"},
    {"cache", delegato::tools::CmdCache, "list or clear a compilation cache directory (--delegate_serialize_dir)"},
    {"ops", delegato::tools::CmdOps, "list the op table: every op delegato runs and its version range"},
};

void PrintUsage(std::ostream& out) {
  out << "usage: delegato <command> [flags]   (delegato <command> --help for its flags)\n\n";
  for (const Command& c : kCommands) out << "  " << c.name << "\t" << c.help << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "help") == 0) {
    PrintUsage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "delegato " << DELEGATO_VERSION << "\n";
    return 0;
  }
  delegato::tools::Args args(argv + 2, argv + argc);
  for (const Command& c : kCommands)
    if (std::strcmp(argv[1], c.name) == 0) return c.run(args);
  std::cerr << "delegato: unknown command '" << argv[1] << "'\n";
  PrintUsage(std::cerr);
  return 2;
}
