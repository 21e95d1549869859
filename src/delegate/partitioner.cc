#include "delegate/partitioner.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace delegato {
namespace {

template <class T>
void SortUnique(std::vector<T>* items) {
  std::sort(items->begin(), items->end());
  items->erase(std::unique(items->begin(), items->end()), items->end());
}

void CheckTensorIndex(const GraphInfo& graph, int tensor, bool optional_allowed,
                      const char* where) {
  if (optional_allowed && tensor == -1) return;
  DLG_CHECK(tensor >= 0 && tensor < graph.num_tensors, "partitioning: ", where,
            " names tensor ", tensor, ", but the graph has ", graph.num_tensors, " tensors");
}

void ValidateGraph(const GraphInfo& graph) {
  const int num_nodes = graph.num_nodes();
  DLG_CHECK(graph.node_outputs.size() == graph.node_inputs.size(), "partitioning: ",
            graph.node_inputs.size(), " input lists but ", graph.node_outputs.size(),
            " output lists");
  DLG_CHECK(graph.node_has_side_effect.empty() ||
                static_cast<int>(graph.node_has_side_effect.size()) == num_nodes,
            "partitioning: side-effect flags for ", graph.node_has_side_effect.size(),
            " nodes, but the graph has ", num_nodes);
  for (int node = 0; node < num_nodes; ++node) {
    for (int t : graph.node_inputs[node]) CheckTensorIndex(graph, t, true, "a node input");
    for (int t : graph.node_outputs[node]) CheckTensorIndex(graph, t, true, "a node output");
  }
  for (int t : graph.graph_inputs) CheckTensorIndex(graph, t, false, "a graph input");
  for (int t : graph.graph_outputs) CheckTensorIndex(graph, t, false, "a graph output");
}

// The control edges partitioning honours: the explicit ones, or else (greedy
// only) a chain through the nodes with side effects, in plan order.
std::vector<ControlEdge> EffectiveControlEdges(const GraphInfo& graph, bool greedy) {
  std::vector<ControlEdge> edges;
  const int num_nodes = graph.num_nodes();
  if (graph.control_edges) {
    edges = *graph.control_edges;
    for (const auto& [from, to] : edges) {
      DLG_CHECK(from >= 0 && from < num_nodes && to >= 0 && to < num_nodes,
                "partitioning: control edge ", from, " => ", to, " names a node outside 0..",
                num_nodes - 1);
    }
  } else if (greedy && !graph.node_has_side_effect.empty()) {
    int previous = -1;
    for (int node = 0; node < num_nodes; ++node) {
      if (!graph.node_has_side_effect[node]) continue;
      if (previous != -1) edges.emplace_back(previous, node);
      previous = node;
    }
  }
  SortUnique(&edges);
  return edges;
}

// One run of the epoch algorithm described in partitioner.h.
class Partitioner {
 public:
  Partitioner(const GraphInfo& graph, const std::vector<bool>& delegated, bool greedy)
      : graph_(graph),
        delegated_(delegated),
        greedy_(greedy),
        control_edges_(EffectiveControlEdges(graph, greedy)),
        pending_control_edges_(graph.num_nodes(), 0),
        tensor_epoch_(graph.num_tensors, kAlwaysReady),
        node_epoch_(graph.num_nodes(), kNotReady) {
    for (const auto& edge : control_edges_) ++pending_control_edges_[edge.second];
    // Only tensors some node produces have to wait; the rest (graph inputs,
    // constants) are ready from the start.
    for (const auto& outputs : graph_.node_outputs) {
      for (int t : outputs) {
        if (t != -1) tensor_epoch_[t] = kNotReady;
      }
    }
  }

  std::vector<NodeSubset> Run() {
    while (true) {
      subsets_.emplace_back();
      kinds_.push_back(Kind::kUnset);
      FillCurrentSubset();
      if (subsets_.back().nodes.empty()) {
        subsets_.pop_back();
        kinds_.pop_back();
        break;
      }
    }
    for (int node = 0; node < graph_.num_nodes(); ++node) {
      DLG_CHECK(node_epoch_[node] != kNotReady, "partitioning: node ", node,
                " can never run (its inputs or control edges form a cycle)");
    }
    for (int t : graph_.graph_outputs) {
      const int epoch = tensor_epoch_[t];
      if (epoch == kAlwaysReady) continue;  // a graph input or constant that is also an output
      DLG_CHECK(epoch >= 0 && epoch < static_cast<int>(subsets_.size()),
                "partitioning: graph output tensor ", t, " is never produced");
      subsets_[epoch].output_tensors.push_back(t);
    }
    for (NodeSubset& subset : subsets_) {
      SortUnique(&subset.input_tensors);
      SortUnique(&subset.output_tensors);
    }
    return std::move(subsets_);
  }

 private:
  enum class Kind { kUnset, kDelegated, kCpu };
  static constexpr int kNotReady = -1;
  static constexpr int kAlwaysReady = -2;

  void FillCurrentSubset() {
    while (true) {
      bool placed_any = false;
      for (int node = 0; node < graph_.num_nodes(); ++node) {
        if (TryPlace(node)) {
          placed_any = true;
        } else if (placed_any && !greedy_) {
          return;  // keep the subset a consecutive run of the plan
        }
      }
      if (!placed_any) return;
    }
  }

  // Places `node` in the current subset when it is unplaced, ready, and of the
  // subset's kind.
  bool TryPlace(int node) {
    if (node_epoch_[node] != kNotReady) return false;
    for (int t : graph_.node_inputs[node]) {
      if (t != -1 && tensor_epoch_[t] == kNotReady) return false;
    }
    if (pending_control_edges_[node] != 0) return false;

    const int epoch = static_cast<int>(subsets_.size()) - 1;
    NodeSubset& subset = subsets_.back();
    const Kind kind = delegated_[node] ? Kind::kDelegated : Kind::kCpu;
    if (kinds_.back() == Kind::kUnset) {
      kinds_.back() = kind;  // the epoch's first ready node decides
      subset.delegated = kind == Kind::kDelegated;
    }
    if (kinds_.back() != kind) return false;

    node_epoch_[node] = epoch;
    subset.nodes.push_back(node);
    for (int t : graph_.node_outputs[node]) {
      if (t != -1) tensor_epoch_[t] = epoch;
    }
    for (int t : graph_.node_inputs[node]) {
      if (t == -1) continue;
      const int producer_epoch = tensor_epoch_[t];
      if (producer_epoch == epoch) continue;
      subset.input_tensors.push_back(t);
      if (producer_epoch >= 0) subsets_[producer_epoch].output_tensors.push_back(t);
    }
    // Release the nodes waiting on this one.
    auto edge = std::lower_bound(control_edges_.begin(), control_edges_.end(),
                                 ControlEdge(node, std::numeric_limits<int>::min()));
    for (; edge != control_edges_.end() && edge->first == node; ++edge) {
      --pending_control_edges_[edge->second];
    }
    return true;
  }

  const GraphInfo& graph_;
  const std::vector<bool>& delegated_;
  const bool greedy_;
  const std::vector<ControlEdge> control_edges_;  // sorted
  std::vector<int> pending_control_edges_;        // per node: incoming edges from unplaced nodes
  std::vector<int> tensor_epoch_;                 // subset producing it, or kNotReady/kAlwaysReady
  std::vector<int> node_epoch_;                   // subset holding it, or kNotReady
  std::vector<NodeSubset> subsets_;
  std::vector<Kind> kinds_;                       // parallel to subsets_
};

Reason FrameworkReason(ReasonCode code, std::string message, std::string fix) {
  return Reason{code, "framework", std::move(message), std::move(fix)};
}

Reason UserExclusionReason(int node, const DelegateOptions& options) {
  if (std::find(options.skip_nodes.begin(), options.skip_nodes.end(), node) !=
      options.skip_nodes.end()) {
    return FrameworkReason(ReasonCode::kUserExcluded,
                           StrCat("node ", node, " is listed in skip_nodes"),
                           "remove it from skip_nodes");
  }
  return FrameworkReason(
      ReasonCode::kUserExcluded,
      StrCat("node ", node, " is outside the delegated node range [",
             options.first_node < 0 ? std::string("start") : std::to_string(options.first_node),
             ", ",
             options.last_node < 0 ? std::string("end") : std::to_string(options.last_node), "]"),
      "widen first_node/last_node");
}

}  // namespace

std::vector<NodeSubset> PartitionGraph(const GraphInfo& graph,
                                       const std::vector<int>& nodes_to_delegate, bool greedy) {
  ValidateGraph(graph);
  std::vector<bool> delegated(graph.num_nodes(), false);
  for (int node : nodes_to_delegate) {
    DLG_CHECK(node >= 0 && node < graph.num_nodes(), "partitioning: node ", node,
              " to delegate is outside 0..", graph.num_nodes() - 1);
    delegated[node] = true;
  }
  return Partitioner(graph, delegated, greedy).Run();
}

bool IsUserExcluded(int node, const DelegateOptions& options) {
  if (options.first_node >= 0 && node < options.first_node) return true;
  if (options.last_node >= 0 && node > options.last_node) return true;
  return std::find(options.skip_nodes.begin(), options.skip_nodes.end(), node) !=
         options.skip_nodes.end();
}

PartitionSelection SelectDelegatedPartitions(const std::vector<NodeSubset>& subsets, int num_nodes,
                                             const DelegateOptions& options) {
  PartitionSelection selection;
  selection.nodes.resize(num_nodes);

  std::vector<int> by_size;  // indices of delegated subsets
  for (int i = 0; i < static_cast<int>(subsets.size()); ++i) {
    for (int node : subsets[i].nodes) {
      DLG_CHECK(node >= 0 && node < num_nodes, "partition selection: subset ", i, " names node ",
                node, ", but the graph has ", num_nodes, " nodes");
    }
    if (subsets[i].delegated) by_size.push_back(i);
  }
  // TFLite sorts with std::sort; for the handful of partitions real graphs
  // have, that keeps equal sizes in creation order, which stable_sort
  // guarantees.
  std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
    return subsets[a].nodes.size() > subsets[b].nodes.size();
  });

  const int num_delegated = static_cast<int>(by_size.size());
  const int limit = options.max_delegated_partitions > 0
                        ? std::min(options.max_delegated_partitions, num_delegated)
                        : num_delegated;
  for (int rank = 0; rank < num_delegated; ++rank) {
    const NodeSubset& subset = subsets[by_size[rank]];
    const int size = static_cast<int>(subset.nodes.size());
    // Sizes descend, so the first subset below the minimum ends the selection
    // exactly as TFLite's loop does.
    if (rank < limit && size >= options.min_nodes_per_partition) {
      selection.chosen_subsets.push_back(by_size[rank]);
      continue;
    }
    Reason reason =
        size < options.min_nodes_per_partition
            ? FrameworkReason(ReasonCode::kBelowMinNodes,
                              StrCat("its delegated partition has ", size,
                                     " node(s), fewer than min_nodes_per_partition=",
                                     options.min_nodes_per_partition),
                              "lower min_nodes_per_partition, or make the neighbouring nodes "
                              "supported so the partition grows")
            : FrameworkReason(ReasonCode::kPartitionLimit,
                              StrCat("its delegated partition of ", size,
                                     " node(s) is not among the ", limit, " largest of ",
                                     num_delegated, " (max_delegated_partitions=",
                                     options.max_delegated_partitions, ")"),
                              "raise max_delegated_partitions, or make the nodes between "
                              "partitions supported so they merge");
    for (int node : subset.nodes) selection.nodes[node].reasons.push_back(reason);
  }

  // Partition numbers follow execution order, not size.
  std::vector<int> chosen_in_order = selection.chosen_subsets;
  std::sort(chosen_in_order.begin(), chosen_in_order.end());
  for (int k = 0; k < static_cast<int>(chosen_in_order.size()); ++k) {
    for (int node : subsets[chosen_in_order[k]].nodes) {
      selection.nodes[node].delegated = true;
      selection.nodes[node].partition = k;
      selection.nodes_to_delegate.push_back(node);
    }
  }
  std::sort(selection.nodes_to_delegate.begin(), selection.nodes_to_delegate.end());

  for (const NodeSubset& subset : subsets) {
    if (subset.delegated) continue;
    for (int node : subset.nodes) {
      if (IsUserExcluded(node, options)) {
        selection.nodes[node].reasons.push_back(UserExclusionReason(node, options));
      }
    }
  }
  return selection;
}

DelegationPlan PlanDelegation(const GraphInfo& graph, const std::vector<NodeSupport>& support,
                              const DelegateOptions& options) {
  const int num_nodes = graph.num_nodes();
  DLG_CHECK(static_cast<int>(support.size()) == num_nodes, "delegation: the delegate answered for ",
            support.size(), " nodes, but the graph has ", num_nodes);

  std::vector<int> candidates;
  for (int node = 0; node < num_nodes; ++node) {
    if (support[node].supported && !IsUserExcluded(node, options)) candidates.push_back(node);
  }
  const std::vector<NodeSubset> preview = PartitionGraph(graph, candidates, options.greedy);
  PartitionSelection selection = SelectDelegatedPartitions(preview, num_nodes, options);

  DelegationPlan plan;
  plan.num_candidate_partitions = static_cast<int>(
      std::count_if(preview.begin(), preview.end(), [](const NodeSubset& s) { return s.delegated; }));
  plan.subsets = PartitionGraph(graph, selection.nodes_to_delegate, options.greedy);
  plan.nodes.resize(num_nodes);
  for (int i = 0; i < static_cast<int>(plan.subsets.size()); ++i) {
    if (!plan.subsets[i].delegated) continue;
    const int partition = static_cast<int>(plan.partition_subsets.size());
    plan.partition_subsets.push_back(i);
    for (int node : plan.subsets[i].nodes) {
      plan.nodes[node].delegated = true;
      plan.nodes[node].partition = partition;
      ++plan.num_delegated_nodes;
    }
  }
  for (int node = 0; node < num_nodes; ++node) {
    NodePlacement& placement = plan.nodes[node];
    if (placement.delegated) continue;
    if (!support[node].supported) {
      placement.reasons = support[node].reasons;
      if (placement.reasons.empty()) {
        placement.reasons.push_back(Reason{ReasonCode::kUnsupportedOp, "delegate",
                                           "the delegate reported the node unsupported", ""});
      }
    }
    for (Reason& reason : selection.nodes[node].reasons) placement.reasons.push_back(std::move(reason));
  }
  return plan;
}

std::string SummaryLine(std::string_view name, int nodes_delegated, int nodes_total,
                        int partitions) {
  return StrCat(name, " delegate: ", nodes_delegated, " nodes delegated out of ", nodes_total,
                " nodes with ", partitions, " partitions.");
}

}  // namespace delegato
