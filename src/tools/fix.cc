// delegato fix: rewrites a model so more of it (ideally all) runs on a target,
// and proves what the rewrite changed: the plan before and after, every
// change in words, and the accuracy cost measured by running the original
// and the rewritten model on the same inputs (seeded random, and an image
// when given). --verify refuses to write a model whose outputs move beyond
// --tolerance unless --accept_accuracy_loss.
#include <algorithm>
#include <cmath>
#include <map>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/op_version.h"
#include "passes/pass.h"
#include "passes/passes.h"
#include "tools/commands.h"
#include "tools/flags.h"
#include "tools/image.h"
#include "tools/model_compare.h"
#include "tools/placement.h"
#include "tools/tool_util.h"

namespace delegato::tools {
namespace {

using nlohmann::json;

Flags FixFlags() {
  Flags flags;
  flags.Declare("graph", "model .tflite file")
      .Declare("target", "target id or path to a target .json (see delegato plan --list_targets)")
      .Declare("o", "where to write the rewritten model (.tflite)")
      .Declare("output", "same as -o")
      .Declare("passes", "comma-separated passes to apply, in this order (default: the passes that address "
                         "the reasons the plan finds)")
      .Declare("list_passes", "list the passes and what they address", true)
      .Declare("dry_run", "show the plan, changes and accuracy cost without writing", true)
      .Declare("verify", "refuse to write a model whose outputs move beyond --tolerance", true)
      .Declare("accept_accuracy_loss", "with --verify: write the model anyway", true)
      .Declare("tolerance", "with --verify: the largest accepted output error (default 0.01): mean |diff| "
                            "relative to the output's range, 1 - agreement for index outputs; with --image "
                            "also the top-1 score change and the share of differing pixels")
      .Declare("image", "also compare on this BMP (classifier top-1 / segmentation pixel agreement)")
      .Declare("io_types", "user (default: inputs/outputs keep their types) or model (take the rewritten "
                           "model's types, no boundary QUANTIZE nodes)")
      .Declare("channel_groups", "int8-to-uint8: BLOCK,OUTPUT,MAX spread ratios and group count for splitting "
                                 "per-channel weights into per-tensor groups (default 1.5,4,16; off = plain per-tensor)")
      .Declare("runs", "random-input runs for the accuracy comparison (default 3)")
      .Declare("seed", "seed of the random inputs (default 0)")
      .Declare("num_threads", "CPU threads for the comparison runs (default 2)")
      .Declare("nnapi_accelerator_name", "name an accelerator explicitly (NNAPI targets)")
      .Declare("report_json", "also write the whole report as JSON to this file")
      .Declare("help", "show this help", true);
  return flags;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct PlanSummary {
  int nodes = 0, delegated = 0, partitions = 0, cpu_steps = 0;
  double estimate_us = 0;
  bool placeholders = false;
  std::map<std::string, int> op_total, op_delegated;
};

PlanSummary Summarize(const ModelDef& model, const Placement& p) {
  PlanSummary s;
  const auto& graph = model.subgraphs[0];
  s.nodes = static_cast<int>(graph.operators.size());
  s.delegated = p.plan.num_delegated_nodes;
  s.partitions = p.plan.num_partitions();
  for (const auto& subset : p.plan.subsets) s.cpu_steps += !subset.delegated;
  s.estimate_us = p.estimate.total_us();
  s.placeholders = p.estimate.uses_placeholders;
  for (int i = 0; i < s.nodes; ++i) {
    const std::string op = model.OpName(graph.operators[i]);
    ++s.op_total[op];
    s.op_delegated[op] += p.plan.nodes[i].delegated;
  }
  return s;
}

json SummaryJson(const PlanSummary& s) {
  json ops = json::object();
  for (const auto& [op, total] : s.op_total)
    ops[op] = {{"total", total}, {"delegated", s.op_delegated.at(op)}};
  return {{"nodes", s.nodes}, {"nodes_delegated", s.delegated}, {"delegated_partitions", s.partitions},
          {"cpu_steps", s.cpu_steps}, {"estimated_latency_us", s.estimate_us},
          {"estimate_uses_placeholders", s.placeholders}, {"ops", ops}};
}

std::string Pct(int a, int b) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(0) << (b ? 100.0 * a / b : 0.0) << "%";
  return out.str();
}

void PrintPlanLine(const char* label, const PlanSummary& s) {
  std::cout << "  " << std::left << std::setw(7) << label << std::right << s.delegated << "/" << s.nodes
            << " nodes delegated (" << Pct(s.delegated, s.nodes) << "), " << s.partitions
            << " delegated partition(s), " << s.cpu_steps << " CPU step(s), estimated " << std::fixed
            << std::setprecision(2) << s.estimate_us / 1000 << " ms" << std::defaultfloat
            << (s.placeholders ? " (cost model with placeholder numbers, not measured)" : " (cost model, not measured)")
            << "\n";
}

void PrintCpuNodes(const ModelDef& model, const Placement& p, size_t limit) {
  const auto& graph = model.subgraphs[0];
  size_t shown = 0, total = 0;
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    if (p.plan.nodes[i].delegated) continue;
    ++total;
    if (shown >= limit) continue;
    ++shown;
    std::cout << "    node " << i << " " << model.OpName(graph.operators[i]);
    if (!p.plan.nodes[i].reasons.empty()) {
      const Reason& r = p.plan.nodes[i].reasons[0];
      std::cout << ": " << ReasonCodeName(r.code) << ": " << r.message;
    }
    std::cout << "\n";
  }
  if (total > shown) std::cout << "    ... and " << total - shown << " more\n";
}

// Passes addressing the CPU nodes of `p`, with the nodes each addresses.
std::vector<std::pair<const passes::Pass*, std::vector<int>>> SelectPasses(const ModelDef& model, const Placement& p,
                                                                          const std::set<std::string>& done) {
  std::vector<std::pair<const passes::Pass*, std::vector<int>>> out;
  for (const auto& pass : passes::AllPasses()) {
    if (done.count(pass->name())) continue;
    // The two type conversions undo each other: at most one of them.
    if ((pass->name() == "uint8-to-int8" && done.count("int8-to-uint8")) ||
        (pass->name() == "int8-to-uint8" && done.count("uint8-to-int8")))
      continue;
    std::vector<int> nodes;
    for (size_t i = 0; i < p.plan.nodes.size(); ++i) {
      if (p.plan.nodes[i].delegated) continue;
      for (const Reason& r : p.plan.nodes[i].reasons)
        if (pass->Addresses(model, static_cast<int>(i), r)) {
          nodes.push_back(static_cast<int>(i));
          break;
        }
    }
    // Float islands are always looked for: the report lists them even where the target takes them as float.
    if (nodes.empty() && pass->name() == "float-islands" && passes::HasFloatIslands(model))
      out.emplace_back(pass.get(), std::move(nodes));
    if (!nodes.empty()) out.emplace_back(pass.get(), std::move(nodes));
  }
  return out;
}

std::string NodeList(const std::vector<int>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size() && i < 12; ++i) out += (i ? "," : "") + std::to_string(nodes[i]);
  if (nodes.size() > 12) out += ",... (" + std::to_string(nodes.size()) + " nodes)";
  return out;
}

int Fix(const Args& args) {
  Flags flags = FixFlags();
  flags.Parse(args);
  if (flags.GetBool("help")) {
    std::cout << "usage: delegato fix --graph MODEL --target ID -o OUT.tflite [flags]\n" << flags.Help()
              << "\npasses: " << passes::PassNames() << " (--list_passes describes them)\n";
    return 0;
  }
  if (flags.GetBool("list_passes")) {
    for (const auto& p : passes::AllPasses()) {
      std::cout << p->name() << ": " << p->summary() << "\n  addresses:";
      for (ReasonCode c : p->reasons()) std::cout << " " << ReasonCodeName(c);
      if (!p->ops().empty()) {
        std::cout << " on";
        for (BuiltinOp op : p->ops()) std::cout << " " << BuiltinOpName(op);
      }
      std::cout << "\n";
    }
    return 0;
  }
  if (!flags.positional().empty()) throw UsageError("unexpected argument '" + flags.positional()[0] + "'");
  if (!flags.Has("graph")) throw UsageError("--graph is required");
  if (!flags.Has("target")) throw UsageError("--target is required");
  const std::string out_path = flags.Has("o") ? flags.GetString("o") : flags.GetString("output");
  const bool dry_run = flags.GetBool("dry_run");
  if (out_path.empty() && !dry_run) throw UsageError("-o OUT.tflite is required (or --dry_run)");
  const bool verify = flags.GetBool("verify");
  const bool accept_loss = flags.GetBool("accept_accuracy_loss");
  const double tolerance = flags.GetDouble("tolerance", 0.01);
  if (tolerance < 0) throw UsageError("--tolerance must be >= 0");
  const int runs = static_cast<int>(flags.GetInt("runs", 3, 1, 1000));
  const uint64_t seed = static_cast<uint64_t>(flags.GetInt("seed", 0, 0, INT64_MAX));
  const int num_threads = static_cast<int>(flags.GetInt("num_threads", 2, 1, 256));
  const std::string io = flags.GetString("io_types", "user");
  if (io != "user" && io != "model") throw UsageError("--io_types must be user or model, got '" + io + "'");

  std::vector<const passes::Pass*> requested;
  for (const std::string& name : SplitList(flags.GetString("passes"))) {
    const passes::Pass* p = passes::FindPass(name);
    if (!p) throw UsageError("--passes: unknown pass '" + name + "' (passes: " + passes::PassNames() + ")");
    requested.push_back(p);
  }

  const std::string graph_path = flags.GetString("graph");
  std::shared_ptr<const ModelDef> original = ReadModelFile(graph_path);
  PlacementOptions placement_options;
  placement_options.accelerator_name = flags.GetString("nnapi_accelerator_name");
  const Placement before = PlaceModel(*original, flags.GetString("target"), placement_options);

  passes::PassContext ctx;
  ctx.target = &before.target;
  ctx.accelerator_name = placement_options.accelerator_name;
  ctx.io_types = io == "model" ? passes::IoTypes::kModel : passes::IoTypes::kUser;
  ctx.seed = seed;
  if (flags.Has("channel_groups")) {
    const std::string spec = flags.GetString("channel_groups");
    if (spec == "off") {
      ctx.max_groups = 1;
    } else {
      const auto parts = SplitList(spec);
      if (parts.size() != 3) throw UsageError("--channel_groups expects BLOCK,OUTPUT,MAX (e.g. 1.5,4,16) or off");
      try {
        ctx.block_group_ratio = std::stod(parts[0]);
        ctx.output_group_ratio = std::stod(parts[1]);
        ctx.max_groups = std::stoi(parts[2]);
      } catch (const std::exception&) {
        throw UsageError("--channel_groups expects numbers: BLOCK,OUTPUT,MAX (e.g. 1.5,4,16)");
      }
    }
  }

  json report;
  report["model"] = graph_path;
  report["target"] = before.target.id;
  const PlanSummary s_before = Summarize(*original, before);
  report["before"] = SummaryJson(s_before);

  std::cout << "model:  " << graph_path << "\ntarget: " << before.target.id << "\n\nplan before:\n";
  PrintPlanLine("before", s_before);
  PrintCpuNodes(*original, before, 20);

  // Apply passes: the requested list, or rounds of the passes addressing the reasons found.
  auto model = std::make_shared<ModelDef>(*original);
  std::set<std::string> done;
  json pass_reports = json::array();
  bool interface_changed = false;
  // In automatic mode a pass that changes the model without improving the
  // placement is undone (the report says so): rewrites only where they help.
  auto apply = [&](const passes::Pass& pass, const std::vector<int>& addressed, bool keep_only_if_better) {
    done.insert(pass.name());
    std::cout << "\npass " << pass.name() << ": " << pass.summary() << "\n";
    if (!addressed.empty()) std::cout << "  addresses CPU node(s) " << NodeList(addressed) << "\n";
    auto candidate = std::make_shared<ModelDef>(*model);
    const passes::PassResult result = pass.Run(*candidate, ctx);
    bool reverted = false;
    if (keep_only_if_better && result.changed()) {
      const Placement was = PlaceModel(*model, flags.GetString("target"), placement_options);
      const Placement now = PlaceModel(*candidate, flags.GetString("target"), placement_options);
      // Judged on the target's own per-node answers, before partitioning:
      // passes help in combination (one more supported node may only pay
      // off once its neighbours are supported too).
      auto refused = [](const Placement& p) {
        int n = 0;
        for (const NodeSupport& s : p.support) n += !s.supported;
        return n;
      };
      reverted = !(refused(now) < refused(was));
    }
    if (!reverted) model = candidate;
    json changes = json::array();
    for (const passes::Change& c : result.changes) {
      std::cout << "  * " << c.what << (c.exact ? "  [exact]" : "") << "\n";
      for (const std::string& d : c.details) std::cout << "      " << d << "\n";
      interface_changed |= c.changes_interface;
      changes.push_back({{"what", c.what}, {"details", c.details}, {"exact", c.exact},
                         {"changes_interface", c.changes_interface}});
    }
    for (const std::string& f : result.findings) std::cout << "  - " << f << "\n";
    if (result.changes.empty()) std::cout << "  (no change)\n";
    if (reverted)
      std::cout << "  => UNDONE: " << before.target.id << " refuses as many nodes with these changes as "
                << "without them (the rewrite would cost accuracy for nothing)\n";
    pass_reports.push_back({{"pass", pass.name()}, {"addressed_nodes", addressed}, {"changes", changes},
                            {"findings", result.findings}, {"undone", reverted}});
    return result.changed() && !reverted;
  };

  bool any_change = false;
  if (!requested.empty()) {
    for (const passes::Pass* p : requested) any_change |= apply(*p, {}, false);
  } else {
    Placement current = before;
    for (int round = 0; round < 4; ++round) {
      const auto selected = SelectPasses(*model, current, done);
      if (selected.empty()) break;
      bool changed = false;
      for (const auto& [pass, nodes] : selected) {
        // Requantization folds are exact and judged on their own; every other rewrite must help the placement.
        const bool judge = pass->name() != "fold-requantize";
        changed |= apply(*pass, nodes, judge);
      }
      any_change |= changed;
      current = PlaceModel(*model, flags.GetString("target"), placement_options);
      if (!changed) break;
    }
    if (any_change && !done.count("fold-requantize"))
      any_change |= apply(*passes::FindPass("fold-requantize"), {}, false);
    if (done.empty()) std::cout << "\nno pass addresses the reasons found: nothing to rewrite\n";
  }

  // Rewritten nodes (new types, new ops) carry the op versions a converter would
  // give them, so that other runtimes pick the matching kernel variant.
  if (any_change) {
    const int raised = StampOpVersions(*model, VersionStamp::kRaise);
    if (raised > 0) std::cout << "\nop versions: " << raised << " node(s) raised to the version their types need\n";
    report["op_versions_raised"] = raised;
  }

  // The rewrite goes through the writer and reader (what users will load) and must run here.
  const std::vector<uint8_t> bytes = WriteModel(*model);
  std::shared_ptr<const ModelDef> rewritten = ReadModelBuffer(bytes.data(), bytes.size(), "<rewritten model>");
  {
    // The rewrite must run here before anything is compared or written.
    Status status;
    auto check = Interpreter::Create(rewritten, {}, &status);
    if (status.ok()) status = check->AllocateTensors();
    if (!status.ok()) {
      std::cout << "\nthe rewritten model does not run on delegato's kernels: " << status.message()
                << "\nNOT WRITTEN\n";
      return 1;
    }
  }
  const Placement after = PlaceModel(*rewritten, flags.GetString("target"), placement_options);
  const PlanSummary s_after = Summarize(*rewritten, after);
  report["after"] = SummaryJson(s_after);
  report["passes"] = pass_reports;

  std::cout << "\nplan after:\n";
  PrintPlanLine("before", s_before);
  PrintPlanLine("after", s_after);
  for (const auto& [op, total] : s_after.op_total) {
    const int was_total = s_before.op_total.count(op) ? s_before.op_total.at(op) : 0;
    const int was = s_before.op_delegated.count(op) ? s_before.op_delegated.at(op) : 0;
    const int now = s_after.op_delegated.at(op);
    if (was != now || was_total != total)
      std::cout << "    " << op << ": " << was << "/" << was_total << " -> " << now << "/" << total << " on the target\n";
  }
  if (s_after.delegated < s_after.nodes) {
    std::cout << "  still on the CPU:\n";
    PrintCpuNodes(*rewritten, after, 20);
  }

  // Accuracy cost.
  bool within = true;
  std::vector<std::string> violations;
  json accuracy;
  std::cout << "\naccuracy (original vs rewritten, delegato CPU kernels):\n";
  const RandomComparison random = CompareOnRandomInputs(original, rewritten, seed, runs, num_threads);
  json outs = json::array();
  for (const OutputComparison& c : random.outputs) {
    std::cout << "  random inputs (" << runs << " runs, seed " << seed << ") output \"" << c.name
              << "\": " << FormatComparison(c) << "\n";
    outs.push_back({{"name", c.name}, {"type_before", c.type_a}, {"type_after", c.type_b},
                    {"max_abs", c.max_abs}, {"mean_abs", c.mean_abs}, {"max_steps", c.max_steps},
                    {"equal_fraction", c.agreement()}, {"range", c.reference_range}, {"error", c.error()}});
    if (c.error() > tolerance) {
      within = false;
      violations.push_back(StrCat("output \"", c.name, "\" error ", c.error(), " > ", tolerance, " on random inputs"));
    }
  }
  accuracy["random"] = {{"runs", runs}, {"seed", seed}, {"outputs", outs}};
  if (flags.Has("image")) {
    const RgbImage image = ReadBmp(flags.GetString("image"));
    const ImageComparison ic = CompareOnImage(original, rewritten, image, num_threads);
    json img = {{"image", flags.GetString("image")}};
    json iouts = json::array();
    for (const OutputComparison& c : ic.outputs) {
      std::cout << "  image " << flags.GetString("image") << " output \"" << c.name << "\": " << FormatComparison(c) << "\n";
      iouts.push_back({{"name", c.name}, {"max_abs", c.max_abs}, {"mean_abs", c.mean_abs},
                       {"equal_fraction", c.agreement()}, {"error", c.error()}});
    }
    img["outputs"] = iouts;
    if (ic.kind == ImageComparison::Kind::kClassifier) {
      const double delta = std::fabs(ic.score_b - ic.score_a);
      std::cout << "  classifier: top-1 " << ic.top1_a << " (score " << ic.score_a << ") -> " << ic.top1_b
                << "; score of class " << ic.top1_a << " " << ic.score_a << " -> " << ic.score_b << " (change "
                << delta << ")" << (ic.top1_a == ic.top1_b ? ", same top-1" : ", TOP-1 CHANGED") << "\n";
      img["kind"] = "classifier";
      img["top1_before"] = ic.top1_a;
      img["top1_after"] = ic.top1_b;
      img["score_before"] = ic.score_a;
      img["score_after"] = ic.score_b;
      if (ic.top1_a != ic.top1_b) {
        within = false;
        violations.push_back("the top-1 class changed on the image");
      }
      if (delta > std::max(tolerance, 0.05)) {
        within = false;
        violations.push_back(StrCat("the top-1 score moved by ", delta));
      }
    } else if (ic.kind == ImageComparison::Kind::kSegmentation) {
      std::cout << "  segmentation: " << std::fixed << std::setprecision(3) << 100 * ic.pixel_agreement()
                << std::defaultfloat << "% of " << ic.pixels << " pixels keep their label\n";
      img["kind"] = "segmentation";
      img["pixel_agreement"] = ic.pixel_agreement();
      img["pixels"] = ic.pixels;
      if (1 - ic.pixel_agreement() > tolerance) {
        within = false;
        violations.push_back(StrCat(100 * (1 - ic.pixel_agreement()), "% of the pixels change label"));
      }
    } else if (ic.kind == ImageComparison::Kind::kKeypoints) {
      std::cout << "  keypoints: " << ic.keypoints << " keypoints, mean shift " << std::fixed << std::setprecision(2)
                << ic.mean_shift_px << " px, max " << ic.max_shift_px << " px (input pixels), " << ic.moved
                << " moved more than 2 px; the " << ic.confident << " with score >= 0.3 moved at most "
                << ic.confident_max_shift_px << " px; largest score change " << std::setprecision(3)
                << ic.max_score_change << std::defaultfloat << "\n";
      img["confident_keypoints"] = ic.confident;
      img["confident_max_shift_px"] = ic.confident_max_shift_px;
      img["kind"] = "keypoints";
      img["keypoints"] = ic.keypoints;
      img["mean_shift_px"] = ic.mean_shift_px;
      img["max_shift_px"] = ic.max_shift_px;
      img["moved"] = ic.moved;
      img["max_score_change"] = ic.max_score_change;
    } else {
      img["kind"] = "other";
    }
    accuracy["image"] = img;
  }
  report["accuracy"] = accuracy;
  report["tolerance"] = tolerance;
  report["within_tolerance"] = within;
  report["interface_changed"] = interface_changed;
  if (interface_changed)
    std::cout << "\nNOTE: the model's inputs/outputs changed type (see the changes marked MODEL INPUT/OUTPUT above)\n";

  int exit_code = 0;
  bool written = false;
  if (verify && !within && !accept_loss) {
    std::cout << "\n--verify: NOT WRITTEN: outputs move beyond the tolerance " << tolerance << ":\n";
    for (const std::string& v : violations) std::cout << "  " << v << "\n";
    std::cout << "  (--accept_accuracy_loss writes it anyway; --tolerance sets the bound)\n";
    exit_code = 1;
  } else if (!dry_run) {
    WriteFileAtomically(out_path, {std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
    written = true;
    std::cout << "\nwrote " << out_path << " (" << bytes.size() << " bytes)";
    if (verify) std::cout << (within ? ", verified within tolerance " : ", accuracy loss accepted beyond tolerance ") << tolerance;
    std::cout << "\n";
  } else {
    std::cout << "\n--dry_run: nothing written\n";
  }
  report["written"] = written;
  report["output"] = written ? out_path : "";
  report["violations"] = violations;
  if (flags.Has("report_json")) {
    WriteFileAtomically(flags.GetString("report_json"), {report.dump(2), "\n"});
  }
  return exit_code;
}

}  // namespace

int CmdFix(const Args& args) {
  return RunCommand("fix", [&] { return Fix(args); });
}

}  // namespace delegato::tools
