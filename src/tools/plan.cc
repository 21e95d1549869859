// delegato plan: which nodes of a model a target's delegate and driver take,
// which stay on the CPU and why, and what to change. Text for people, JSON
// for CI (--fail_on), DOT and a self-contained HTML page for pictures.
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "passes/passes.h"
#include "tools/commands.h"
#include "tools/external_delegate_flags.h"
#include "tools/flags.h"
#include "tools/placement.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(c));
  return out;
}

// "uint8 -> int8" from the node's first activation input to its first output.
std::string NodeTypes(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  std::string out = op.outputs.empty() ? "" : Lower(DataTypeName(graph.tensors[op.outputs[0]].type));
  std::string in = NodeDtypeClass(model, node);
  return in == out ? in : in + "->" + out;
}

std::string OutputName(const ModelDef& model, int node) {
  const SubgraphDef& graph = model.subgraphs[0];
  const OperatorDef& op = graph.operators[node];
  return op.outputs.empty() ? "" : graph.tensors[op.outputs[0]].name;
}

std::string Shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

// Nodes whose placement rests on a rule without a public source.
int PlaceholderDecisions(const Placement& p) {
  int count = 0;
  for (const NodePlacement& node : p.plan.nodes) {
    for (const Reason& r : node.reasons) {
      if (r.message.rfind(kPlaceholderMark, 0) == 0) {
        ++count;
        break;
      }
    }
  }
  return count;
}

nlohmann::json KnownDifferencesJson(const Target& target) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : target.known_differences) list.push_back({{"oracle", d.oracle}, {"says", d.says}});
  return list;
}


// What `delegato fix` would change, priced: the passes addressing the CPU
// nodes applied to a copy of the model, then the greedy and cost-aware plans
// of the result.
struct AfterFix {
  std::vector<std::string> passes;
  CostEstimate greedy, cost;
  int nodes_delegated = 0, nodes_total = 0, partitions = 0;
  const CostEstimate& best() const { return cost.total_us() < greedy.total_us() ? cost : greedy; }
};

std::optional<AfterFix> PriceFix(const ModelDef& model, const Placement& p, const std::string& target,
                                 const PlacementOptions& options) {
  std::vector<const passes::Pass*> chosen;
  for (const auto& pass : passes::AllPasses()) {
    if (pass->name() == "uint8-to-int8") {
      bool has_int8_to_uint8 = false;
      for (const auto* c : chosen) has_int8_to_uint8 |= c->name() == "int8-to-uint8";
      if (has_int8_to_uint8) continue;
    }
    bool addresses = false;
    for (size_t i = 0; i < p.plan.nodes.size() && !addresses; ++i) {
      if (p.plan.nodes[i].delegated) continue;
      for (const Reason& r : p.plan.nodes[i].reasons)
        if (pass->Addresses(model, static_cast<int>(i), r)) addresses = true;
    }
    if (addresses) chosen.push_back(pass.get());
  }
  if (chosen.empty()) return std::nullopt;
  try {
    ModelDef fixed = model;
    passes::PassContext ctx;
    ctx.target = &p.target;
    ctx.accelerator_name = options.accelerator_name;
    AfterFix out;
    for (const auto* pass : chosen) {
      if (pass->Run(fixed, ctx).changed()) out.passes.push_back(pass->name());
    }
    if (out.passes.empty()) return std::nullopt;
    const Placement after = PlaceModel(fixed, target, options);
    const PlanAlternatives alternatives = CompareAlternatives(fixed, after);
    out.greedy = alternatives.greedy;
    out.cost = alternatives.cost;
    out.nodes_delegated = after.plan.num_delegated_nodes;
    out.nodes_total = static_cast<int>(after.plan.nodes.size());
    out.partitions = after.plan.num_partitions();
    return out;
  } catch (const Error&) {
    return std::nullopt;  // a pass refused the model: no estimate after fix
  }
}

// CPU nodes grouped by (reason code, layer, fix), largest group first.
struct FallbackGroup {
  std::string code, layer, fix, example;
  std::vector<int> nodes;
};

std::vector<FallbackGroup> FallbackGroups(const Placement& p) {
  std::vector<FallbackGroup> groups;
  for (size_t i = 0; i < p.plan.nodes.size(); ++i) {
    const NodePlacement& node = p.plan.nodes[i];
    if (node.delegated || node.reasons.empty()) continue;
    const Reason& r = node.reasons.front();
    const std::string code(ReasonCodeName(r.code));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const FallbackGroup& g) {
      return g.code == code && g.layer == r.layer && g.fix == r.fix;
    });
    if (it == groups.end()) {
      groups.push_back({code, r.layer, r.fix, r.message, {}});
      it = groups.end() - 1;
    }
    it->nodes.push_back(static_cast<int>(i));
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const FallbackGroup& a, const FallbackGroup& b) { return a.nodes.size() > b.nodes.size(); });
  return groups;
}

struct Recommendation {
  std::string choice;  // "greedy", "cost", "cpu_only", "fix"
  std::string text;
};

std::string Ms(double us) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << us / 1000 << " ms";
  return out.str();
}

Recommendation Recommend(const PlanAlternatives& a, const std::optional<AfterFix>& fix) {
  struct Option {
    std::string choice;
    double us;
  };
  std::vector<Option> options = {{"greedy", a.greedy.total_us()},
                                 {"cost", a.cost.total_us()},
                                 {"cpu_only", a.cpu_only.total_us()}};
  if (fix) options.push_back({"fix", fix->best().total_us()});
  const Option best = *std::min_element(options.begin(), options.end(), [](const Option& x, const Option& y) {
    return x.us < y.us - 1e-9;
  });
  Recommendation r{best.choice, ""};
  const CostEstimate* chosen = best.choice == "greedy" ? &a.greedy
                               : best.choice == "cost"   ? &a.cost
                               : best.choice == "cpu_only" ? &a.cpu_only
                                                           : &fix->best();
  const std::string caveat = chosen->uses_placeholders && !a.greedy.uses_placeholders
                                 ? " [this estimate rests on placeholder numbers the greedy one does not use: "
                                   "measure before relying on it]"
                                 : "";
  if (best.choice == "greedy") {
    r.text = "the greedy partitioning (what the delegate does by default): nothing to change";
  } else if (best.choice == "cost") {
    r.text = "the cost-aware partitioning (" + Ms(a.cost.total_us()) + " vs " + Ms(a.greedy.total_us()) +
             " greedy): keep the nodes listed under 'realised by' off the delegate";
  } else if (best.choice == "cpu_only") {
    r.text = "the CPU alone (" + Ms(a.cpu_only.total_us()) + " vs " + Ms(a.greedy.total_us()) +
             " greedy): the hand-overs and fallbacks cost more than the accelerator saves";
  } else {
    std::string list;
    for (const auto& name : fix->passes) list += (list.empty() ? "" : ",") + name;
    r.text = "`delegato fix --passes " + list + "` (" + Ms(fix->best().total_us()) + " after the fix vs " +
             Ms(std::min({a.greedy.total_us(), a.cost.total_us(), a.cpu_only.total_us()})) +
             " for the best plan of the model as it is); check its accuracy report";
  }
  r.text += caveat;
  return r;
}

nlohmann::json EstimateJson(const CostEstimate& e) {
  return {{"total_us", e.total_us()},
          {"accelerator_us", e.accelerator_us},
          {"cpu_us", e.cpu_us},
          {"sync_us", e.sync_us},
          {"partitions", e.partitions},
          {"first_inference_compile_ms", e.first_inference_compile_ms},
          {"uses_placeholders", e.uses_placeholders},
          {"placeholders", e.placeholders}};
}

// Everything the summary says, computed once for text, JSON and HTML.
struct Summary {
  PlanAlternatives alternatives;
  std::optional<AfterFix> fix;
  std::vector<FallbackGroup> groups;
  Recommendation recommendation;
  std::string mode;  // greedy | cost: which plan the node table shows
};

nlohmann::json PlanJson(const ModelDef& model, const std::string& model_label, const Placement& p,
                        const Summary* summary) {
  using nlohmann::json;
  const SubgraphDef& graph = model.subgraphs[0];
  json nodes = json::array();
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const NodePlacement& placement = p.plan.nodes[i];
    json reasons = json::array();
    for (const Reason& r : placement.reasons)
      reasons.push_back({{"code", ReasonCodeName(r.code)},
                         {"layer", r.layer},
                         {"message", r.message},
                         {"fix", r.fix}});
    nodes.push_back({{"index", i},
                     {"op", model.OpName(graph.operators[i])},
                     {"output", OutputName(model, static_cast<int>(i))},
                     {"types", NodeTypes(model, static_cast<int>(i))},
                     {"placement", placement.delegated ? "delegate" : "cpu"},
                     {"partition", placement.partition},
                     {"reasons", reasons}});
    if (summary) {
      const NodeWork w = NodeWorkOf(model, static_cast<int>(i));
      nodes.back()["cost"] = {{"op_class", w.op_class},
                              {"ops", w.ops},
                              {"activation_bytes", w.activation_bytes},
                              {"weight_bytes", w.weight_bytes},
                              {"accelerator_us", p.costs.accelerator_us[i]},
                              {"cpu_us", p.costs.cpu_us[i]}};
      if (!p.costs.ethos_u.empty()) {
        const EthosUCycles& c = p.costs.ethos_u[i];
        nodes.back()["cost"]["ethos_u"] = {{"npu_cycles", c.npu}, {"sram_cycles", c.sram},
                                           {"off_chip_cycles", c.off_chip}, {"operations", c.operations},
                                           {"latency_cycles", c.latency}, {"weight_dma_cycles", c.weight_dma}, {"overhead_cap_cycles", c.overhead_cap},
                                           {"unit", c.unit == EthosUCycles::Unit::kMacArray      ? "mac_array"
                                                    : c.unit == EthosUCycles::Unit::kElementwise ? "elementwise"
                                                                                                 : "other"}};
      }
    }
  }
  json plan = json::array();
  for (const NodeSubset& subset : p.plan.subsets)
    plan.push_back({{"kind", subset.delegated ? "delegate" : "cpu"}, {"nodes", subset.nodes}});
  const CostEstimate& e = p.estimate;
  json out = {{"model", model_label},
          {"target", p.target.id},
          {"target_description", p.target.description},
          {"target_version", p.target.version},
          {"known_differences", KnownDifferencesJson(p.target)},
          {"placeholder_decisions", PlaceholderDecisions(p)},
          {"nodes_total", graph.operators.size()},
          {"nodes_delegated", p.plan.num_delegated_nodes},
          {"delegate_kernels", p.plan.num_partitions()},
          {"candidate_partitions", p.plan.num_candidate_partitions},
          {"summary", SummaryLine(p.target.id, p.plan.num_delegated_nodes,
                                  static_cast<int>(graph.operators.size()),
                                  p.plan.num_candidate_partitions)},
          {"nodes", nodes},
          {"execution_plan", plan},
          {"estimate",
           {{"kind", "cost model estimate, not a measurement"},
            {"uses_placeholders", e.uses_placeholders},
            {"accelerator_us", e.accelerator_us},
            {"cpu_us", e.cpu_us},
            {"sync_us", e.sync_us},
            {"total_us", e.total_us()},
            {"partitions", e.partitions},
            {"placeholders", e.placeholders},
            {"first_inference_compile_ms", e.first_inference_compile_ms}}}};
  if (summary) {
    const PlanAlternatives& a = summary->alternatives;
    out["partitioning"] = summary->mode;
    out["cpu_model"] = p.costs.cpu_label;
    out["alternatives"] = {{"greedy", EstimateJson(a.greedy)},
                           {"cost", EstimateJson(a.cost)},
                           {"cpu_only", EstimateJson(a.cpu_only)}};
    out["cost_never_delegate"] = a.cost_skip;
    out["cost_knobs"] = a.knobs;
    if (summary->fix) {
      out["after_fix"] = {{"passes", summary->fix->passes},
                          {"nodes_delegated", summary->fix->nodes_delegated},
                          {"partitions", summary->fix->partitions},
                          {"greedy", EstimateJson(summary->fix->greedy)},
                          {"cost", EstimateJson(summary->fix->cost)}};
    }
    json groups = json::array();
    for (const auto& g : summary->groups)
      groups.push_back({{"code", g.code}, {"layer", g.layer}, {"count", g.nodes.size()}, {"fix", g.fix},
                        {"nodes", g.nodes}, {"example", g.example}});
    out["cpu_groups"] = groups;
    out["recommendation"] = {{"choice", summary->recommendation.choice}, {"text", summary->recommendation.text}};
  }
  return out;
}

void PrintSummary(const Placement& p, const Summary& s) {
  const int n = static_cast<int>(p.plan.nodes.size());
  const PlanAlternatives& a = s.alternatives;
  std::cout << "Summary (latencies are cost-model estimates, not measurements):\n"
            << "  accelerator: " << p.plan.num_delegated_nodes << " of " << n << " nodes in "
            << p.plan.num_partitions() << " partition(s)"
            << (s.mode == "cost" ? " (cost-aware partitioning)" : " (greedy partitioning, as the delegate does)")
            << "\n";
  int cpu_nodes = 0;
  for (const auto& g : s.groups) cpu_nodes += static_cast<int>(g.nodes.size());
  if (cpu_nodes > 0) std::cout << "  CPU: " << cpu_nodes << " node(s)\n";
  for (const auto& g : s.groups) {
    std::cout << "    " << std::setw(4) << std::right << g.nodes.size() << std::left << " x " << g.code << " ["
              << g.layer << "], nodes " << Shorten(NodeRanges(g.nodes), 40) << "\n";
    if (!g.fix.empty()) std::cout << "           fix: " << g.fix << "\n";
  }
  auto line = [](const char* name, const CostEstimate& e) {
    std::cout << "    " << std::left << std::setw(12) << name << std::right << std::setw(10) << Ms(e.total_us()) << std::left
              << "  (accelerator " << Ms(e.accelerator_us) << ", CPU " << Ms(e.cpu_us) << ", hand-over "
              << Ms(e.sync_us) << ", " << e.partitions << " partition(s))"
              << (e.uses_placeholders ? " *" : "") << "\n";
  };
  std::cout << "  estimated latency (CPU: " << p.costs.cpu_label << "):\n";
  line("greedy", a.greedy);
  line("cost-aware", a.cost);
  line("CPU only", a.cpu_only);
  if (s.fix) {
    std::string list;
    for (const auto& name : s.fix->passes) list += (list.empty() ? "" : ",") + name;
    line("after fix", s.fix->best());
    std::cout << "                (delegato fix --passes " << list << ": " << s.fix->nodes_delegated << " of "
              << s.fix->nodes_total << " nodes on the accelerator)\n";
  }
  if (a.greedy.first_inference_compile_ms > 0)
    std::cout << "    first inference with the delegate adds ~" << Ms(a.greedy.first_inference_compile_ms * 1000)
              << " of compilation (not in the totals)\n";
  bool placeholders = a.greedy.uses_placeholders || a.cost.uses_placeholders || a.cpu_only.uses_placeholders;
  if (placeholders) {
    std::vector<std::string> all;
    for (const auto* e : {&a.greedy, &a.cost, &a.cpu_only})
      for (const auto& name : e->placeholders)
        if (std::find(all.begin(), all.end(), name) == all.end()) all.push_back(name);
    std::string list;
    for (size_t i = 0; i < all.size() && i < 6; ++i) list += (i ? ", " : "") + all[i];
    if (all.size() > 6) list += ", ... (" + std::to_string(all.size()) + ")";
    std::cout << "    * rests on placeholder numbers of the target: " << list << "\n";
  }
  std::cout << "  cost-aware plan realised by:\n";
  for (const auto& k : a.knobs) std::cout << "    " << k << "\n";
  std::cout << "  choose: " << s.recommendation.text << "\n\n";
}

void PrintKnownDifferences(const Target& target) {
  if (target.known_differences.empty()) return;
  std::cout << "Known differences from the real compiler (" << target.id << "'s rules do not reproduce these):\n";
  for (const auto& d : target.known_differences) std::cout << "  - " << d.oracle << ": " << d.says << "\n";
}

void PrintText(const ModelDef& model, const std::string& model_label, const Placement& p, const Summary* summary) {
  const SubgraphDef& graph = model.subgraphs[0];
  std::cout << "model:  " << model_label << "\n"
            << "target: " << p.target.id << " (" << p.target.description << ")\n\n";
  if (summary) PrintSummary(p, *summary);
  std::cout << std::left << std::setw(5) << "node" << " " << std::setw(20) << "op" << " "
            << std::setw(32) << "output" << " " << std::setw(13) << "types" << " "
            << std::setw(9) << "placement" << " reason\n";
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const NodePlacement& placement = p.plan.nodes[i];
    std::string where = placement.delegated ? "NPU p" + std::to_string(placement.partition) : "CPU";
    std::cout << std::left << std::setw(5) << i << " " << std::setw(20)
              << Shorten(model.OpName(graph.operators[i]), 20) << " " << std::setw(32)
              << Shorten(OutputName(model, static_cast<int>(i)), 32) << " " << std::setw(13)
              << NodeTypes(model, static_cast<int>(i)) << " " << std::setw(9) << where;
    for (size_t k = 0; k < placement.reasons.size(); ++k) {
      const Reason& r = placement.reasons[k];
      if (k) std::cout << "\n" << std::string(84, ' ');
      std::cout << " [" << r.layer << "] " << ReasonCodeName(r.code) << ": " << r.message;
      if (!r.fix.empty()) std::cout << "\n" << std::string(84, ' ') << "   fix: " << r.fix;
    }
    std::cout << "\n";
  }
  std::cout << "\n"
            << SummaryLine(p.target.id, p.plan.num_delegated_nodes,
                           static_cast<int>(graph.operators.size()), p.plan.num_candidate_partitions)
            << "\n";
  std::cout << "Execution plan: " << p.plan.subsets.size() << " steps, " << p.plan.num_partitions()
            << " delegate kernel(s)";
  if (p.options.max_delegated_partitions > 0)
    std::cout << " (at most " << p.options.max_delegated_partitions << " delegated partitions)";
  std::cout << "\n";
  const CostEstimate& e = p.estimate;
  std::cout << std::fixed << std::setprecision(2)
            << "Estimated latency (cost model, not measured"
            << (e.uses_placeholders ? "; uses placeholder numbers" : "") << "): accelerator "
            << e.accelerator_us / 1000 << " ms + CPU " << e.cpu_us / 1000 << " ms + hand-over "
            << e.sync_us / 1000 << " ms = " << e.total_us() / 1000 << " ms";
  if (e.first_inference_compile_ms > 0)
    std::cout << "; first inference adds ~" << e.first_inference_compile_ms << " ms of compilation";
  std::cout << "\n" << std::defaultfloat;
  const int placeholder_decisions = PlaceholderDecisions(p);
  if (placeholder_decisions > 0) {
    std::cout << placeholder_decisions
              << " placement decision(s) rest on placeholder rules (no public source; marked above)\n";
  }
  PrintKnownDifferences(p.target);
}

std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
  return out;
}

// Edges between nodes: producer -> consumer of each activation tensor.
std::vector<std::pair<int, int>> NodeEdges(const ModelDef& model) {
  const SubgraphDef& graph = model.subgraphs[0];
  std::vector<int> producer(graph.tensors.size(), -1);
  for (size_t i = 0; i < graph.operators.size(); ++i)
    for (int32_t t : graph.operators[i].outputs)
      if (t >= 0) producer[t] = static_cast<int>(i);
  std::vector<std::pair<int, int>> edges;
  for (size_t i = 0; i < graph.operators.size(); ++i)
    for (int32_t t : graph.operators[i].inputs)
      if (t >= 0 && producer[t] >= 0) edges.emplace_back(producer[t], static_cast<int>(i));
  return edges;
}

void WriteDot(const ModelDef& model, const Placement& p, const std::string& path) {
  std::ostringstream out;
  const SubgraphDef& graph = model.subgraphs[0];
  out << "digraph plan {\n  node [shape=box, style=filled, fontname=Helvetica];\n";
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const NodePlacement& placement = p.plan.nodes[i];
    std::string tip;
    for (const Reason& r : placement.reasons) tip += r.message + "\n";
    out << "  n" << i << " [label=\"" << i << ": " << DotEscape(model.OpName(graph.operators[i]))
        << "\\n" << NodeTypes(model, static_cast<int>(i)) << "\", fillcolor=\""
        << (placement.delegated ? "#8fd694" : "#f4a261") << "\", tooltip=\"" << DotEscape(tip)
        << "\"];\n";
  }
  for (auto [from, to] : NodeEdges(model)) out << "  n" << from << " -> n" << to << ";\n";
  out << "}\n";
  WriteFileAtomically(path, {out.str()});
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// One self-contained page: an SVG of the graph laid out by depth, nodes
// coloured by placement, reasons in each node's hover title, then the table.
void WriteHtml(const ModelDef& model, const std::string& label, const Placement& p, const Summary* summary,
               const std::string& path) {
  std::ostringstream out;
  const SubgraphDef& graph = model.subgraphs[0];
  const int n = static_cast<int>(graph.operators.size());
  const auto edges = NodeEdges(model);
  std::vector<int> depth(n, 0), column(n, 0);
  for (auto [from, to] : edges) depth[to] = std::max(depth[to], depth[from] + 1);  // edges follow plan order
  std::vector<int> per_depth;
  for (int i = 0; i < n; ++i) {
    if (depth[i] >= static_cast<int>(per_depth.size())) per_depth.resize(depth[i] + 1, 0);
    column[i] = per_depth[depth[i]]++;
  }
  const int box_w = 150, box_h = 34, gap_x = 20, gap_y = 26;
  int max_columns = 1;
  for (int c : per_depth) max_columns = std::max(max_columns, c);
  const int width = max_columns * (box_w + gap_x) + gap_x;
  const int height = static_cast<int>(per_depth.size()) * (box_h + gap_y) + gap_y;
  auto x_of = [&](int i) { return gap_x + column[i] * (box_w + gap_x); };
  auto y_of = [&](int i) { return gap_y + depth[i] * (box_h + gap_y); };

  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>delegato plan: "
      << HtmlEscape(label) << " on " << HtmlEscape(p.target.id) << "</title>\n<style>"
      << "body{font-family:sans-serif;margin:20px} .delegate rect{fill:#8fd694} .cpu rect{fill:#f4a261}"
      << " svg text{font-size:11px} table{border-collapse:collapse;margin-top:20px}"
      << " td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px;text-align:left}"
      << " tr.cpu{background:#fde2cf} tr.delegate{background:#dff3e1}</style></head><body>\n";
  out << "<h1>" << HtmlEscape(label) << " on " << HtmlEscape(p.target.id) << "</h1>\n<p id=\"summary\">"
      << HtmlEscape(SummaryLine(p.target.id, p.plan.num_delegated_nodes, n, p.plan.num_candidate_partitions))
      << "</p>\n<p>Green: delegated to the accelerator. Orange: runs on the CPU (hover for the reason).</p>\n";
  if (summary) {
    // The summary and where the time goes, per alternative: stacked bars.
    const PlanAlternatives& a = summary->alternatives;
    std::vector<std::pair<std::string, const CostEstimate*>> bars = {
        {"greedy", &a.greedy}, {"cost-aware", &a.cost}, {"CPU only", &a.cpu_only}};
    if (summary->fix) bars.emplace_back("after fix", &summary->fix->best());
    double longest = 1;
    for (const auto& [name, e] : bars) longest = std::max(longest, e->total_us());
    out << "<div id=\"cost-summary\"><h2>Summary</h2><p>Accelerator: " << p.plan.num_delegated_nodes << " of " << n
        << " nodes in " << p.plan.num_partitions() << " partition(s) (" << HtmlEscape(summary->mode)
        << " partitioning). Latencies are cost-model estimates (CPU: " << HtmlEscape(p.costs.cpu_label)
        << "), not measurements.</p>\n<ul id=\"cpu-groups\">\n";
    for (const auto& g : summary->groups)
      out << "<li>" << g.nodes.size() << " x " << HtmlEscape(g.code) << " [" << HtmlEscape(g.layer) << "]"
          << (g.fix.empty() ? "" : "<br><i>fix: " + HtmlEscape(g.fix) + "</i>") << "</li>\n";
    out << "</ul>\n<svg id=\"time-bars\" width=\"760\" height=\"" << 30 * bars.size() + 30
        << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
    int row = 0;
    for (const auto& [name, e] : bars) {
      const int y = 10 + 30 * row++;
      double x = 110;
      out << "<text x=\"0\" y=\"" << y + 15 << "\">" << HtmlEscape(name) << "</text>";
      const std::pair<const char*, double> parts[] = {
          {"#8fd694", e->accelerator_us}, {"#f4a261", e->cpu_us}, {"#e76f51", e->sync_us}};
      for (const auto& [colour, us] : parts) {
        const double w = 500 * us / longest;
        out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"20\" fill=\"" << colour
            << "\"><title>" << Ms(us) << "</title></rect>";
        x += w;
      }
      out << "<text x=\"" << x + 6 << "\" y=\"" << y + 15 << "\">" << Ms(e->total_us())
          << (e->uses_placeholders ? " *" : "") << "</text>\n";
    }
    out << "</svg>\n<p>Green: accelerator, orange: CPU, red: hand-overs. * rests on placeholder numbers.</p>\n"
        << "<p id=\"choose\"><b>Choose:</b> " << HtmlEscape(summary->recommendation.text) << "</p></div>\n";
  }
  // The nodes users look for first: what falls back, why, and the fix.
  out << "<h2>Falls back to the CPU</h2>\n<ul id=\"fallbacks\">\n";
  for (int i = 0; i < n; ++i) {
    const NodePlacement& placement = p.plan.nodes[i];
    if (placement.delegated) continue;
    out << "<li><b>" << i << " " << HtmlEscape(model.OpName(graph.operators[i])) << "</b>";
    for (const Reason& r : placement.reasons)
      out << "<br>[" << HtmlEscape(r.layer) << "] " << HtmlEscape(r.message)
          << (r.fix.empty() ? "" : "<br><i>fix: " + HtmlEscape(r.fix) + "</i>");
    out << "</li>\n";
  }
  out << "</ul>\n";
  out << "<svg id=\"graph\" width=\"" << width << "\" height=\"" << height
      << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (auto [from, to] : edges)
    out << "<line x1=\"" << x_of(from) + box_w / 2 << "\" y1=\"" << y_of(from) + box_h << "\" x2=\""
        << x_of(to) + box_w / 2 << "\" y2=\"" << y_of(to) << "\" stroke=\"#999\"/>\n";
  for (int i = 0; i < n; ++i) {
    const NodePlacement& placement = p.plan.nodes[i];
    std::string tip = std::to_string(i) + " " + model.OpName(graph.operators[i]) + ": " +
                      (placement.delegated ? "delegated" : "CPU");
    for (const Reason& r : placement.reasons) tip += "\n[" + r.layer + "] " + r.message + (r.fix.empty() ? "" : "\nfix: " + r.fix);
    out << "<g class=\"node " << (placement.delegated ? "delegate" : "cpu") << "\" data-node=\"" << i
        << "\"><title>" << HtmlEscape(tip) << "</title><rect x=\"" << x_of(i) << "\" y=\"" << y_of(i)
        << "\" width=\"" << box_w << "\" height=\"" << box_h << "\" rx=\"4\" stroke=\"#555\"/>"
        << "<text x=\"" << x_of(i) + 6 << "\" y=\"" << y_of(i) + 14 << "\">" << i << " "
        << HtmlEscape(Shorten(model.OpName(graph.operators[i]), 20)) << "</text><text x=\"" << x_of(i) + 6
        << "\" y=\"" << y_of(i) + 28 << "\">" << NodeTypes(model, i) << "</text></g>\n";
  }
  out << "</svg>\n<table><tr><th>node</th><th>op</th><th>output</th><th>types</th><th>placement</th><th>reason</th><th>fix</th></tr>\n";
  for (int i = 0; i < n; ++i) {
    const NodePlacement& placement = p.plan.nodes[i];
    std::string reasons, fixes;
    for (const Reason& r : placement.reasons) {
      reasons += "[" + r.layer + "] " + ReasonCodeName(r.code) + ": " + r.message + " ";
      fixes += r.fix + " ";
    }
    out << "<tr class=\"" << (placement.delegated ? "delegate" : "cpu") << "\"><td>" << i << "</td><td>"
        << HtmlEscape(model.OpName(graph.operators[i])) << "</td><td>"
        << HtmlEscape(OutputName(model, i)) << "</td><td>" << NodeTypes(model, i) << "</td><td>"
        << (placement.delegated ? "delegate" : "cpu") << "</td><td>" << HtmlEscape(reasons)
        << "</td><td>" << HtmlEscape(fixes) << "</td></tr>\n";
  }
  out << "</table></body></html>\n";
  WriteFileAtomically(path, {out.str()});
}

// The placement a TFLite external delegate plugin chose, read back from a
// delegato interpreter that applied it (the plugin's Prepare decides).
Placement PluginPlacement(const ModelDef& model, Interpreter& interpreter, const ExternalDelegate& plugin) {
  Placement p;
  p.target.id = plugin.name();
  p.target.description = "TFLite external delegate plugin";
  const auto& placements = interpreter.placements();
  const int n = static_cast<int>(model.subgraphs[0].operators.size());
  for (int i = 0; i < n; ++i) {
    const Interpreter::Placement& where = placements[i];
    NodePlacement node;
    node.delegated = where.delegated;
    node.partition = where.delegated ? where.partition : -1;
    node.reasons = where.reasons;
    if (!node.delegated && node.reasons.empty())
      node.reasons.push_back({ReasonCode::kUnsupportedOp, "delegate", "the plugin did not claim it", ""});
    p.plan.num_delegated_nodes += node.delegated;
    p.plan.nodes.push_back(std::move(node));
  }
  // Execution steps: runs of CPU nodes, and one step per delegate node.
  for (int index : interpreter.execution_plan()) {
    if (index < n) {
      if (p.plan.subsets.empty() || p.plan.subsets.back().delegated) p.plan.subsets.push_back(NodeSubset{});
      p.plan.subsets.back().nodes.push_back(index);
      continue;
    }
    const int partition = static_cast<int>(p.plan.partition_subsets.size());
    NodeSubset subset;
    subset.delegated = true;
    for (int i = 0; i < n; ++i)
      if (p.plan.nodes[i].delegated && p.plan.nodes[i].partition == partition) subset.nodes.push_back(i);
    p.plan.partition_subsets.push_back(static_cast<int>(p.plan.subsets.size()));
    p.plan.subsets.push_back(std::move(subset));
  }
  p.plan.num_candidate_partitions = p.plan.num_partitions();
  return p;
}

int Plan(const Args& args) {
  Flags flags;
  flags.Declare("graph", "model .tflite file")
      .Declare("target", "target id (see --list_targets) or path to a target .json")
      .Declare("list_targets", "list the shipped targets with their versions and sources", true)
      .Declare("list-targets", "same as --list_targets", true)
      .Declare("format", "text (default) or json")
      .Declare("dot", "also write the graph, coloured by placement, as Graphviz DOT")
      .Declare("html", "also write a self-contained HTML page of the placement")
      .Declare("nnapi_accelerator_name", "name an accelerator explicitly (NNAPI targets)")
      .Declare("max_delegated_partitions", "override the target's partition limit (0 = unlimited)")
      .Declare("min_nodes_per_partition", "partitions with fewer nodes stay on the CPU")
      .Declare("skip_nodes", "comma-separated node indices never delegated")
      .Declare("first_node", "only nodes from this index on may be delegated")
      .Declare("last_node", "only nodes up to this index may be delegated")
      .Declare("partitioning", "greedy (default: what the delegate does) or cost (the cost model's choice of nodes to keep on the CPU)")
      .Declare("fail_on", "exit 3 on 'fallback' (any CPU node) or 'partitions:N' (more than N delegate kernels)")
      .Declare("help", "show this help", true);
  DeclareExternalDelegateFlags(flags);
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato plan --graph MODEL --target ID_OR_FILE [flags]\n" << flags.Help();
    return 0;
  }
  if (flags.GetBool("list_targets") || flags.GetBool("list-targets")) {
    for (const std::string& id : ListTargetIds(TargetsDir())) {
      Target t = FindTarget(id, TargetsDir());
      std::cout << id << "\n  version: " << (t.version.empty() ? "(not stated)" : t.version)
                << "\n  " << t.description << "\n  sources:";
      const auto sources = TargetSourceList(t);
      if (sources.empty()) std::cout << " none";
      for (const auto& source : sources) std::cout << "\n    " << source;
      const int placeholders = PlaceholderRuleCount(t);
      if (placeholders > 0) std::cout << "\n  placeholder rules (no public source): " << placeholders;
      std::cout << "\n";
    }
    return 0;
  }
  std::string path = flags.GetString("graph");
  if (path.empty() && !flags.positional().empty()) path = flags.positional()[0];
  if (path.empty()) throw UsageError("plan needs --graph MODEL");
  const bool plugin = flags.Has("external_delegate_path");
  if (plugin == flags.Has("target"))
    throw UsageError("plan needs --target (ids: delegato plan --list_targets) or --external_delegate_path, not both");
  const std::string format = flags.GetString("format", "text");
  if (format != "text" && format != "json") throw UsageError("--format must be text or json");
  const std::string partitioning = flags.GetString("partitioning", "greedy");
  if (partitioning != "greedy" && partitioning != "cost") throw UsageError("--partitioning must be greedy or cost");
  if (plugin && partitioning != "greedy") throw UsageError("--partitioning=cost needs --target");
  const std::string fail_on = flags.GetString("fail_on");
  int max_kernels = -1;
  if (!fail_on.empty() && fail_on != "fallback") {
    if (fail_on.rfind("partitions:", 0) != 0)
      throw UsageError("--fail_on must be 'fallback' or 'partitions:N'");
    try {
      max_kernels = std::stoi(fail_on.substr(11));
    } catch (const std::exception&) {
      throw UsageError("--fail_on=partitions:N needs a number, got '" + fail_on + "'");
    }
  }

  PlacementOptions options;
  options.accelerator_name = flags.GetString("nnapi_accelerator_name");
  options.max_delegated_partitions = static_cast<int>(flags.GetInt("max_delegated_partitions", -1, 0, 1 << 20));
  options.min_nodes_per_partition = static_cast<int>(flags.GetInt("min_nodes_per_partition", -1, 0, 1 << 20));
  options.skip_nodes = ParseIntList("skip_nodes", flags.GetString("skip_nodes"));
  options.first_node = static_cast<int>(flags.GetInt("first_node", -1, 0, 1 << 30));
  options.last_node = static_cast<int>(flags.GetInt("last_node", -1, 0, 1 << 30));

  auto model = ReadModelFile(path);
  const int num_nodes = static_cast<int>(model->subgraphs[0].operators.size());
  for (int node : options.skip_nodes)
    if (node >= num_nodes)
      throw UsageError("--skip_nodes: node " + std::to_string(node) + " does not exist (the model has " +
                       std::to_string(num_nodes) + " nodes)");
  // A plugin decides in its Prepare: apply it to an interpreter and read back.
  std::unique_ptr<Interpreter> interpreter;
  std::unique_ptr<ExternalDelegate> external;
  Placement placement;
  if (plugin) {
    Status status;
    interpreter = Interpreter::Create(model, {}, &status);
    if (!interpreter) Fail(status.message(), " (plan --external_delegate_path needs a model delegato runs)");
    status = interpreter->AllocateTensors();
    if (!status.ok()) Fail(status.message());
    external = ApplyExternalDelegate(flags, *interpreter);
    placement = PluginPlacement(*model, *interpreter, *external);
  } else {
    placement = PlaceModel(*model, flags.GetString("target"), options);
  }

  std::optional<Summary> summary;
  if (!plugin) {
    summary.emplace();
    summary->mode = partitioning;
    summary->alternatives = CompareAlternatives(*model, placement);
    summary->fix = PriceFix(*model, placement, flags.GetString("target"), options);
    summary->recommendation = Recommend(summary->alternatives, summary->fix);
    if (partitioning == "cost") {
      placement.plan = summary->alternatives.cost_plan;
      placement.estimate = summary->alternatives.cost;
      // Nodes the cost model (not the user) keeps away from the delegate say so.
      for (int node : summary->alternatives.cost_skip) {
        if (std::find(options.skip_nodes.begin(), options.skip_nodes.end(), node) != options.skip_nodes.end())
          continue;
        for (Reason& r : placement.plan.nodes[node].reasons) {
          if (r.code != ReasonCode::kUserExcluded) continue;
          r.message = "kept away from the delegate by the cost-aware partitioning (estimated cheaper than "
                      "running it there with its hand-overs)";
          r.fix = "--partitioning greedy delegates it (what the delegate does by default)";
        }
      }
    }
    summary->groups = FallbackGroups(placement);
  }
  const Summary* s = summary ? &*summary : nullptr;
  if (format == "json") std::cout << PlanJson(*model, path, placement, s).dump(2) << "\n";
  else PrintText(*model, path, placement, s);
  if (flags.Has("dot")) WriteDot(*model, placement, flags.GetString("dot"));
  if (flags.Has("html")) WriteHtml(*model, path, placement, s, flags.GetString("html"));

  if (fail_on == "fallback" && placement.plan.num_delegated_nodes < num_nodes) {
    std::cerr << "delegato plan: " << num_nodes - placement.plan.num_delegated_nodes
              << " node(s) fall back to the CPU (--fail_on=fallback)\n";
    return 3;
  }
  if (max_kernels >= 0 && placement.plan.num_partitions() > max_kernels) {
    std::cerr << "delegato plan: " << placement.plan.num_partitions() << " delegate kernels, more than "
              << max_kernels << " (--fail_on=" << fail_on << ")\n";
    return 3;
  }
  return 0;
}

}  // namespace

int CmdPlan(const Args& args) {
  return RunCommand("plan", [&] { return Plan(args); });
}

}  // namespace delegato::tools
