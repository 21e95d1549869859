#include "tools/cache_hook.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "tools/flags.h"

namespace delegato::tools {

std::string DefaultCacheToken(const std::string& model_path) {
  return model_path.empty() ? "demo" : std::filesystem::path(model_path).stem().string();
}

std::vector<uint8_t> ModelBytesForCache(const std::string& model_path, const ModelDef& model) {
  if (model_path.empty()) return WriteModel(model);
  std::ifstream file(model_path, std::ios::binary);
  DLG_CHECK(file, model_path, ": cannot read the model for the cache key");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

CompilationCacheSession::CompilationCacheSession(const std::string& dir, const std::string& token,
                                                 const std::string& model_path, const ModelDef& model,
                                                 const Target& target, const std::string& accelerator_name,
                                                 const DelegateOptions& options)
    : model_(model) {
  if (dir.empty()) throw UsageError("--delegate_serialize_token needs --delegate_serialize_dir");
  const std::vector<uint8_t> bytes = ModelBytesForCache(model_path, model);
  cache_ = std::make_unique<TargetDelegationCache>(
      dir, token.empty() ? DefaultCacheToken(model_path) : token, bytes,
      model_path.empty() ? "<demo model>" : std::filesystem::path(model_path).filename().string(), target,
      accelerator_name, options);
}

std::unique_ptr<EmulatedDelegate> CompilationCacheSession::MakeDelegate(int num_threads) {
  return cache_->MakeDelegate(model_, num_threads);
}

std::string CompilationCacheSession::Commit(const Interpreter& interpreter, EmulatedDelegate& delegate) {
  return cache_->Commit(interpreter, delegate);
}

std::string ApplyCompilationCache(const CompilationCacheRequest& request) {
  if (request.serialize_dir.empty())
    throw UsageError("--delegate_serialize_token needs --delegate_serialize_dir");
  if (request.target == nullptr || request.delegate == nullptr || request.model == nullptr)
    return "cache: not used (only --target delegations are cached; the CPU path compiles nothing yet)";
  CompilationCacheSession session(request.serialize_dir, request.serialize_token, request.model_path,
                                  *request.model, *request.target, request.accelerator_name,
                                  request.delegate->options());
  TargetDelegationCache& cache = session.cache();
  if (request.interpreter != nullptr) return cache.Commit(*request.interpreter, *request.delegate);
  return cache.CommitBeforeApply(*request.model, *request.delegate);
}

}  // namespace delegato::tools
