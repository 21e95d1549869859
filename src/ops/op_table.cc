#include "ops/op_table.h"

namespace delegato {

#define DLG_BUILTIN(op, Name, min_v, max_v)         \
  void Prepare##Name(KernelContext& ctx, Node& node); \
  void Eval##Name(KernelContext& ctx, const Node& node);
#define DLG_CUSTOM(code, Name, min_v, max_v) DLG_BUILTIN(_, Name, min_v, max_v)
#include "ops/op_list.inc"
#undef DLG_BUILTIN
#undef DLG_CUSTOM

namespace {

#define DLG_BUILTIN(op, Name, min_v, max_v) \
  OpKernel{BuiltinOp::op, nullptr, min_v, max_v, &Prepare##Name, &Eval##Name},
#define DLG_CUSTOM(code, Name, min_v, max_v) \
  OpKernel{BuiltinOp::kCustom, code, min_v, max_v, &Prepare##Name, &Eval##Name},
// A leading sentinel keeps the array non-empty while the list grows.
const OpKernel kKernels[] = {
    OpKernel{BuiltinOp::kCustom, "", 0, -1, nullptr, nullptr},
#include "ops/op_list.inc"
};
#undef DLG_BUILTIN
#undef DLG_CUSTOM

}  // namespace

std::span<const OpKernel> AllKernels() {
  return std::span<const OpKernel>(kKernels + 1, std::size(kKernels) - 1);
}

const OpKernel* FindKernel(BuiltinOp builtin, std::string_view custom_code) {
  for (const OpKernel& kernel : AllKernels()) {
    if (kernel.builtin != builtin) continue;
    if (builtin == BuiltinOp::kCustom && custom_code != kernel.custom_code) continue;
    return &kernel;
  }
  return nullptr;
}

}  // namespace delegato
