// Which builtin options table each builtin op carries in a .tflite file.
// Shared by the reader (to check the options fit the op) and the writer (to
// pick the table to write). Internal to src/model: includes the generated
// FlatBuffer header.
#pragma once

#include "model/builtin_op.h"
#include "tflite_schema_generated.h"

namespace delegato::model_internal {

// The options table the format assigns to `op`, or NONE for ops without options
// (and for codes this build does not know).
tflite::BuiltinOptions OptionsTypeFor(BuiltinOp op);

// True for options tables that have no fields in the format (PadOptions, ...):
// the reader represents them as EmptyParams.
bool IsFieldlessOptions(tflite::BuiltinOptions type);

}  // namespace delegato::model_internal
