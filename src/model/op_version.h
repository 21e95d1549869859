// Op versions as TFLite's converter stamps them. A builtin's version says which
// variant of its kernel the node needs (int8 inputs, per-channel weights, 5-D
// shapes, an option added later...); runtimes register a range of versions per
// op and refuse a node outside it. The model writer's callers (the single-op
// test models, `delegato fix`) use these functions so that a node carries the
// version a converter would give it for its tensor types, shapes and options.
#pragma once

#include "model/model.h"

namespace delegato {

// The lowest version of `op`'s builtin that accepts its tensor types, shapes and
// options (TFLite's versioning rules, GetBuiltinOperatorVersion). Custom ops: 1.
// Optional inputs left out (-1) count as absent.
// Real converter output can state other versions: older converters wrote lower
// ones for rules added later (MUL's rescale >= 1), and TensorFlow 2.21's converter
// writes the int8 versions for int16x8 nodes (CONV_2D 3, FULLY_CONNECTED 4,
// SOFTMAX 2, ...) where these rules give the 16-bit ones. Runtimes pick kernels by
// tensor types, not versions, so both run alike; only a version outside the
// registered range is refused.
int MinimumOpVersion(const ModelDef& model, const SubgraphDef& subgraph, const OperatorDef& op);

// MinimumOpVersion capped at the highest version delegato's op table registers
// for the op (see StampOpVersions). Custom ops and ops outside the table: uncapped.
// `code` is the node's op (the node need not be in the model yet).
int StampedOpVersion(BuiltinOp code, const SubgraphDef& subgraph, const OperatorDef& op);

enum class VersionStamp {
  kExact,  // every builtin node gets its MinimumOpVersion
  kRaise,  // a node below its MinimumOpVersion is raised to it; higher versions stay
};

// Applies MinimumOpVersion to every builtin node of every subgraph, capped at the
// highest version delegato's op table registers for the op (LiteRT's range: for a
// few ops the rules name a version no LiteRT resolver registers, e.g. ABS on int32
// is version 5 while registration stops at 3). Nodes
// that end up with different versions get operator codes of their own; codes no
// node uses any more are dropped. Returns the number of nodes whose version changed.
int StampOpVersions(ModelDef& model, VersionStamp mode);

}  // namespace delegato
