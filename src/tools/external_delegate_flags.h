// benchmark_model's --external_delegate_path / --external_delegate_options
// for `run`, `bench` and `diff`: load a TFLite delegate plugin and apply it.
#pragma once

#include <memory>

#include "delegato/external_delegate.h"
#include "delegato/interpreter.h"
#include "tools/flags.h"

namespace delegato::tools {

void DeclareExternalDelegateFlags(Flags& flags);

// nullptr when --external_delegate_path is absent. Otherwise loads the plugin
// (throws Error with dlerror's text or the plugin's messages), applies it to
// `interpreter` (which allocates) and prints TFLite's summary line, plus a
// warning naming the plugin and the call when its Prepare failed and the
// model stayed on delegato's CPU kernels. The result must outlive Invoke calls.
std::unique_ptr<ExternalDelegate> ApplyExternalDelegate(const Flags& flags, Interpreter& interpreter);

}  // namespace delegato::tools
