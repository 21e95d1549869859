// Op profiling in the shape of TFLite's benchmark_model: per-node timings
// accumulated over runs, printed as the "Run Order", "Top by Computation
// Time" and "Summary by node type" tables users already read and grep, as
// text (tab-separated, fixed columns) or CSV, and as JSON.
//
// Times are integer microseconds, as TFLite records them; a profile is a set
// of entries keyed by name ("[output tensor names]:node_index"), each with a
// type ("CONV_2D", a delegate's name, "DelegateOpInvoke", "AllocateTensors").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace delegato::tools {

// C++ default stream formatting of a double (6 significant digits, "%g"-like):
// how TFLite prints its averages ("2693.12", "6.03681e+06").
std::string FormatDefault(double value);

// Running statistics of an integer series, printed as TFLite prints its
// Stat<int64_t>: "count=50 first=2795 curr=2704 min=2653 max=2849 avg=2693.12 std=21",
// "count=1 curr=637079", "count=3 curr=5(all same)" or "count=0".
class TimingStat {
 public:
  void Add(int64_t value);

  bool empty() const { return count_ == 0; }
  int64_t count() const { return count_; }
  int64_t first() const { return first_; }
  int64_t newest() const { return newest_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  int64_t sum() const { return sum_; }
  double avg() const;            // NaN when empty
  int64_t std_deviation() const;  // population standard deviation, truncated
  bool all_same() const { return count_ == 0 || min_ == max_; }

  std::string ToString() const;
  // {count, first, curr, min, max, avg, std}; avg is null when empty.
  nlohmann::json ToJson() const;

 private:
  int64_t count_ = 0;
  int64_t first_ = 0, newest_ = 0;
  int64_t min_ = 0, max_ = 0;
  int64_t sum_ = 0;
  double squared_sum_ = 0;
};

// One profiled node or event, accumulated over runs.
struct ProfileEntry {
  std::string name;
  std::string type;
  int run_order = 0;  // position at its first appearance
  TimingStat time_us;
  TimingStat mem_bytes;
  int64_t times_called = 0;
};

class OpProfile {
 public:
  enum class Format { kText, kCsv };

  // Records one entry within the current run. An entry seen again (same
  // name) accumulates; a node called twice in a run counts twice.
  void Add(const std::string& name, const std::string& type, int64_t time_us,
           int64_t mem_bytes = 0);
  // Closes the current run: its total is the sum of the times added since the
  // previous EndRun (TFLite's "Timings (microseconds)"). No-op when nothing
  // was added.
  void EndRun();

  bool empty() const { return run_total_us_.empty(); }
  const std::vector<ProfileEntry>& entries() const { return entries_; }
  const TimingStat& run_total_us() const { return run_total_us_; }
  int64_t num_runs() const { return run_total_us_.count(); }

  // The tables, "Number of nodes executed", the summary by node type, then
  // "Timings (microseconds): ...", "Memory (bytes): count=0", "N nodes observed".
  std::string Report(Format format) const;
  nlohmann::json ToJson() const;

  // Entries in the orders of the tables (indices into entries()).
  std::vector<size_t> RunOrder() const;
  std::vector<size_t> ByTime() const;

 private:
  std::string Table(const std::string& title, const std::vector<size_t>& order, Format format) const;
  std::string SummaryByType(Format format) const;

  std::vector<ProfileEntry> entries_;
  std::map<std::string, size_t> index_;
  int64_t open_run_total_ = 0;
  bool run_open_ = false;
  TimingStat run_total_us_;
};

// A whole profiling section as benchmark_model prints it:
//   <title>
//   <graph report>
//   Delegate internal:        (only when `delegate_internal` has runs)
//   <its report>
std::string FormatProfileSection(const std::string& title, const OpProfile& graph,
                                 const OpProfile* delegate_internal, OpProfile::Format format);

}  // namespace delegato::tools
