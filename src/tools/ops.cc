// delegato ops: the op table (src/ops/op_list.inc) as this build registers it,
// one line per kernel: op name, builtin or custom, accepted versions. The JSON
// form feeds the coverage check and docs/ops.md (scripts/ops_doc.py).
#include <iostream>

#include "model/builtin_op.h"
#include "ops/op_table.h"
#include "tools/commands.h"
#include "tools/flags.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

int Ops(const Args& args) {
  Flags flags;
  flags.Declare("format", "text (default) or json").Declare("help", "show this help", true);
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato ops [--format text|json]\n" << flags.Help();
    return 0;
  }
  const std::string format = flags.GetString("format", "text");
  if (format != "text" && format != "json")
    throw UsageError("--format must be text or json, not '" + format + "'");
  const auto kernels = AllKernels();
  if (format == "json") std::cout << "[\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const OpKernel& k = kernels[i];
    const bool custom = k.builtin == BuiltinOp::kCustom;
    const std::string name = custom ? std::string(k.custom_code) : std::string(BuiltinOpName(k.builtin));
    if (format == "json") {
      // Op names are [A-Za-z0-9_] (builtin enumerators, custom codes in the table).
      std::cout << "  {\"name\": \"" << name << "\", \"kind\": \"" << (custom ? "custom" : "builtin")
                << "\", \"builtin_code\": " << static_cast<int>(k.builtin)
                << ", \"min_version\": " << k.min_version << ", \"max_version\": " << k.max_version
                << "}" << (i + 1 < kernels.size() ? "," : "") << "\n";
    } else {
      std::cout << name << "\t" << (custom ? "custom" : "builtin") << "\tv" << k.min_version
                << "-" << k.max_version << "\n";
    }
  }
  if (format == "json") std::cout << "]\n";
  return 0;
}

}  // namespace

int CmdOps(const Args& args) {
  return RunCommand("ops", [&] { return Ops(args); });
}

}  // namespace delegato::tools
