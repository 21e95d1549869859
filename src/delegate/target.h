// Accelerator targets: data files (targets/*.json) that describe which nodes a
// real NPU delegate and its driver accept, and the engine that evaluates them
// per node with typed reasons.
//
// A target is a list of layers evaluated in order, like the software stack on
// the device: the TFLite delegate first ("delegate"), then the vendor driver
// or compiler ("driver"). A later layer only sees nodes every earlier layer
// accepted, as NNAPI's getSupportedOperations only sees what the delegate
// handed over. Each layer lists the ops it knows (with their highest version
// and lowest feature level) and rules; every rule carries the public source it
// comes from and a fix the user can apply.
//
// File format (all keys checked at load; unknown keys are errors):
//
//   {
//     "id": "nnapi-1.3", "description": "...",
//     "version": "...",                 optional: the stack's version the rules describe
//                                       (compiler, driver, delegate release)
//     "known_differences": [{"oracle": "...", "says": "..."}],   optional: where the
//                                       rules still disagree with a real compiler used
//                                       as an oracle; `plan` prints them
//     "extends": "nnapi-1.2",           optional: start from that file (same folder),
//                                       then override scalars and replace/append
//                                       layers by name
//     "feature_level": 30,              optional: what `feature_level` predicates read
//     "partitioning": {...},            optional: max_delegated_partitions,
//                                       min_nodes_per_partition, single_cut, source,
//                                       cut_after_first_mapped: {"source"} (a single
//                                       cut that leaves refused leading nodes on the
//                                       CPU before the accelerator's segment)
//     "cost": {...},                    optional: see CostModel
//     "layers": [{
//       "name": "delegate", "description": "...",
//       "ops_not_listed": "reject" | "accept",
//       "unsupported_op": {"message", "fix", "source"},   required when "reject"
//       "op_version":    {"fix", "source"},               optional defaults for
//       "feature_level": {"fix", "source"},               the op-entry gates
//       "ops": [{"op": "CONV_2D" | ["RELU", "RELU6"], "max_version": 5,
//                "min_feature_level": 29, "source": {...}, "rules": [rule...]}],
//       "rules": [rule...]                                apply to every op (filter
//                                                         with "ops"/"except_ops")
//     }]
//   }
//
//   rule:      {"id", "when"?, "require", "reason", "message", "fix", "source",
//               "ops"?, "except_ops"?, "placeholder"?}
//              A rule with "placeholder": true has no public source (its "note"
//              says why it exists); every refusal it makes is marked as such.
//              The rule applies when `when` holds (absent: always); the node is
//              refused with `reason` when `require` does not hold. `when` and
//              `require` are a predicate or a list of predicates (all must hold).
//   source:    {"url": "https://..." or "path": "repo/file" or "observed": "what a real
//               compiler did on a named model" or "calibration": "the script that fitted
//               the number", "says": "..."}
//   reason:    a ReasonCode name from delegato/delegate.h (unsupported_input_type...)
//
//   predicate: {"all": [...]} | {"any": [...]} | {"not": {...}}
//            | {"check": KIND, subject..., COMPARATOR: value}
//     COMPARATOR is exactly one of eq, ne, lt, le, gt, ge, in, not_in.
//     KIND and subject:
//       dtype, rank, min_dim, max_dim, elements, per_axis, quantized,
//       zero_point, constant, present          "tensor": SELECTOR
//       dim                                     "tensor": SELECTOR, "axis": N (<0 from the end)
//       same_dtype, same_quantization,
//       same_shape                              "tensors": [SELECTOR, SELECTOR]
//       param                                   "name": one of KnownParamNames()
//       op_version, feature_level, accelerator_named, input_count, output_count
//     SELECTOR: "input:N", "output:N", "inputs", "outputs", "tensors" (inputs and
//       outputs), "activations" (non-constant inputs and outputs). A predicate on
//       several tensors holds when it holds for each of them.
//
// "note" (free text for people) is allowed at the root, in op entries, rules and
// cost numbers. Derived params: filter_area, kernel_h/w/area (from the filter
// tensor), dilated_kernel_h/w/area, resize_factor (integer NHWC upscale shared
// by H and W, 0 when there is none), axis / axis_is_last (ARG_MAX / ARG_MIN,
// from the constant axis tensor).
//
// Values that do not exist for a node (an absent optional input, a param the
// op does not have, a dim beyond the rank) are "not applicable": such a
// predicate neither triggers a rule's `when` nor violates its `require`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delegato/delegate.h"
#include "model/model.h"

namespace delegato {

struct TargetSource {
  std::string url;   // public URL or repo path ("calibration: <script>" for fitted numbers)
  std::string says;  // what that source states, in our words
};

// The condition language. Values compared are numbers, booleans or strings
// (dtype names such as "int8", activation names such as "relu6").
struct TargetValue {
  enum class Kind { kNumber, kBool, kString } kind = Kind::kNumber;
  double number = 0;
  bool boolean = false;
  std::string text;
};

struct TargetPredicate {
  enum class Kind {
    kAll, kAny, kNot,
    kDtype, kRank, kDim, kMinDim, kMaxDim, kElements, kPerAxis, kQuantized, kZeroPoint,
    kConstant, kPresent, kSameDtype, kSameQuantization, kSameShape, kParam, kOpVersion,
    kFeatureLevel, kAcceleratorNamed, kInputCount, kOutputCount,
  };
  enum class Compare { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };

  Kind kind = Kind::kAll;
  std::vector<TargetPredicate> children;  // all / any / not
  std::vector<std::string> tensors;       // selectors (one, or two for same_*)
  int axis = 0;                           // dim
  std::string param;                      // param
  Compare compare = Compare::kEq;
  std::vector<TargetValue> values;        // one value, or the list of in / not_in
};

struct TargetRule {
  std::string id;
  std::vector<TargetPredicate> when;     // all must hold for the rule to apply
  std::vector<TargetPredicate> require;  // all must hold for the node to pass
  ReasonCode reason = ReasonCode::kUnsupportedOperandValue;
  std::string message;
  std::string fix;
  TargetSource source;
  std::vector<std::string> ops, except_ops;  // layer-wide rules only
  bool placeholder = false;                   // no public source: refusals say so
};

struct TargetOpEntry {
  std::vector<std::string> ops;  // op names as ModelDef::OpName prints them
  int max_version = 0;           // 0 = any version
  int min_feature_level = 0;     // 0 = no gate
  TargetSource source;
  std::string fix;               // optional: overrides the layer's gate fixes
  std::vector<TargetRule> rules;
};

struct TargetLayer {
  std::string name;
  std::string description;
  bool reject_ops_not_listed = true;
  TargetRule unsupported_op;  // message / fix / source for ops not listed
  std::string op_version_fix, feature_level_fix;
  std::vector<TargetOpEntry> ops;
  std::vector<TargetRule> rules;
};

// A number of the cost model: either sourced or explicitly a placeholder.
struct CostNumber {
  double value = 0;
  bool placeholder = false;
  TargetSource source;  // empty when placeholder
  std::string note;
};

using CostTable = std::vector<std::pair<std::string, CostNumber>>;

// A CPU core class (Cortex-A53, ...): its arithmetic rate per core and cycle
// per dtype class, and the share of it each op class reaches.
struct CpuClassCost {
  CostTable ops_per_cycle_per_core;  // dtype class -> operations per cycle per core
  CostTable op_class_efficiency;     // op class -> fraction of that rate
};

// What a plan costs on the target (see docs/cost_model.md). Every number is
// sourced, calibrated ("source": {"calibration": "scripts/..."}) or marked a
// placeholder. All keys are optional; missing ones contribute nothing.
//
//   "cost": {
//     "ops_per_second":      {"int8": N, ...}   peak per dtype class (> 0)
//     "op_class_efficiency": {"conv_1x1": N, ...} fraction of the peak per op
//                            class (CostOpClassNames()); absent = 1
//     "memory_bytes_per_second": N   a node's activations (inputs, outputs)
//                            add their bytes over this bandwidth
//     "weight_bytes_per_second": N   its constant inputs add theirs over this one
//     "node_overhead_us":    N       fixed time per accelerator node
//     "partition_sync_us":   N       fixed time per delegated partition
//     "copy_bytes_per_second": N     tensors crossing a partition boundary
//     "first_inference_compile_ms": N
//     "cpu": {"class": "cortex-a53", "cores": N, "clock_hz": N}   the board's CPU
//     "cpu_classes": {"cortex-a53": {"ops_per_cycle_per_core": {...},
//                                    "op_class_efficiency": {...}}}   (cpu.json)
//     "ethos_u": {"clock_hz": N, "ofm_ublock_height": N, ...}   an Arm Ethos-U
//                            NPU priced per node from its MAC array's block
//                            geometry and memory ports (EthosUCostNames(),
//                            docs/cost_model.md); replaces ops_per_second and the
//                            byte rates above for the accelerator side
//     "driver_fallback": {"layer": "driver", "slowdown": N}   nodes refused by
//                            that layer still run inside the delegate's
//                            execution, on the runtime's CPU fallback, N times
//                            slower than on the board's CPU
//   }
//   N is a cost number: {"value", "source" | "placeholder": true, "note"?}.
struct CostModel {
  bool present = false;
  CostTable ops_per_second;  // dtype class -> ops/s
  CostTable op_class_efficiency;
  std::optional<CostNumber> memory_bytes_per_second;
  std::optional<CostNumber> weight_bytes_per_second;
  std::optional<CostNumber> node_overhead_us;
  std::optional<CostNumber> partition_sync_us;
  std::optional<CostNumber> copy_bytes_per_second;
  std::optional<CostNumber> first_inference_compile_ms;
  std::string cpu_class;  // empty: the board's CPU is not described
  std::optional<CostNumber> cpu_cores, cpu_clock_hz;
  std::vector<std::pair<std::string, CpuClassCost>> cpu_classes;
  std::string fallback_layer;
  std::optional<CostNumber> fallback_slowdown;
  CostTable ethos_u;  // empty: not an Ethos-U block model
};

// The keys of "cost.ethos_u" (all required when the section is present).
const std::vector<std::string>& EthosUCostNames();

// The op classes the cost model distinguishes: conv_1x1, conv_kxk, depthwise,
// fully_connected, elementwise, pooling_resize, data_movement, other.
const std::vector<std::string>& CostOpClassNames();

struct TargetPartitioning {
  int max_delegated_partitions = 0;  // <= 0 = unlimited
  int min_nodes_per_partition = 0;
  bool single_cut = false;           // everything from the first refused node on runs on the CPU
  TargetSource source;
  // With single_cut: refused nodes before the first accepted one stay on the
  // CPU ahead of the accelerator's segment instead of cutting the graph there.
  bool cut_after_first_mapped = false;
  TargetSource cut_after_first_mapped_source;
};

// Where a target's rules still disagree with a real compiler used as an oracle.
struct TargetDifference {
  std::string oracle;  // e.g. "Vela 4.2.0, ethos-u55-256"
  std::string says;    // the difference, per model or per op
};

struct Target {
  std::string id;
  std::string description;
  std::string version;            // the stack's version the rules describe
  std::string path;               // the file it was loaded from
  std::optional<int> feature_level;
  TargetPartitioning partitioning;
  CostModel cost;
  std::vector<TargetLayer> layers;
  std::vector<TargetDifference> known_differences;
};

// Every distinct source (url or path) the target's rules, op entries and
// partitioning cite, in first-seen order.
std::vector<std::string> TargetSourceList(const Target& target);
// Prefix of every refusal message a placeholder rule gives.
inline constexpr const char* kPlaceholderMark = "[placeholder rule, no public source] ";
// Number of rules marked "placeholder" (no public source).
int PlaceholderRuleCount(const Target& target);

// Parameter names the `param` predicate accepts (op options and values derived
// from them, e.g. filter_area = filter_w * filter_h, kernel_h from the filter).
const std::vector<std::string>& KnownParamNames();

// Loads and validates one target file. Throws delegato::Error naming the file,
// the JSON path (e.g. layers[0].ops[3].rules[1].require[0].check) and the problem.
Target LoadTargetFile(const std::string& path);
// Parses target JSON text; `label` names it in errors; `base_dir` resolves "extends".
Target ParseTarget(const std::string& json_text, const std::string& label,
                   const std::string& base_dir);

// `id_or_path`: an id looked up as <targets_dir>/<id>.json, else a file path.
// Throws delegato::Error listing the available ids when neither exists.
Target FindTarget(const std::string& id_or_path, const std::string& targets_dir);
// Ids of the *.json files in targets_dir, sorted.
std::vector<std::string> ListTargetIds(const std::string& targets_dir);

// Evaluates node `node_index` of subgraph 0 against every layer in order.
// `accelerator_name` is what the user named (e.g. --nnapi_accelerator_name);
// empty = none, which the accelerator_named predicate reads.
NodeSupport EvaluateNode(const Target& target, const ModelDef& model, int node_index,
                         const std::string& accelerator_name);

}  // namespace delegato
