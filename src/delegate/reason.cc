#include <iterator>
#include <string_view>

#include "delegato/delegate.h"

namespace delegato {
namespace {

struct NamedCode {
  ReasonCode code;
  const char* name;
};

// The names are a file format: reports and JSON consumers match on them.
constexpr NamedCode kReasonNames[] = {
    {ReasonCode::kUnsupportedOp, "unsupported_op"},
    {ReasonCode::kUnsupportedOpVersion, "unsupported_op_version"},
    {ReasonCode::kFeatureLevelTooLow, "feature_level_too_low"},
    {ReasonCode::kUnsupportedInputType, "unsupported_input_type"},
    {ReasonCode::kUnsupportedOutputType, "unsupported_output_type"},
    {ReasonCode::kUnsupportedOperandValue, "unsupported_operand_value"},
    {ReasonCode::kUnsupportedQuantization, "unsupported_quantization"},
    {ReasonCode::kUnsupportedRank, "unsupported_rank"},
    {ReasonCode::kUnsupportedShape, "unsupported_shape"},
    {ReasonCode::kDynamicShape, "dynamic_shape"},
    {ReasonCode::kHybridOp, "hybrid_op"},
    {ReasonCode::kNonConstantInput, "non_constant_input"},
    {ReasonCode::kDriverRejected, "driver_rejected"},
    {ReasonCode::kPrepareFailed, "prepare_failed"},
    {ReasonCode::kClaimedByEarlierDelegate, "claimed_by_earlier_delegate"},
    {ReasonCode::kUserExcluded, "user_excluded"},
    {ReasonCode::kPartitionLimit, "partition_limit"},
    {ReasonCode::kBelowMinNodes, "below_min_nodes"},
    {ReasonCode::kAfterCut, "after_cut"},
};

}  // namespace

const char* ReasonCodeName(ReasonCode code) {
  for (const NamedCode& entry : kReasonNames) {
    if (entry.code == code) return entry.name;
  }
  return "unknown";
}

bool ParseReasonCode(std::string_view name, ReasonCode* code) {
  for (const NamedCode& entry : kReasonNames) {
    if (name == entry.name) {
      *code = entry.code;
      return true;
    }
  }
  return false;
}

}  // namespace delegato
