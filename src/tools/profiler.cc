#include "tools/profiler.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <tuple>

namespace delegato::tools {
namespace {

constexpr const char* kRule = "==============================";

// A text-table cell: a tab, then the value right-aligned in `width`, numbers
// with three decimals (benchmark_model's column layout).
std::ostream& Cell(std::ostream& out, int width) {
  return out << "\t" << std::right << std::setw(width) << std::fixed << std::setprecision(3);
}

// Percentages of a zero total would print "nan": say 0 instead, so parsers
// of tiny models' profiles keep working.
double Percent(double part, double total) { return total > 0 ? part * 100.0 / total : 0.0; }

}  // namespace

std::string FormatDefault(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// ------------------------------------------------------------------ TimingStat

void TimingStat::Add(int64_t value) {
  if (count_ == 0) {
    first_ = value;
    min_ = max_ = value;
  }
  newest_ = value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += value;
  squared_sum_ += static_cast<double>(value) * static_cast<double>(value);
  ++count_;
}

double TimingStat::avg() const {
  return empty() ? std::numeric_limits<double>::quiet_NaN()
                 : static_cast<double>(sum_) / static_cast<double>(count_);
}

int64_t TimingStat::std_deviation() const {
  if (all_same()) return 0;
  // Variance truncated to an integer before the square root, as TFLite does.
  const double mean = avg();
  const auto variance = static_cast<int64_t>(squared_sum_ / static_cast<double>(count_) - mean * mean);
  return variance <= 0 ? 0 : static_cast<int64_t>(std::sqrt(static_cast<double>(variance)));
}

std::string TimingStat::ToString() const {
  std::ostringstream out;
  if (empty()) {
    out << "count=0";
  } else if (all_same()) {
    out << "count=" << count_ << " curr=" << newest_;
    if (count_ > 1) out << "(all same)";
  } else {
    out << "count=" << count_ << " first=" << first_ << " curr=" << newest_ << " min=" << min_
        << " max=" << max_ << " avg=" << avg() << " std=" << std_deviation();
  }
  return out.str();
}

nlohmann::json TimingStat::ToJson() const {
  nlohmann::json j = {{"count", count_}};
  if (empty()) {
    j["avg"] = nullptr;
    return j;
  }
  j["first"] = first_;
  j["curr"] = newest_;
  j["min"] = min_;
  j["max"] = max_;
  j["avg"] = avg();
  j["std"] = std_deviation();
  return j;
}

// ------------------------------------------------------------------ OpProfile

void OpProfile::Add(const std::string& name, const std::string& type, int64_t time_us,
                    int64_t mem_bytes) {
  auto [it, inserted] = index_.emplace(name, entries_.size());
  if (inserted) {
    ProfileEntry entry;
    entry.name = name;
    entry.type = type;
    entry.run_order = static_cast<int>(entries_.size());
    entries_.push_back(std::move(entry));
  }
  ProfileEntry& entry = entries_[it->second];
  entry.time_us.Add(time_us);
  entry.mem_bytes.Add(mem_bytes);
  ++entry.times_called;
  open_run_total_ += time_us;
  run_open_ = true;
}

void OpProfile::EndRun() {
  if (!run_open_) return;
  run_total_us_.Add(open_run_total_);
  open_run_total_ = 0;
  run_open_ = false;
}

std::vector<size_t> OpProfile::RunOrder() const {
  std::vector<size_t> order(entries_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries_[a].run_order < entries_[b].run_order;
  });
  return order;
}

std::vector<size_t> OpProfile::ByTime() const {
  std::vector<size_t> order = RunOrder();
  // Slowest first; ties keep the run order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries_[a].time_us.avg() > entries_[b].time_us.avg();
  });
  return order;
}

std::string OpProfile::Table(const std::string& title, const std::vector<size_t>& order,
                             Format format) const {
  std::ostringstream out;
  out << kRule << " " << title << " " << kRule << "\n";
  if (format == Format::kCsv) {
    out << "node type, first, avg_ms, %, cdf%, mem KB, times called, name\n";
  } else {
    Cell(out, 24) << "[node type]";
    Cell(out, 9) << "[first]";
    Cell(out, 9) << "[avg ms]";
    Cell(out, 8) << "[%]";
    Cell(out, 8) << "[cdf%]";
    Cell(out, 10) << "[mem KB]";
    Cell(out, 9) << "[times called]";
    out << "\t[Name]\n";
  }
  const double total = static_cast<double>(run_total_us_.sum());
  const int64_t runs = std::max<int64_t>(1, num_runs());
  double cumulative = 0;
  for (size_t i : order) {
    const ProfileEntry& e = entries_[i];
    cumulative += static_cast<double>(e.time_us.sum());
    const double first_ms = static_cast<double>(e.time_us.first()) / 1000.0;
    const double avg_ms = e.time_us.avg() / 1000.0;
    const double percent = Percent(static_cast<double>(e.time_us.sum()), total);
    const double cdf = Percent(cumulative, total);
    const double mem_kb = static_cast<double>(e.mem_bytes.newest()) / 1000.0;
    const int64_t times_called = e.times_called / runs;
    if (format == Format::kCsv) {
      std::ostringstream row;  // default number formatting, as TFLite's CSV
      row << e.type << ", " << first_ms << ", " << avg_ms << ", " << percent << "%, " << cdf << "%, "
          << mem_kb << ", " << times_called << ", " << e.name;
      out << row.str() << "\n";
    } else {
      Cell(out, 24) << e.type;
      Cell(out, 9) << first_ms;
      Cell(out, 9) << avg_ms;
      Cell(out, 7) << percent << "%";
      Cell(out, 7) << cdf << "%";
      Cell(out, 10) << mem_kb;
      Cell(out, 9) << times_called;
      out << "\t" << e.name << "\n";
    }
  }
  out << "\n";
  return out.str();
}

std::string OpProfile::SummaryByType(Format format) const {
  struct TypeTotals {
    int64_t count = 0, time_us = 0, mem_bytes = 0, times_called = 0;
  };
  std::map<std::string, TypeTotals> by_type;
  const int64_t runs = std::max<int64_t>(1, num_runs());
  int64_t accumulated_us = 0;
  for (const ProfileEntry& e : entries_) {
    // Per-run time of each node, truncated to whole microseconds first.
    const int64_t per_run_us = e.time_us.sum() / runs;
    accumulated_us += per_run_us;
    TypeTotals& t = by_type[e.type];
    ++t.count;
    t.time_us += per_run_us;
    t.mem_bytes += e.mem_bytes.newest();
    t.times_called += e.times_called / runs;
  }
  // Slowest type first; ties by type name, descending (TFLite's ordering).
  std::vector<std::pair<std::string, TypeTotals>> sorted(by_type.begin(), by_type.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.time_us, a.first, a.second.mem_bytes) >
           std::tie(b.second.time_us, b.first, b.second.mem_bytes);
  });

  std::ostringstream out;
  out << "Number of nodes executed: " << entries_.size() << "\n";
  out << kRule << " Summary by node type " << kRule << "\n";
  if (format == Format::kCsv) {
    out << "node type, count, avg_ms, avg %, cdf %, mem KB, times called\n";
  } else {
    Cell(out, 24) << "[Node type]";
    Cell(out, 9) << "[count]";
    Cell(out, 10) << "[avg ms]";
    Cell(out, 11) << "[avg %]";
    Cell(out, 11) << "[cdf %]";
    Cell(out, 10) << "[mem KB]";
    Cell(out, 10) << "[times called]";
    out << "\n";
  }
  float cdf = 0.0f;
  for (const auto& [type, t] : sorted) {
    const float memory_kb = static_cast<float>(t.mem_bytes) / 1000.0f;
    const float time_ms = static_cast<float>(t.time_us) / 1000.0f;
    const float percent =
        accumulated_us > 0 ? static_cast<float>(t.time_us) / static_cast<float>(accumulated_us) * 100.0f
                           : 0.0f;
    cdf += percent;
    if (format == Format::kCsv) {
      std::ostringstream row;
      row << type << ", " << t.count << ", " << time_ms << ", " << percent << "%, " << cdf << "%, "
          << memory_kb << ", " << t.times_called;
      out << row.str() << "\n";
    } else {
      Cell(out, 24) << type;
      Cell(out, 9) << t.count;
      Cell(out, 10) << time_ms;
      Cell(out, 10) << percent << "%";
      Cell(out, 10) << cdf << "%";
      Cell(out, 10) << memory_kb;
      Cell(out, 9) << t.times_called;
      out << "\n";
    }
  }
  out << "\n";
  return out.str();
}

std::string OpProfile::Report(Format format) const {
  std::string report = Table("Run Order", RunOrder(), format);
  report += Table("Top by Computation Time", ByTime(), format);
  report += SummaryByType(format);
  report += "Timings (microseconds): " + run_total_us_.ToString() + "\n";
  report += "Memory (bytes): count=0\n";
  report += std::to_string(entries_.size()) + " nodes observed\n";
  return report;
}

nlohmann::json OpProfile::ToJson() const {
  const double total = static_cast<double>(run_total_us_.sum());
  const int64_t runs = std::max<int64_t>(1, num_runs());
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i : RunOrder()) {
    const ProfileEntry& e = entries_[i];
    nodes.push_back({{"name", e.name},
                     {"type", e.type},
                     {"run_order", e.run_order},
                     {"first_us", e.time_us.first()},
                     {"avg_us", e.time_us.avg()},
                     {"min_us", e.time_us.min()},
                     {"max_us", e.time_us.max()},
                     {"percent", Percent(static_cast<double>(e.time_us.sum()), total)},
                     {"mem_kb", static_cast<double>(e.mem_bytes.newest()) / 1000.0},
                     {"times_called", e.times_called / runs}});
  }
  std::map<std::string, std::pair<int64_t, int64_t>> by_type;  // type -> (count, us per run)
  for (const ProfileEntry& e : entries_) {
    auto& t = by_type[e.type];
    ++t.first;
    t.second += e.time_us.sum() / runs;
  }
  nlohmann::json types = nlohmann::json::array();
  for (const auto& [type, t] : by_type)
    types.push_back({{"type", type}, {"count", t.first}, {"avg_us", t.second}});
  return {{"runs", num_runs()},
          {"run_total_us", run_total_us_.ToJson()},
          {"nodes_executed", entries_.size()},
          {"nodes", nodes},
          {"by_type", types}};
}

std::string FormatProfileSection(const std::string& title, const OpProfile& graph,
                                 const OpProfile* delegate_internal, OpProfile::Format format) {
  std::string out = title + "\n";
  out += graph.Report(format) + "\n";
  if (delegate_internal != nullptr && !delegate_internal->empty())
    out += "Delegate internal: \n" + delegate_internal->Report(format) + "\n";
  return out + "\n";
}

}  // namespace delegato::tools
