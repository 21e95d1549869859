// delegato cache ls|clear DIR: what a compilation cache directory holds
// (--delegate_serialize_dir), and removing its entries.
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "delegate/compilation_cache.h"
#include "tools/commands.h"
#include "tools/flags.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

namespace fs = std::filesystem;

Flags CacheFlags() {
  Flags flags;
  flags.Declare("format", "ls: text (default) or json")
      .Declare("token", "clear: only the entries of this token")
      .Declare("help", "show this help", true);
  return flags;
}

constexpr const char* kUsage =
    "usage: delegato cache ls DIR [--format=json]     list the entries of a compilation cache\n"
    "       delegato cache clear DIR [--token=T]      remove its entries (all, or one token's)\n";

// "CONV_2D x15, DEPTHWISE_CONV_2D x13"
std::string OpCounts(const std::vector<std::string>& ops) {
  std::vector<std::pair<std::string, int>> counts;
  for (const std::string& op : ops) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == op; });
    if (it == counts.end()) counts.emplace_back(op, 1);
    else ++it->second;
  }
  std::string out;
  for (const auto& [op, n] : counts) out += (out.empty() ? "" : ", ") + op + " x" + std::to_string(n);
  return out;
}

std::string TensorList(const std::vector<int32_t>& tensors) {
  std::string out = "[";
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(tensors[i]);
  }
  return out + "]";
}

nlohmann::json EntryJson(const CacheFileInfo& file) {
  nlohmann::json j = {{"path", file.path},
                      {"bytes", file.size},
                      {"status", file.status == CacheStatus::kHit ? "ok" : CacheStatusName(file.status)}};
  if (!file.detail.empty()) j["detail"] = file.detail;
  if (file.status != CacheStatus::kHit) return j;
  j["token"] = file.entry.token;
  j["fingerprint"] = FingerprintHex(file.entry.fingerprint);
  j["description"] = file.entry.description;
  nlohmann::json sections = nlohmann::json::array();
  for (const CacheSection& s : file.entry.sections)
    sections.push_back({{"type", CacheSectionName(s.type)}, {"type_id", s.type}, {"bytes", s.data.size()},
                        {"required", (s.flags & kSectionRequired) != 0}});
  j["sections"] = sections;
  CachedDelegation d;
  std::string detail;
  if (LoadDelegation(file.entry, -1, &d, &detail)) {
    j["nodes"] = d.placements.size();
    j["nodes_delegated"] = d.delegated_nodes().size();
    nlohmann::json partitions = nlohmann::json::array();
    for (const CachedPartition& p : d.partitions) {
      nlohmann::json pj = {{"index", p.index}, {"nodes", p.nodes}, {"ops", p.ops},
                           {"inputs", p.inputs}, {"outputs", p.outputs}};
      if (p.compiled) {
        pj["device_arena_bytes"] = p.device_arena_bytes;
        pj["compile_us"] = p.compile_us;
      }
      partitions.push_back(pj);
    }
    j["partitions"] = partitions;
  } else if (file.entry.Find(CacheSectionType::kPlacement) != nullptr) {
    j["delegation_error"] = detail;
  }
  return j;
}

void PrintEntry(const CacheFileInfo& file, std::ostream& out) {
  out << fs::path(file.path).filename().string() << "  " << file.size << " bytes  ";
  if (file.status != CacheStatus::kHit) {
    out << CacheStatusName(file.status) << " (" << file.detail << "): ignored by runs, rewritten by the next run of its key\n";
    return;
  }
  out << "token=" << file.entry.token << "\n    " << file.entry.description << "\n";
  for (const CacheSection& s : file.entry.sections)
    out << "    section " << CacheSectionName(s.type) << " (type " << s.type << (s.flags & kSectionRequired ? ", required" : "")
        << "): " << s.data.size() << " bytes\n";
  CachedDelegation d;
  std::string detail;
  if (!LoadDelegation(file.entry, -1, &d, &detail)) {
    if (file.entry.Find(CacheSectionType::kPlacement) != nullptr) out << "    unreadable delegation: " << detail << "\n";
    return;
  }
  out << "    " << d.delegated_nodes().size() << " of " << d.placements.size() << " nodes delegated in "
      << d.partitions.size() << " partition(s)\n";
  for (const CachedPartition& p : d.partitions) {
    out << "    partition " << p.index << ": " << p.nodes.size() << (p.nodes.size() == 1 ? " node (" : " nodes (")
        << OpCounts(p.ops) << "), in "
        << TensorList(p.inputs) << " out " << TensorList(p.outputs);
    if (p.compiled)
      out << ", device arena " << p.device_arena_bytes << " bytes, compiled in " << p.compile_us / 1000 << " ms";
    out << "\n";
  }
}

int Ls(const std::string& dir, const Flags& flags) {
  const std::string format = flags.GetString("format", "text");
  if (format != "text" && format != "json") throw UsageError("--format must be text or json, got '" + format + "'");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) Fail(dir, ": not a directory");
  const std::vector<CacheFileInfo> files = ListCacheDir(dir);
  uint64_t total = 0;
  for (const CacheFileInfo& f : files) total += f.size;
  if (format == "json") {
    nlohmann::json entries = nlohmann::json::array();
    for (const CacheFileInfo& f : files) entries.push_back(EntryJson(f));
    std::cout << nlohmann::json{{"dir", dir}, {"entries", entries}, {"total_bytes", total}}.dump(2) << "\n";
    return 0;
  }
  std::cout << dir << ": " << files.size() << " entr" << (files.size() == 1 ? "y" : "ies") << ", " << total
            << " bytes\n";
  for (const CacheFileInfo& f : files) PrintEntry(f, std::cout);
  return 0;
}

int Clear(const std::string& dir, const Flags& flags) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) Fail(dir, ": not a directory");
  const bool by_token = flags.Has("token");
  const std::string prefix = CacheFileToken(flags.GetString("token")) + "_";
  int removed = 0;
  uint64_t bytes = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || !IsCacheFileName(name)) continue;  // never touch other files
    if (by_token && !(name.starts_with(prefix) || name.starts_with("." + prefix))) continue;
    const uint64_t size = e.file_size(ec);
    if (fs::remove(e.path(), ec)) {
      ++removed;
      bytes += size;
    } else {
      std::cerr << "delegato cache: cannot remove " << e.path().string() << ": " << ec.message() << "\n";
    }
  }
  std::cout << "removed " << removed << " file" << (removed == 1 ? "" : "s") << " (" << bytes << " bytes) from "
            << dir << "\n";
  return 0;
}

int Cache(const Args& args) {
  Flags flags = CacheFlags();
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << kUsage << flags.Help();
    return 0;
  }
  const auto& positional = flags.positional();
  if (positional.size() != 2) throw UsageError(std::string("expects a subcommand and a directory\n") + kUsage);
  if (positional[0] == "ls") return Ls(positional[1], flags);
  if (positional[0] == "clear") return Clear(positional[1], flags);
  throw UsageError("unknown subcommand '" + positional[0] + "' (ls or clear)\n" + kUsage);
}

}  // namespace

int CmdCache(const Args& args) {
  return RunCommand("cache", [&] { return Cache(args); });
}

}  // namespace delegato::tools
