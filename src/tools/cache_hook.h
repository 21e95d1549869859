// Where --delegate_serialize_dir / --delegate_serialize_token take effect in
// the CLI (`delegato run`, `delegato bench`): the glue between a tool's flags
// and the compilation cache (src/delegate/compilation_cache.h).
//
// Preferred use, which lets a hit skip the target's rule evaluation and the
// kernels' weight packing, and records what compiling the partitions produced:
//
//   CompilationCacheSession session(dir, token, graph_path, *model, target,
//                                   accelerator_name, options);
//   interpreter->SetPackedWeightStore(session.packed_weights());
//   auto delegate = session.MakeDelegate(num_threads);   // instead of MakeTargetDelegate
//   interpreter->ModifyGraphWithDelegate(delegate.get());
//   std::cerr << session.Commit(*interpreter, delegate.get()) << "\n";
//
// Without --target the session caches the packed weights only:
//
//   CompilationCacheSession session(dir, token, graph_path, *model, kernels);
//   interpreter->SetPackedWeightStore(session.packed_weights());
//   interpreter->AllocateTensors();
//   std::cerr << session.Commit(*interpreter, nullptr) << "\n";
//
// ApplyCompilationCache is the one-call form for a tool that already made
// its delegate: called before the delegate is applied, it checks the
// delegate's answers against the entry (hit) or writes them (miss / stale /
// corrupt); called after, with `request.interpreter` set, it also records the
// partitions' compile results.
#pragma once

#include <memory>
#include <string>

#include "delegate/compilation_cache.h"

namespace delegato::tools {

struct CompilationCacheRequest {
  std::string serialize_dir;    // --delegate_serialize_dir ("" when not given)
  std::string serialize_token;  // --delegate_serialize_token ("" when not given)
  std::string model_path;       // --graph ("" for the built-in demo model)
  const ModelDef* model = nullptr;
  const Target* target = nullptr;        // nullptr without --target
  EmulatedDelegate* delegate = nullptr;  // nullptr without --target
  std::string accelerator_name;          // --nnapi_accelerator_name (part of the key)
  // Set when calling after ModifyGraphWithDelegate (then compile results are recorded).
  const Interpreter* interpreter = nullptr;
};

// Returns one status line for the log: "cache: hit|miss|stale|corrupt <path> (...)",
// or "cache: not used (...)" without a target (the CPU-only cache needs the
// interpreter: use CompilationCacheSession). Never fails the run for a cache
// problem; throws UsageError for inconsistent flags.
std::string ApplyCompilationCache(const CompilationCacheRequest& request);

// The token used when only --delegate_serialize_dir is given: the model file's
// stem ("demo" for the built-in model).
std::string DefaultCacheToken(const std::string& model_path);

// The model's bytes as the cache key sees them: the file, or the demo model
// serialized by the writer.
std::vector<uint8_t> ModelBytesForCache(const std::string& model_path, const ModelDef& model);

class CompilationCacheSession {
 public:
  // With a target: looks the target delegation's entry up (never fails for
  // a bad entry). Throws UsageError when `dir` is empty.
  // `model_file_bytes`: the model file as LoadModelOrDemo read it, when the
  // caller kept it (else the file is read again for the key).
  CompilationCacheSession(const std::string& dir, const std::string& token, const std::string& model_path,
                          const ModelDef& model, const Target& target, const std::string& accelerator_name,
                          const DelegateOptions& options, std::span<const uint8_t> model_file_bytes = {});
  // Without a target (CPU only): the entry holds the optimized kernels'
  // packed weights. With KernelSet::kReference nothing is packed: no
  // lookup, and Commit says the cache is not used.
  CompilationCacheSession(const std::string& dir, const std::string& token, const std::string& model_path,
                          const ModelDef& model, KernelSet kernels, std::span<const uint8_t> model_file_bytes = {});

  // Give to the interpreter before AllocateTensors / ModifyGraphWithDelegate
  // (nullptr when the cache is not used).
  std::shared_ptr<PackedWeightStore> packed_weights() const;
  // Target sessions: the target's delegate, answering from the entry on a
  // hit, its device graphs using packed_weights().
  std::unique_ptr<EmulatedDelegate> MakeDelegate(int num_threads);
  // After ModifyGraphWithDelegate (target) or AllocateTensors (CPU only,
  // `delegate` nullptr): verifies the hit or writes the entry; returns the
  // "cache: ..." line. Then empties packed_weights() (PackedWeightStore::Clear):
  // the kernels keep their own copies, and a later Prepare packs again.
  std::string Commit(const Interpreter& interpreter, EmulatedDelegate* delegate);

  TargetDelegationCache& cache() { return *cache_; }

 private:
  const ModelDef& model_;
  std::unique_ptr<TargetDelegationCache> cache_;   // with a target
  std::unique_ptr<CpuCompilationCache> cpu_cache_;  // CPU only, optimized kernels
};

}  // namespace delegato::tools
