// Hosting TFLite external delegate plugins (tflite_plugin_create_delegate /
// tflite_plugin_destroy_delegate, the convention of benchmark_model's
// --external_delegate_path and LiteRT's load_delegate) inside delegato.
//
//   std::unique_ptr<delegato::ExternalDelegate> plugin;
//   Status s = delegato::ExternalDelegate::Load("libvx_delegate.so", {{"k", "v"}}, &plugin);
//   s = interpreter->ModifyGraphWithDelegate(plugin.get());   // plugin outlives interpreter
//   if (!plugin->prepare_error().empty()) ...                  // the model stayed on the CPU
//
// delegato gives the plugin a TfLiteContext over the model (tensors, nodes
// with TFLite's builtin parameter structs, the function table plugins call)
// and runs the plugin's kernels as delegate nodes of its own graph.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "delegato/delegate.h"
#include "delegato/status.h"

namespace delegato {

namespace abi {
struct TfLiteDelegate;
}
struct PluginLibrary;

using ExternalDelegateOptions = std::vector<std::pair<std::string, std::string>>;

// benchmark_model's --external_delegate_options: "k:v;k:v". Unlike
// benchmark_model, a pair that does not split into exactly key:value is an
// error instead of being dropped.
Status ParseExternalDelegateOptions(const std::string& text, ExternalDelegateOptions* options);

class ExternalDelegate : public Delegate {
 public:
  // dlopen + dlsym + create. Errors carry dlerror()'s text or the plugin's
  // report_error messages.
  static Status Load(const std::string& path, const ExternalDelegateOptions& options,
                     std::unique_ptr<ExternalDelegate>* delegate);

  // The plugin's two entry points, with TFLite's external delegate signatures.
  using PluginCreateFunction = abi::TfLiteDelegate* (*)(const char* const* keys,
                                                        const char* const* values, size_t count,
                                                        void (*report_error)(const char*));
  using PluginDestroyFunction = void (*)(abi::TfLiteDelegate*);
  // A plugin linked into the program itself (no dlopen): `name` names it in
  // messages. Used by the plugin-options fuzz target.
  static Status FromEntryPoints(const std::string& name, PluginCreateFunction create,
                                PluginDestroyFunction destroy, const ExternalDelegateOptions& options,
                                std::unique_ptr<ExternalDelegate>* delegate);
  ~ExternalDelegate() override;

  std::string name() const override;
  NodeSupport Supports(const ModelDef& model, int node_index) override;
  std::unique_ptr<DelegateKernel> CreateKernel(const ModelDef& model,
                                               const DelegatePartition& partition) override;

  // Why the plugin's Prepare failed, naming the plugin and the call ("" when
  // it did not fail). The model then runs on delegato's CPU kernels.
  const std::string& prepare_error() const;

  struct State;

 private:
  explicit ExternalDelegate(std::shared_ptr<State> state);
  static Status CreatePlugin(std::shared_ptr<PluginLibrary> library, PluginCreateFunction create,
                             const ExternalDelegateOptions& options,
                             std::unique_ptr<ExternalDelegate>* delegate);
  std::shared_ptr<State> state_;
};

}  // namespace delegato
