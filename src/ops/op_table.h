// The op table: the single list of every op this runtime executes, with the
// range of versions each kernel accepts. Names come from the model (builtin
// names in model/builtin_op.cc), parameters from model/op_params.h.
#pragma once

#include <span>
#include <string_view>

#include "ops/kernel.h"

namespace delegato {

std::span<const OpKernel> AllKernels();

// nullptr when no kernel exists for the op at all; a kernel whose version
// range excludes `version` is returned too, so the caller can say
// "version N not supported (1..M)".
const OpKernel* FindKernel(BuiltinOp builtin, std::string_view custom_code);

}  // namespace delegato
