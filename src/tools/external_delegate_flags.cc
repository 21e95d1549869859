#include "tools/external_delegate_flags.h"

#include <iostream>

#include "core/error.h"

namespace delegato::tools {

void DeclareExternalDelegateFlags(Flags& flags) {
  flags.Declare("external_delegate_path", "TFLite external delegate plugin (.so) to apply, as benchmark_model does")
      .Declare("external_delegate_options", "its options, 'key:value;key:value'");
}

std::unique_ptr<ExternalDelegate> ApplyExternalDelegate(const Flags& flags, Interpreter& interpreter) {
  if (!flags.Has("external_delegate_path")) {
    if (flags.Has("external_delegate_options"))
      throw UsageError("--external_delegate_options needs --external_delegate_path");
    return nullptr;
  }
  ExternalDelegateOptions options;
  Status status = ParseExternalDelegateOptions(flags.GetString("external_delegate_options"), &options);
  if (!status.ok()) throw UsageError(status.message());
  std::unique_ptr<ExternalDelegate> delegate;
  status = ExternalDelegate::Load(flags.GetString("external_delegate_path"), options, &delegate);
  if (!status.ok()) Fail(status.message());
  const size_t warnings_before = interpreter.warnings().size();
  status = interpreter.ModifyGraphWithDelegate(delegate.get());
  if (!status.ok()) Fail(status.message());
  if (!delegate->prepare_error().empty()) std::cerr << "WARNING: " << delegate->prepare_error() << "\n";
  if (!interpreter.delegation_log().empty()) std::cerr << interpreter.delegation_log().back() << "\n";
  for (size_t i = warnings_before; i < interpreter.warnings().size(); ++i)
    std::cerr << "WARNING: " << interpreter.warnings()[i] << "\n";
  return delegate;
}

}  // namespace delegato::tools
