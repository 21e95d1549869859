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
  // One read of the whole file (an istreambuf_iterator copy took 13 ms on a 3.4 MB model).
  std::ifstream file(model_path, std::ios::binary | std::ios::ate);
  DLG_CHECK(file, model_path, ": cannot read the model for the cache key");
  const std::streamsize size = file.tellg();
  DLG_CHECK(size >= 0, model_path, ": cannot read the model for the cache key");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  file.seekg(0);
  file.read(reinterpret_cast<char*>(bytes.data()), size);
  DLG_CHECK(file.gcount() == size, model_path, ": short read of the model for the cache key");
  return bytes;
}

CompilationCacheSession::CompilationCacheSession(const std::string& dir, const std::string& token,
                                                 const std::string& model_path, const ModelDef& model,
                                                 const Target& target, const std::string& accelerator_name,
                                                 const DelegateOptions& options,
                                                 std::span<const uint8_t> model_file_bytes)
    : model_(model) {
  if (dir.empty()) throw UsageError("--delegate_serialize_token needs --delegate_serialize_dir");
  std::vector<uint8_t> read_again;
  if (model_file_bytes.empty()) read_again = ModelBytesForCache(model_path, model);
  const std::span<const uint8_t> bytes = model_file_bytes.empty() ? std::span<const uint8_t>(read_again) : model_file_bytes;
  cache_ = std::make_unique<TargetDelegationCache>(
      dir, token.empty() ? DefaultCacheToken(model_path) : token, bytes,
      model_path.empty() ? "<demo model>" : std::filesystem::path(model_path).filename().string(), target,
      accelerator_name, options);
}

CompilationCacheSession::CompilationCacheSession(const std::string& dir, const std::string& token,
                                                 const std::string& model_path, const ModelDef& model,
                                                 KernelSet kernels, std::span<const uint8_t> model_file_bytes)
    : model_(model) {
  if (dir.empty()) throw UsageError("--delegate_serialize_token needs --delegate_serialize_dir");
  if (kernels == KernelSet::kReference) return;
  std::vector<uint8_t> read_again;
  if (model_file_bytes.empty()) read_again = ModelBytesForCache(model_path, model);
  const std::span<const uint8_t> bytes = model_file_bytes.empty() ? std::span<const uint8_t>(read_again) : model_file_bytes;
  cpu_cache_ = std::make_unique<CpuCompilationCache>(
      dir, token.empty() ? DefaultCacheToken(model_path) : token, bytes,
      model_path.empty() ? "<demo model>" : std::filesystem::path(model_path).filename().string());
}

std::shared_ptr<PackedWeightStore> CompilationCacheSession::packed_weights() const {
  if (cache_) return cache_->packed_weights();
  if (cpu_cache_) return cpu_cache_->packed_weights();
  return nullptr;
}

std::unique_ptr<EmulatedDelegate> CompilationCacheSession::MakeDelegate(int num_threads) {
  DLG_CHECK(cache_ != nullptr, "MakeDelegate needs a target session");
  return cache_->MakeDelegate(model_, num_threads);
}

std::string CompilationCacheSession::Commit(const Interpreter& interpreter, EmulatedDelegate* delegate) {
  // Once the entry is checked or written, the store's copy of the packed
  // weights is dead weight (the kernels hold their own): a tool's run
  // prepares once, so the memory is returned.
  if (cache_) {
    DLG_CHECK(delegate != nullptr, "a target session commits with its delegate");
    std::string line = cache_->Commit(interpreter, *delegate);
    cache_->packed_weights()->Clear();
    return line;
  }
  if (cpu_cache_) {
    std::string line = cpu_cache_->Commit();
    cpu_cache_->packed_weights()->Clear();
    return line;
  }
  return "cache: not used (--kernels=reference: the reference kernels pack nothing worth caching)";
}

std::string ApplyCompilationCache(const CompilationCacheRequest& request) {
  if (request.serialize_dir.empty())
    throw UsageError("--delegate_serialize_token needs --delegate_serialize_dir");
  if (request.target == nullptr || request.delegate == nullptr || request.model == nullptr)
    return "cache: not used (without --target, use CompilationCacheSession: the CPU-only entry needs the interpreter)";
  CompilationCacheSession session(request.serialize_dir, request.serialize_token, request.model_path,
                                  *request.model, *request.target, request.accelerator_name,
                                  request.delegate->options());
  TargetDelegationCache& cache = session.cache();
  if (request.interpreter != nullptr) return cache.Commit(*request.interpreter, *request.delegate);
  return cache.CommitBeforeApply(*request.model, *request.delegate);
}

}  // namespace delegato::tools
