// The op-profiling tables and statistics lines of `delegato bench`, checked
// character for character against benchmark_model's layout (header lines
// copied from its real output).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tools/profiler.h"

namespace delegato::tools {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TimingStatTest, FormatsLikeTfliteStat) {
  TimingStat empty;
  EXPECT_EQ(empty.ToString(), "count=0");
  EXPECT_TRUE(std::isnan(empty.avg()));

  TimingStat one;
  one.Add(637079);
  EXPECT_EQ(one.ToString(), "count=1 curr=637079");

  TimingStat same;
  same.Add(5);
  same.Add(5);
  EXPECT_EQ(same.ToString(), "count=2 curr=5(all same)");

  TimingStat three;
  for (int64_t v : {10, 20, 30}) three.Add(v);
  // Population variance 66.67 truncated to 66, sqrt 8.12 truncated to 8.
  EXPECT_EQ(three.ToString(), "count=3 first=10 curr=30 min=10 max=30 avg=20 std=8");

  TimingStat fractional;
  for (int64_t v : {2795, 2704, 2653, 2849}) fractional.Add(v);
  EXPECT_EQ(fractional.ToString(), "count=4 first=2795 curr=2849 min=2653 max=2849 avg=2750.25 std=76");
}

TEST(TimingStatTest, DefaultStreamFormatting) {
  EXPECT_EQ(FormatDefault(6036807.0), "6.03681e+06");
  EXPECT_EQ(FormatDefault(2693.12), "2693.12");
  EXPECT_EQ(FormatDefault(66002 / 1e3), "66.002");
  EXPECT_EQ(FormatDefault(637079.0), "637079");
  EXPECT_EQ(FormatDefault(7580.0 / 1024.0), "7.40234");
}

TEST(OpProfileTest, TablesMatchBenchmarkModelLayout) {
  OpProfile profile;
  profile.Add("[a]:0", "CONV_2D", 1500);
  profile.Add("[b]:1", "ADD", 500);
  profile.EndRun();
  const std::vector<std::string> lines = Lines(profile.Report(OpProfile::Format::kText));
  const std::vector<std::string> expected = {
      "============================== Run Order ==============================",
      "\t             [node type]\t  [first]\t [avg ms]\t     [%]\t  [cdf%]\t  [mem KB]\t[times called]\t[Name]",
      "\t                 CONV_2D\t    1.500\t    1.500\t 75.000%\t 75.000%\t     0.000\t        1\t[a]:0",
      "\t                     ADD\t    0.500\t    0.500\t 25.000%\t100.000%\t     0.000\t        1\t[b]:1",
      "",
      "============================== Top by Computation Time ==============================",
      "\t             [node type]\t  [first]\t [avg ms]\t     [%]\t  [cdf%]\t  [mem KB]\t[times called]\t[Name]",
      "\t                 CONV_2D\t    1.500\t    1.500\t 75.000%\t 75.000%\t     0.000\t        1\t[a]:0",
      "\t                     ADD\t    0.500\t    0.500\t 25.000%\t100.000%\t     0.000\t        1\t[b]:1",
      "",
      "Number of nodes executed: 2",
      "============================== Summary by node type ==============================",
      "\t             [Node type]\t  [count]\t  [avg ms]\t    [avg %]\t    [cdf %]\t  [mem KB]\t[times called]",
      "\t                 CONV_2D\t        1\t     1.500\t    75.000%\t    75.000%\t     0.000\t        1",
      "\t                     ADD\t        1\t     0.500\t    25.000%\t   100.000%\t     0.000\t        1",
      "",
      "Timings (microseconds): count=1 curr=2000",
      "Memory (bytes): count=0",
      "2 nodes observed",
  };
  EXPECT_EQ(lines, expected);
}

TEST(OpProfileTest, AccumulatesRunsAndOrdersByTime) {
  OpProfile profile;
  // Two runs; node "[x]:0" is slower on average than "[y]:1".
  profile.Add("[x]:0", "CONV_2D", 6458);
  profile.Add("[y]:1", "CONV_2D", 100);
  profile.EndRun();
  profile.Add("[x]:0", "CONV_2D", 6424);
  profile.Add("[y]:1", "CONV_2D", 300);
  profile.EndRun();
  EXPECT_EQ(profile.num_runs(), 2);
  EXPECT_EQ(profile.run_total_us().ToString(), "count=2 first=6558 curr=6724 min=6558 max=6724 avg=6641 std=83");
  const std::string report = profile.Report(OpProfile::Format::kText);
  EXPECT_NE(report.find("\t                 CONV_2D\t    6.458\t    6.441\t 96.988%\t 96.988%\t     0.000\t        1\t[x]:0"),
            std::string::npos)
      << report;
  // The summary sums per-run times of a type: (6441 + 200) us, 2 nodes, called 2 times per run.
  EXPECT_NE(report.find("\t                 CONV_2D\t        2\t     6.641\t   100.000%\t   100.000%\t     0.000\t        2"),
            std::string::npos)
      << report;
  EXPECT_EQ(profile.ByTime(), (std::vector<size_t>{0, 1}));
}

TEST(OpProfileTest, CsvLayout) {
  OpProfile profile;
  profile.Add("[a]:0", "CONV_2D", 1500);
  profile.Add("[b]:1", "ADD", 500);
  profile.EndRun();
  const std::string csv = profile.Report(OpProfile::Format::kCsv);
  EXPECT_NE(csv.find("node type, first, avg_ms, %, cdf%, mem KB, times called, name\n"
                     "CONV_2D, 1.5, 1.5, 75%, 75%, 0, 1, [a]:0\n"
                     "ADD, 0.5, 0.5, 25%, 100%, 0, 1, [b]:1\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("node type, count, avg_ms, avg %, cdf %, mem KB, times called\n"
                     "CONV_2D, 1, 1.5, 75%, 75%, 0, 1\n"),
            std::string::npos)
      << csv;
}

TEST(OpProfileTest, ZeroTimesGiveZeroPercentNotNan) {
  OpProfile profile;
  profile.Add("[a]:0", "RESHAPE", 0);
  profile.EndRun();
  const std::string report = profile.Report(OpProfile::Format::kText);
  EXPECT_EQ(report.find("nan"), std::string::npos) << report;
  EXPECT_NE(report.find("  0.000%"), std::string::npos) << report;
}

TEST(OpProfileTest, SectionWithDelegateInternal) {
  OpProfile graph, internal, empty;
  graph.Add("[out]:5", "nnapi-1.2", 900);
  graph.EndRun();
  internal.Add("Delegate/CONV_2D:0", "DelegateOpInvoke", 800);
  internal.EndRun();
  const std::string section =
      FormatProfileSection("Operator-wise Profiling Info for Regular Benchmark Runs:", graph, &internal,
                           OpProfile::Format::kText);
  EXPECT_EQ(section.rfind("Operator-wise Profiling Info for Regular Benchmark Runs:\n", 0), 0u);
  EXPECT_NE(section.find("\n1 nodes observed\n\nDelegate internal: \n=============================="),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("\tDelegate/CONV_2D:0\n"), std::string::npos);
  const std::string without = FormatProfileSection("T:", graph, &empty, OpProfile::Format::kText);
  EXPECT_EQ(without.find("Delegate internal"), std::string::npos);
}

}  // namespace
}  // namespace delegato::tools
