// Rewrite passes: verified changes to a model's IR that let a target run more
// of it. Each pass says which placement reasons (and ops) it addresses, edits
// the ModelDef in place, and reports every change in words: nodes added or
// removed, tensors whose type or quantization changed, what the change costs
// in accuracy when the pass can tell (exact by construction, checked
// exhaustively, or measured on the op alone). The whole-model accuracy cost is
// measured by the caller (see passes/compare.h and `delegato fix`).
//
// Passes never touch FlatBuffers: the writer serializes the result.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "delegate/target.h"
#include "delegato/delegate.h"
#include "model/model.h"

namespace delegato::passes {

// What model I/O types a type-changing pass keeps.
enum class IoTypes {
  kUser,   // the model's inputs and outputs keep their types (boundary QUANTIZE nodes added)
  kModel,  // inputs and outputs take the rewritten model's types
};

struct PassContext {
  const Target* target = nullptr;  // nullptr: no target; every candidate is accepted
  std::string accelerator_name;
  IoTypes io_types = IoTypes::kUser;
  uint64_t seed = 0;  // for measurements on random data
  // int8-to-uint8: per-channel weights become per-tensor per group of
  // channels of similar scale (see type_convert.cc). A spread ratio <= 1
  // turns the grouping off.
  double block_group_ratio = 1.5;   // expand/depthwise channels of inverted-residual blocks
  double output_group_ratio = 4.0;  // output channels of other CONV_2D (joined by CONCATENATION + GATHER)
  int max_groups = 16;

  // Whether the target takes node `node` of `model` (always true without a target).
  bool Accepts(const ModelDef& model, int node) const;
  // The target's answer with reasons (supported without a target).
  NodeSupport Evaluate(const ModelDef& model, int node) const;
};

// One change, in words. `exact` is true when the rewritten part computes
// bit-identical values (by construction or by an exhaustive check).
struct Change {
  std::string what;                  // one line: "node 61 AVERAGE_POOL_2D 33x33 -> MEAN over H,W"
  std::vector<std::string> details;  // further lines: tensors, parameters, error numbers
  bool exact = false;
  bool changes_interface = false;    // a model input or output changed type/shape/quantization
};

struct PassResult {
  std::vector<Change> changes;
  std::vector<std::string> findings;  // what the pass saw but left alone, and why
  bool changed() const { return !changes.empty(); }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  // The reason codes and ops this pass addresses (empty ops = any op).
  virtual std::vector<ReasonCode> reasons() const = 0;
  virtual std::vector<BuiltinOp> ops() const = 0;
  // Whether a node left on the CPU for `reason` is something this pass can
  // help with. Default: the node's op and the reason code are both listed.
  virtual bool Addresses(const ModelDef& model, int node, const Reason& reason) const;
  // Rewrites `model` in place.
  virtual PassResult Run(ModelDef& model, const PassContext& ctx) const = 0;
};

// Every pass, in the order they are applied (type conversions first, local
// op rewrites next, clean-ups last).
const std::vector<std::unique_ptr<Pass>>& AllPasses();
const Pass* FindPass(std::string_view name);
// "argmax-int32, resize-flags, ..." for help texts and errors.
std::string PassNames();

}  // namespace delegato::passes
