// Graph partitioning for delegates, with TFLite's semantics.
//
// A delegate marks the nodes it can run. PartitionGraph cuts the execution plan
// into subsets, each wholly delegated or wholly CPU, such that running the
// subsets one after another in the order returned respects every data and
// control dependency. SelectDelegatedPartitions then keeps the largest
// delegated subsets (max_delegated_partitions, min_nodes_per_partition), and
// PlanDelegation does the whole job the way a TFLite delegate does it:
//
//   candidates = supported nodes - skip_nodes, within [first_node, last_node]
//   preview    = PartitionGraph(graph, candidates)
//   chosen     = nodes of the N largest delegated subsets of preview
//   final      = PartitionGraph(graph, chosen)      (what will execute)
//
// How PartitionGraph works (TFLite's PartitionGraphIntoIndependentNodeSubsets):
// - Tensors no node produces (graph inputs, constants) are ready from the start.
// - Epochs: each epoch opens one subset with no kind yet. It sweeps the
//   execution plan in order; a node joins the subset when it is not yet placed,
//   all its inputs are ready, all nodes it has control edges from are placed,
//   and its kind (delegated or not) equals the subset's kind. The first ready
//   node of the epoch sets the subset's kind. Outputs of a node that joins are
//   ready for the rest of the sweep.
// - Greedy mode repeats the sweep until one changes nothing, so a subset grabs
//   every node of its kind that becomes ready. Non-greedy mode ends the epoch at
//   the first node that does not join after one has joined, so subsets are
//   consecutive runs of the execution plan.
// - An epoch that takes no node ends partitioning; a node never placed means a
//   dependency cycle (an error).
// - Subset inputs: tensors a member reads that come from another subset, the
//   graph inputs, or constants. Each such tensor produced in another subset
//   becomes an output of that subset. Graph outputs are outputs of the subset
//   that produces them. Both lists are sorted and unique.
// - Every dependency points to an earlier subset: subsets run in creation order.
//
// Worked example (TFLite's own). Nodes 2 and 3 (marked [ ]) are delegated:
//
//        t0       t1       t2       t3
//   in ----> (0) ----> (1) ----> [2] ----> [3] ---------+ t4
//                       |                               v
//                       +---- t2 ----> (4) ---- t5 --> (5) ----> out t6
//
//   greedy:      {0,1,4} {2,3} {5}   node 4 only needs t2, so epoch 0 takes it
//   non-greedy:  {0,1} {2,3} {4,5}   epoch 0 stops at node 2 (wrong kind)
//
// With a control edge 3 => 4 (node 4 must run after node 3):
//
//   in ----> (0) ----> (1) ----> [2] ----> [3] ---------+
//                       |                   ||          v
//                       +----------------> (4) ------> (5) ----> out
//                                           ^^ 3 => 4
//
//   greedy:      {0,1} {2,3} {4,5}   node 4 waits for node 3's epoch
//
// When the graph brings no control edges (std::nullopt) and partitioning is
// greedy, nodes with side effects are chained in plan order (n1 => n2 => ...),
// as TFLite does for stateful ops; explicit control edges replace that chain.
//
// Everything here works on GraphInfo, a plain description of the graph, not on
// runtime types; graph_view.h builds one from a model.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "delegato/delegate.h"

namespace delegato {

// first => second: node `second` may only run after node `first`.
using ControlEdge = std::pair<int, int>;

// Nodes are identified by their position in the execution plan (0..n-1).
struct GraphInfo {
  int num_tensors = 0;
  std::vector<std::vector<int>> node_inputs;   // per node; -1 = absent optional input
  std::vector<std::vector<int>> node_outputs;  // per node; -1 entries are skipped
  std::vector<int> graph_inputs;
  std::vector<int> graph_outputs;
  // Optional, per node (empty = no node has side effects). Only used to build
  // the implicit control chain described above.
  std::vector<bool> node_has_side_effect;
  // Explicit control dependencies; std::nullopt = none given (see above).
  std::optional<std::vector<ControlEdge>> control_edges;

  int num_nodes() const { return static_cast<int>(node_inputs.size()); }
};

struct NodeSubset {
  bool delegated = false;
  std::vector<int> nodes;           // in the order they execute
  std::vector<int> input_tensors;   // sorted, unique
  std::vector<int> output_tensors;  // sorted, unique
};

// Partitions the graph so that exactly `nodes_to_delegate` land in delegated
// subsets. Throws delegato::Error for an invalid node or tensor index, an
// invalid control edge, or a dependency cycle.
std::vector<NodeSubset> PartitionGraph(const GraphInfo& graph,
                                       const std::vector<int>& nodes_to_delegate,
                                       bool greedy = true);

// Where one node runs.
struct NodePlacement {
  bool delegated = false;
  int partition = -1;           // which delegated partition (0-based, in execution order); -1 = CPU
  std::vector<Reason> reasons;  // why it stays on the CPU; empty when delegated
};

// True when the options keep `node` away from the delegate (--skip_nodes or
// outside [first_node, last_node]).
bool IsUserExcluded(int node, const DelegateOptions& options);

struct PartitionSelection {
  std::vector<int> chosen_subsets;     // indices into the given subsets, largest first
  std::vector<int> nodes_to_delegate;  // the chosen subsets' nodes, ascending
  // Per node. Nodes of chosen subsets are delegated; nodes of rejected
  // delegated subsets carry kPartitionLimit or kBelowMinNodes; nodes of CPU
  // subsets carry kUserExcluded when the options exclude them, else nothing
  // (their reasons are the delegate's own).
  std::vector<NodePlacement> nodes;
};

// Keeps the largest delegated subsets, like TFLite's GetFirstNLargestPartitions:
// sorts delegated subsets by node count, descending (ties keep creation
// order), takes the first max_delegated_partitions (all when <= 0), and stops
// at the first one smaller than min_nodes_per_partition. A rejected subset's
// nodes get kBelowMinNodes when it is smaller than min_nodes_per_partition,
// else kPartitionLimit. `num_nodes` is the graph's node count.
PartitionSelection SelectDelegatedPartitions(const std::vector<NodeSubset>& subsets, int num_nodes,
                                             const DelegateOptions& options);

struct DelegationPlan {
  std::vector<NodeSubset> subsets;         // the final partitioning, in execution order
  std::vector<int> partition_subsets;      // delegated partition k -> index into `subsets`
  std::vector<NodePlacement> nodes;        // per node, with every reason for staying on the CPU
  int num_delegated_nodes = 0;
  // Delegated subsets before selection: the "K partitions" TFLite's log line
  // reports (it counts every candidate partition, not only the chosen ones).
  int num_candidate_partitions = 0;

  int num_partitions() const { return static_cast<int>(partition_subsets.size()); }
};

// The whole decision for one delegate: `support` has one entry per node.
// Unsupported nodes keep the delegate's reasons (a generic one is added when
// the delegate gave none); excluded, cut and rejected nodes get the
// framework's. Throws delegato::Error when `support` does not match the graph.
DelegationPlan PlanDelegation(const GraphInfo& graph, const std::vector<NodeSupport>& support,
                              const DelegateOptions& options);

// TFLite's log line: "<Name> delegate: N nodes delegated out of M nodes with K partitions."
std::string SummaryLine(std::string_view name, int nodes_delegated, int nodes_total, int partitions);

}  // namespace delegato
