// Subcommands of the `delegato` CLI. Each takes the arguments after its name
// and returns the process exit code (0 ok, 1 error, 2 usage error); errors are
// printed to stderr as "delegato <cmd>: <message>".
#pragma once

#include <string>
#include <vector>

namespace delegato::tools {

using Args = std::vector<std::string>;

int CmdInspect(const Args& args);
int CmdRun(const Args& args);
int CmdConvert(const Args& args);  // re-serializes a model through the reader and writer
int CmdGenerate(const Args& args); // writes the built-in demo model
int CmdPlan(const Args& args);     // per-node placement on an accelerator target
int CmdFix(const Args& args);     // rewrites a model for a target (passes), with the accuracy cost
int CmdBench(const Args& args);    // benchmark_model-compatible latency, memory and op profiling
int CmdDiff(const Args& args);     // inference_diff: reference vs configuration under test, per layer
int CmdCache(const Args& args);    // ls / clear a compilation cache directory
int CmdOps(const Args& args);      // the op table: every op, builtin/custom, version range

}  // namespace delegato::tools
