// Partitioning tests on tiny graphs drawn in comments.
//
// Drawing convention: tN is tensor N, (N) a CPU node, [N] a delegated node.
// Subsets are written kind{nodes} in{inputs} out{outputs}, C = CPU, D = delegated.
#include "delegate/partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <random>
#include <set>

#include "core/error.h"
#include "delegate/graph_view.h"
#include "model/model.h"
#include "test_util.h"

namespace delegato {

bool operator==(const NodeSubset& a, const NodeSubset& b) {
  return a.delegated == b.delegated && a.nodes == b.nodes && a.input_tensors == b.input_tensors &&
         a.output_tensors == b.output_tensors;
}

void PrintTo(const NodeSubset& s, std::ostream* os) {
  auto list = [&](const std::vector<int>& v) {
    *os << "{";
    for (size_t i = 0; i < v.size(); ++i) *os << (i ? "," : "") << v[i];
    *os << "}";
  };
  *os << (s.delegated ? "D" : "C");
  list(s.nodes);
  *os << " in";
  list(s.input_tensors);
  *os << " out";
  list(s.output_tensors);
}

namespace {

namespace fs = std::filesystem;
using testing::SharedDir;

struct TestNode {
  std::vector<int> inputs, outputs;
  bool side_effect = false;
};

GraphInfo MakeGraph(std::vector<int> inputs, std::vector<int> outputs, std::vector<TestNode> nodes) {
  GraphInfo graph;
  int max_tensor = -1;
  for (int t : inputs) max_tensor = std::max(max_tensor, t);
  for (int t : outputs) max_tensor = std::max(max_tensor, t);
  bool any_side_effect = false;
  for (const TestNode& node : nodes) {
    for (int t : node.inputs) max_tensor = std::max(max_tensor, t);
    for (int t : node.outputs) max_tensor = std::max(max_tensor, t);
    graph.node_inputs.push_back(node.inputs);
    graph.node_outputs.push_back(node.outputs);
    graph.node_has_side_effect.push_back(node.side_effect);
    any_side_effect = any_side_effect || node.side_effect;
  }
  if (!any_side_effect) graph.node_has_side_effect.clear();
  graph.num_tensors = max_tensor + 1;
  graph.graph_inputs = std::move(inputs);
  graph.graph_outputs = std::move(outputs);
  return graph;
}

NodeSubset Cpu(std::vector<int> nodes, std::vector<int> in, std::vector<int> out) {
  return NodeSubset{false, std::move(nodes), std::move(in), std::move(out)};
}
NodeSubset Del(std::vector<int> nodes, std::vector<int> in, std::vector<int> out) {
  return NodeSubset{true, std::move(nodes), std::move(in), std::move(out)};
}

using Subsets = std::vector<NodeSubset>;

// ---------------------------------------------------------------------------
// PartitionGraph: TFLite's own cases.

TEST(PartitionGraphTest, EmptyGraphHasNoSubsets) {
  EXPECT_EQ(PartitionGraph(MakeGraph({}, {}, {}), {}), Subsets{});
}

// t0 is both graph input and graph output; there is no node.
TEST(PartitionGraphTest, TensorThatIsInputAndOutputNeedsNoSubset) {
  EXPECT_EQ(PartitionGraph(MakeGraph({0}, {0}, {}), {}), Subsets{});
}

//   t0 --> (0) --> t1
TEST(PartitionGraphTest, OneCpuNode) {
  const GraphInfo graph = MakeGraph({0}, {1}, {{{0}, {1}}});
  EXPECT_EQ(PartitionGraph(graph, {}), (Subsets{Cpu({0}, {0}, {1})}));
}

//   t0 --> [0] --> t1
TEST(PartitionGraphTest, OneDelegatedNode) {
  const GraphInfo graph = MakeGraph({0}, {1}, {{{0}, {1}}});
  EXPECT_EQ(PartitionGraph(graph, {0}), (Subsets{Del({0}, {0}, {1})}));
}

//   [0] --> t0        (a node with no inputs, e.g. a constant generator)
TEST(PartitionGraphTest, DelegatedNodeWithoutInputs) {
  const GraphInfo graph = MakeGraph({}, {0}, {{{}, {0}}});
  EXPECT_EQ(PartitionGraph(graph, {0}), (Subsets{Del({0}, {}, {0})}));
}

//   t0 --> [0] --> t1 --------------+
//                                   v
//          (1) --> t2 ----------> [2] --> t3
//   (node 1 has no inputs; it is ready from the start but not of epoch 0's kind)
TEST(PartitionGraphTest, CpuNodeWithoutInputsBetweenDelegatedNodes) {
  const GraphInfo graph = MakeGraph({0}, {3}, {{{0}, {1}}, {{}, {2}}, {{1, 2}, {3}}});
  EXPECT_EQ(PartitionGraph(graph, {0, 2}),
            (Subsets{Del({0}, {0}, {1}), Cpu({1}, {}, {2}), Del({2}, {1, 2}, {3})}));
}

//   t0 --> (0) --> t1 --> [1] --> t2
TEST(PartitionGraphTest, ChainWithSecondNodeDelegated) {
  const GraphInfo graph = MakeGraph({0}, {2}, {{{0}, {1}}, {{1}, {2}}});
  EXPECT_EQ(PartitionGraph(graph, {1}), (Subsets{Cpu({0}, {0}, {1}), Del({1}, {1}, {2})}));
}

//   t0 --> [0] --> t1 --> [1] --> t2
TEST(PartitionGraphTest, ChainFullyDelegated) {
  const GraphInfo graph = MakeGraph({0}, {2}, {{{0}, {1}}, {{1}, {2}}});
  EXPECT_EQ(PartitionGraph(graph, {0, 1}), (Subsets{Del({0, 1}, {0}, {2})}));
}

//   t0 --> [0] --> t1 --> (1) --> t2 --> [2] --> t3
//                   |                     ^
//                   +---------------------+
// Node 2 needs node 1's output, so nodes 0 and 2 cannot share a subset.
TEST(PartitionGraphTest, DependencyThroughCpuNodeForcesThreeSubsets) {
  const GraphInfo graph = MakeGraph({0}, {3}, {{{0}, {1}}, {{1}, {2}}, {{1, 2}, {3}}});
  EXPECT_EQ(PartitionGraph(graph, {0, 2}),
            (Subsets{Del({0}, {0}, {1}), Cpu({1}, {1}, {2}), Del({2}, {1, 2}, {3})}));
}

//   t0 --> [0] --> t1 --> (1) --> t2 (out)
//                   |
//                   +---> [2] --> t3 (out)
// Node 2 only needs node 0: greedy puts them together; non-greedy keeps the
// plan's order and needs three subsets.
TEST(PartitionGraphTest, IndependentDelegatedNodesMergeOnlyWhenGreedy) {
  const GraphInfo graph = MakeGraph({0}, {2, 3}, {{{0}, {1}}, {{1}, {2}}, {{1}, {3}}});
  EXPECT_EQ(PartitionGraph(graph, {0, 2}, /*greedy=*/true),
            (Subsets{Del({0, 2}, {0}, {1, 3}), Cpu({1}, {1}, {2})}));
  EXPECT_EQ(PartitionGraph(graph, {0, 2}, /*greedy=*/false),
            (Subsets{Del({0}, {0}, {1}), Cpu({1}, {1}, {2}), Del({2}, {1}, {3})}));
}

// The worked example of partitioner.h:
//
//        t0       t1       t2       t3
//   in ----> (0) ----> (1) ----> [2] ----> [3] ---------+ t4
//                       |                               v
//                       +---- t2 ----> (4) ---- t5 --> (5) ----> t6
GraphInfo WorkedExample() {
  return MakeGraph({0}, {6},
                   {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}, {{3}, {4}}, {{2}, {5}}, {{4, 5}, {6}}});
}

TEST(PartitionGraphTest, WorkedExampleGreedy) {
  EXPECT_EQ(PartitionGraph(WorkedExample(), {2, 3}),
            (Subsets{Cpu({0, 1, 4}, {0}, {2, 5}), Del({2, 3}, {2}, {4}), Cpu({5}, {4, 5}, {6})}));
}

TEST(PartitionGraphTest, WorkedExampleNonGreedy) {
  EXPECT_EQ(PartitionGraph(WorkedExample(), {2, 3}, /*greedy=*/false),
            (Subsets{Cpu({0, 1}, {0}, {2}), Del({2, 3}, {2}, {4}), Cpu({4, 5}, {2, 4}, {6})}));
}

// The same graph with a control edge 3 => 4: node 4 must wait for node 3.
//
//   in ----> (0) ----> (1) ----> [2] ----> [3] ---------+
//                       |                   ||          v
//                       +----------------> (4) ------> (5) ----> out
TEST(PartitionGraphTest, WorkedExampleWithControlEdge) {
  GraphInfo graph = WorkedExample();
  graph.control_edges = std::vector<ControlEdge>{{3, 4}};
  EXPECT_EQ(PartitionGraph(graph, {2, 3}),
            (Subsets{Cpu({0, 1}, {0}, {2}), Del({2, 3}, {2}, {4}), Cpu({4, 5}, {2, 4}, {6})}));
}

// A resource variable updated and read back (nodes 0, 1, 3, 4 touch it):
//
//   t0 --> [0]var --> t1 --> [1]read --> t2 --> (2)add --> t3
//                     |                                     |
//                     +-----------> [3]assign <-------------+
//                     |                 ||
//                     +-----------> [4]read --> t4 (out)
//
// Without side-effect ordering node 4 would join nodes 0 and 1; the implicit
// chain 0 => 1 => 3 => 4 keeps the last read after the assignment.
GraphInfo VariableGraph(bool side_effects) {
  return MakeGraph({0}, {4},
                   {{{0}, {1}, side_effects},
                    {{1}, {2}, side_effects},
                    {{2}, {3}, false},
                    {{1, 3}, {}, side_effects},
                    {{1}, {4}, side_effects}});
}

TEST(PartitionGraphTest, SideEffectNodesAreChainedWhenGreedy) {
  EXPECT_EQ(PartitionGraph(VariableGraph(true), {0, 1, 3, 4}),
            (Subsets{Del({0, 1}, {0}, {1, 2}), Cpu({2}, {2}, {3}), Del({3, 4}, {1, 3}, {4})}));
  // Without the flags node 4 is free to run early.
  EXPECT_EQ(PartitionGraph(VariableGraph(false), {0, 1, 3, 4}),
            (Subsets{Del({0, 1, 4}, {0}, {1, 2, 4}), Cpu({2}, {2}, {3}), Del({3}, {1, 3}, {})}));
}

TEST(PartitionGraphTest, ExplicitControlEdgesReplaceTheSideEffectChain) {
  GraphInfo graph = VariableGraph(false);
  graph.control_edges = std::vector<ControlEdge>{{0, 1}, {1, 3}, {3, 4}, {3, 4}};  // duplicates are harmless
  EXPECT_EQ(PartitionGraph(graph, {0, 1, 3, 4}),
            (Subsets{Del({0, 1}, {0}, {1, 2}), Cpu({2}, {2}, {3}), Del({3, 4}, {1, 3}, {4})}));
  // An explicit (even empty) list means "these are all the constraints".
  GraphInfo flagged = VariableGraph(true);
  flagged.control_edges = std::vector<ControlEdge>{};
  EXPECT_EQ(PartitionGraph(flagged, {0, 1, 3, 4}),
            (Subsets{Del({0, 1, 4}, {0}, {1, 2, 4}), Cpu({2}, {2}, {3}), Del({3}, {1, 3}, {})}));
}

//   t0 --> [0] --> t1 --> [1] --> t5 --> [4] --> t6 --> [5] --> t7 (out)
//                          |
//                          +---> t2 --> (2) --> t3 --> (3) --> t4 (out)
//
// greedy:     D{0,1,4,5} then C{2,3}
// non-greedy: D{0,1} C{2,3} D{4,5}
GraphInfo ComplexGraph() {
  return MakeGraph({0}, {4, 7},
                   {{{0}, {1}}, {{1}, {2, 5}}, {{2}, {3}}, {{3}, {4}}, {{5}, {6}}, {{6}, {7}}});
}

TEST(PartitionGraphTest, ComplexGreedy) {
  EXPECT_EQ(PartitionGraph(ComplexGraph(), {0, 1, 4, 5}),
            (Subsets{Del({0, 1, 4, 5}, {0}, {2, 7}), Cpu({2, 3}, {2}, {4})}));
}

TEST(PartitionGraphTest, ComplexNonGreedy) {
  EXPECT_EQ(PartitionGraph(ComplexGraph(), {0, 1, 4, 5}, /*greedy=*/false),
            (Subsets{Del({0, 1}, {0}, {2, 5}), Cpu({2, 3}, {2}, {4}), Del({4, 5}, {5}, {7})}));
}

// ---------------------------------------------------------------------------
// PartitionGraph: more shapes of graph.

//   t0 -> [0] -> t1 -> [1] -> t2 -> (2) -> t3 -> [3] -> t4 -> (4) -> t5 -> [5] -> t6 -> [6] -> t7
GraphInfo Chain(int length) {
  std::vector<TestNode> nodes;
  for (int i = 0; i < length; ++i) nodes.push_back({{i}, {i + 1}});
  return MakeGraph({0}, {length}, nodes);
}

TEST(PartitionGraphTest, ChainWithSeveralDelegatedIslands) {
  const Subsets expected{Del({0, 1}, {0}, {2}), Cpu({2}, {2}, {3}), Del({3}, {3}, {4}),
                         Cpu({4}, {4}, {5}), Del({5, 6}, {5}, {7})};
  EXPECT_EQ(PartitionGraph(Chain(7), {0, 1, 3, 5, 6}), expected);
  EXPECT_EQ(PartitionGraph(Chain(7), {0, 1, 3, 5, 6}, /*greedy=*/false), expected);
}

TEST(PartitionGraphTest, EverythingDelegatedGivesOneSubset) {
  EXPECT_EQ(PartitionGraph(Chain(4), {0, 1, 2, 3}), (Subsets{Del({0, 1, 2, 3}, {0}, {4})}));
  EXPECT_EQ(PartitionGraph(WorkedExample(), {0, 1, 2, 3, 4, 5}),
            (Subsets{Del({0, 1, 2, 3, 4, 5}, {0}, {6})}));
}

TEST(PartitionGraphTest, NothingDelegatedGivesOneCpuSubset) {
  EXPECT_EQ(PartitionGraph(Chain(4), {}), (Subsets{Cpu({0, 1, 2, 3}, {0}, {4})}));
  EXPECT_EQ(PartitionGraph(WorkedExample(), {}, /*greedy=*/false),
            (Subsets{Cpu({0, 1, 2, 3, 4, 5}, {0}, {6})}));
}

//   t0 --+--> [0] --> t1 (out)
//        |
//        +--> (1) --> t2 (out)
// Both kinds read the graph input; each subset lists it as an input.
TEST(PartitionGraphTest, GraphInputConsumedByBothKinds) {
  const GraphInfo graph = MakeGraph({0}, {1, 2}, {{{0}, {1}}, {{0}, {2}}});
  EXPECT_EQ(PartitionGraph(graph, {0}), (Subsets{Del({0}, {0}, {1}), Cpu({1}, {0}, {2})}));
  EXPECT_EQ(PartitionGraph(graph, {1}), (Subsets{Cpu({0}, {0}, {1}), Del({1}, {0}, {2})}));
}

//   t0 --> [0] --> t2 --> (1) --> t3
//   t1 (constant) --^
// Tensors no node produces (t1) are ready from the start and listed as inputs,
// like TFLite lists weights; absent optional inputs (-1) are ignored.
TEST(PartitionGraphTest, ConstantsAreInputsAndOptionalInputsAreIgnored) {
  const GraphInfo graph = MakeGraph({0}, {3}, {{{0, 1, -1}, {2}}, {{2}, {3}}});
  EXPECT_EQ(PartitionGraph(graph, {0}), (Subsets{Del({0}, {0, 1}, {2}), Cpu({1}, {2}, {3})}));
}

//   t0 --> [0] --> t1 (out)      t0 is also a graph output
TEST(PartitionGraphTest, GraphInputThatIsAlsoOutputIsNoSubsetOutput) {
  const GraphInfo graph = MakeGraph({0}, {0, 1}, {{{0}, {1}}});
  EXPECT_EQ(PartitionGraph(graph, {0}), (Subsets{Del({0}, {0}, {1})}));
}

TEST(PartitionGraphTest, RejectsInvalidInput) {
  const GraphInfo chain = Chain(2);
  EXPECT_THROW(PartitionGraph(chain, {2}), Error);
  EXPECT_THROW(PartitionGraph(chain, {-1}), Error);
  for (ControlEdge bad : {ControlEdge{-1, 0}, ControlEdge{0, -1}, ControlEdge{2, 0},
                          ControlEdge{0, 2}}) {
    GraphInfo graph = chain;
    graph.control_edges = std::vector<ControlEdge>{bad};
    EXPECT_THROW(PartitionGraph(graph, {0}), Error) << bad.first << " => " << bad.second;
  }
  GraphInfo bad_tensor = chain;
  bad_tensor.node_inputs[1] = {7};
  EXPECT_THROW(PartitionGraph(bad_tensor, {}), Error);
  GraphInfo bad_output = chain;
  bad_output.graph_outputs = {-1};
  EXPECT_THROW(PartitionGraph(bad_output, {}), Error);
}

TEST(PartitionGraphTest, RejectsNodesThatCanNeverRun) {
  // A node waiting on itself.
  GraphInfo self_edge = MakeGraph({0, 1}, {2}, {{{0}, {2}}, {{1}, {3}}});
  self_edge.control_edges = std::vector<ControlEdge>{{1, 1}};
  EXPECT_THROW(PartitionGraph(self_edge, {0, 1}), Error);
  // Two nodes feeding each other.
  const GraphInfo data_cycle = MakeGraph({0}, {2}, {{{0, 2}, {1}}, {{1}, {2}}});
  EXPECT_THROW(PartitionGraph(data_cycle, {}), Error);
}

// ---------------------------------------------------------------------------
// Invariants on random graphs.

GraphInfo RandomGraph(std::mt19937& rng, int num_nodes) {
  std::vector<int> available = {0, 1};  // two graph inputs
  int next_tensor = 2;
  std::vector<TestNode> nodes;
  std::vector<int> produced;
  for (int i = 0; i < num_nodes; ++i) {
    TestNode node;
    const int num_inputs = rng() % 4;  // sometimes none
    for (int k = 0; k < num_inputs; ++k) node.inputs.push_back(available[rng() % available.size()]);
    if (rng() % 5 == 0) node.inputs.push_back(next_tensor++);  // a constant
    if (rng() % 7 == 0) node.inputs.push_back(-1);
    const int num_outputs = 1 + rng() % 2;
    for (int k = 0; k < num_outputs; ++k) {
      node.outputs.push_back(next_tensor);
      available.push_back(next_tensor);
      produced.push_back(next_tensor++);
    }
    node.side_effect = rng() % 6 == 0;
    nodes.push_back(node);
  }
  std::vector<int> outputs;
  for (int t : produced) {
    if (rng() % 4 == 0) outputs.push_back(t);
  }
  if (!produced.empty()) outputs.push_back(produced.back());
  return MakeGraph({0, 1}, outputs, nodes);
}

void CheckInvariants(const GraphInfo& graph, const std::vector<int>& to_delegate,
                     const Subsets& subsets, bool greedy) {
  std::set<int> delegated(to_delegate.begin(), to_delegate.end());
  std::map<int, int> subset_of_node, position_in_subset, producer_of_tensor;
  for (int s = 0; s < static_cast<int>(subsets.size()); ++s) {
    ASSERT_FALSE(subsets[s].nodes.empty());
    for (int p = 0; p < static_cast<int>(subsets[s].nodes.size()); ++p) {
      const int node = subsets[s].nodes[p];
      ASSERT_TRUE(subset_of_node.emplace(node, s).second) << "node " << node << " placed twice";
      position_in_subset[node] = p;
      EXPECT_EQ(subsets[s].delegated, delegated.count(node) == 1) << "node " << node;
      for (int t : graph.node_outputs[node]) producer_of_tensor[t] = node;
    }
    if (greedy && s > 0) {
      EXPECT_NE(subsets[s].delegated, subsets[s - 1].delegated) << "greedy subsets alternate";
    }
  }
  ASSERT_EQ(static_cast<int>(subset_of_node.size()), graph.num_nodes());

  std::vector<std::set<int>> inputs(subsets.size()), outputs(subsets.size());
  for (int node = 0; node < graph.num_nodes(); ++node) {
    const int s = subset_of_node[node];
    for (int t : graph.node_inputs[node]) {
      if (t == -1) continue;
      auto producer = producer_of_tensor.find(t);
      if (producer == producer_of_tensor.end()) {
        inputs[s].insert(t);
        continue;
      }
      const int ps = subset_of_node[producer->second];
      ASSERT_LE(ps, s) << "tensor " << t << " flows backwards";
      if (ps == s) {
        EXPECT_LT(position_in_subset[producer->second], position_in_subset[node]);
      } else {
        inputs[s].insert(t);
        outputs[ps].insert(t);
      }
    }
  }
  for (int t : graph.graph_outputs) {
    auto producer = producer_of_tensor.find(t);
    if (producer != producer_of_tensor.end()) outputs[subset_of_node[producer->second]].insert(t);
  }
  for (size_t s = 0; s < subsets.size(); ++s) {
    EXPECT_EQ(subsets[s].input_tensors, std::vector<int>(inputs[s].begin(), inputs[s].end()));
    EXPECT_EQ(subsets[s].output_tensors, std::vector<int>(outputs[s].begin(), outputs[s].end()));
  }
  if (!greedy) {  // consecutive runs of the plan
    int next = 0;
    for (const NodeSubset& subset : subsets) {
      for (int node : subset.nodes) EXPECT_EQ(node, next++);
    }
  }
}

TEST(PartitionGraphTest, RandomGraphsKeepEveryDependencyForward) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 300; ++round) {
    const GraphInfo graph = RandomGraph(rng, 1 + rng() % 14);
    std::vector<int> to_delegate;
    for (int node = 0; node < graph.num_nodes(); ++node) {
      if (rng() % 2) to_delegate.push_back(node);
    }
    for (bool greedy : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "round " << round << (greedy ? " greedy" : " non-greedy"));
      CheckInvariants(graph, to_delegate, PartitionGraph(graph, to_delegate, greedy), greedy);
    }
  }
}

// ---------------------------------------------------------------------------
// SelectDelegatedPartitions.

// Subset sizes 3, 1, 2 (delegated), separated by CPU subsets; 8 nodes.
Subsets ThreeIslands() {
  return {Del({0, 1, 2}, {}, {}), Cpu({3}, {}, {}), Del({4}, {}, {}), Cpu({5}, {}, {}),
          Del({6, 7}, {}, {})};
}

std::vector<ReasonCode> Codes(const NodePlacement& placement) {
  std::vector<ReasonCode> codes;
  for (const Reason& r : placement.reasons) codes.push_back(r.code);
  return codes;
}

TEST(SelectDelegatedPartitionsTest, TakesTheNLargest) {
  DelegateOptions options;
  options.max_delegated_partitions = 2;
  const PartitionSelection selection = SelectDelegatedPartitions(ThreeIslands(), 8, options);
  EXPECT_EQ(selection.chosen_subsets, (std::vector<int>{0, 4}));  // largest first
  EXPECT_EQ(selection.nodes_to_delegate, (std::vector<int>{0, 1, 2, 6, 7}));
  EXPECT_EQ(selection.nodes[4].delegated, false);
  EXPECT_EQ(Codes(selection.nodes[4]), std::vector<ReasonCode>{ReasonCode::kPartitionLimit});
  EXPECT_EQ(selection.nodes[4].reasons[0].layer, "framework");
  EXPECT_NE(selection.nodes[4].reasons[0].message.find("max_delegated_partitions=2"),
            std::string::npos);
  // Partition numbers follow execution order.
  EXPECT_EQ(selection.nodes[0].partition, 0);
  EXPECT_EQ(selection.nodes[7].partition, 1);
  // CPU subsets' nodes get no framework reason: theirs is the delegate's.
  EXPECT_TRUE(selection.nodes[3].reasons.empty());
}

TEST(SelectDelegatedPartitionsTest, TiesKeepTheEarlierPartition) {
  const Subsets subsets{Del({0, 1}, {}, {}), Cpu({2}, {}, {}), Del({3, 4}, {}, {})};
  DelegateOptions options;
  options.max_delegated_partitions = 1;
  const PartitionSelection selection = SelectDelegatedPartitions(subsets, 5, options);
  EXPECT_EQ(selection.chosen_subsets, std::vector<int>{0});
  EXPECT_EQ(Codes(selection.nodes[3]), std::vector<ReasonCode>{ReasonCode::kPartitionLimit});
}

TEST(SelectDelegatedPartitionsTest, StopsAtTheFirstPartitionBelowTheMinimum) {
  DelegateOptions options;
  options.min_nodes_per_partition = 2;
  const PartitionSelection selection = SelectDelegatedPartitions(ThreeIslands(), 8, options);
  EXPECT_EQ(selection.chosen_subsets, (std::vector<int>{0, 4}));
  EXPECT_EQ(Codes(selection.nodes[4]), std::vector<ReasonCode>{ReasonCode::kBelowMinNodes});
}

TEST(SelectDelegatedPartitionsTest, LimitAndMinimumTogether) {
  DelegateOptions options;
  options.max_delegated_partitions = 1;
  options.min_nodes_per_partition = 2;
  const PartitionSelection selection = SelectDelegatedPartitions(ThreeIslands(), 8, options);
  EXPECT_EQ(selection.chosen_subsets, std::vector<int>{0});
  EXPECT_EQ(Codes(selection.nodes[4]), std::vector<ReasonCode>{ReasonCode::kBelowMinNodes});
  EXPECT_EQ(Codes(selection.nodes[6]), std::vector<ReasonCode>{ReasonCode::kPartitionLimit});
}

TEST(SelectDelegatedPartitionsTest, ZeroOrNegativeLimitMeansUnlimited) {
  for (int limit : {0, -1}) {
    DelegateOptions options;
    options.max_delegated_partitions = limit;
    const PartitionSelection selection = SelectDelegatedPartitions(ThreeIslands(), 8, options);
    EXPECT_EQ(selection.chosen_subsets, (std::vector<int>{0, 4, 2}));
    EXPECT_EQ(selection.nodes_to_delegate, (std::vector<int>{0, 1, 2, 4, 6, 7}));
    EXPECT_EQ(selection.nodes[4].partition, 1);
  }
}

TEST(SelectDelegatedPartitionsTest, MinimumAboveEveryPartitionDelegatesNothing) {
  DelegateOptions options;
  options.min_nodes_per_partition = 4;
  const PartitionSelection selection = SelectDelegatedPartitions(ThreeIslands(), 8, options);
  EXPECT_TRUE(selection.chosen_subsets.empty());
  EXPECT_TRUE(selection.nodes_to_delegate.empty());
  for (int node : {0, 1, 2, 4, 6, 7}) {
    EXPECT_EQ(Codes(selection.nodes[node]), std::vector<ReasonCode>{ReasonCode::kBelowMinNodes});
  }
}

// ---------------------------------------------------------------------------
// PlanDelegation: the whole decision for one delegate.

std::vector<NodeSupport> SupportOnly(int num_nodes, std::set<int> supported) {
  std::vector<NodeSupport> support(num_nodes);
  for (int node = 0; node < num_nodes; ++node) {
    support[node].supported = supported.count(node) == 1;
    if (!support[node].supported) {
      support[node].reasons.push_back(
          {ReasonCode::kUnsupportedInputType, "delegate", "input 0 is INT16", "quantize to INT8"});
    }
  }
  return support;
}

//   t0 -> [0] -> [1] -> (2) -> [3] -> (4) -> [5] -> [6] -> t7
// Islands of 2, 1 and 2 nodes; with a limit of 2 the lone node 3 returns to
// the CPU and the final plan merges nodes 2..4 into one CPU subset.
TEST(PlanDelegationTest, ChoosesPartitionsAndRepartitions) {
  DelegateOptions options;
  options.max_delegated_partitions = 2;
  const DelegationPlan plan = PlanDelegation(Chain(7), SupportOnly(7, {0, 1, 3, 5, 6}), options);
  EXPECT_EQ(plan.subsets,
            (Subsets{Del({0, 1}, {0}, {2}), Cpu({2, 3, 4}, {2}, {5}), Del({5, 6}, {5}, {7})}));
  EXPECT_EQ(plan.partition_subsets, (std::vector<int>{0, 2}));
  EXPECT_EQ(plan.num_partitions(), 2);
  EXPECT_EQ(plan.num_delegated_nodes, 4);
  EXPECT_EQ(plan.num_candidate_partitions, 3);
  EXPECT_EQ(plan.nodes[5].partition, 1);
  EXPECT_EQ(Codes(plan.nodes[3]), std::vector<ReasonCode>{ReasonCode::kPartitionLimit});
  EXPECT_EQ(Codes(plan.nodes[2]), std::vector<ReasonCode>{ReasonCode::kUnsupportedInputType});
  EXPECT_EQ(plan.nodes[2].reasons[0].fix, "quantize to INT8");
  for (int node : {0, 1, 5, 6}) EXPECT_TRUE(plan.nodes[node].reasons.empty());
  // TFLite's log line counts every candidate partition.
  EXPECT_EQ(SummaryLine("XNNPACK", plan.num_delegated_nodes, 7, plan.num_candidate_partitions),
            "XNNPACK delegate: 4 nodes delegated out of 7 nodes with 3 partitions.");
}

//   t0 -> [0] -> [1] -> (2) -> [3] -> [4] -> t5       node 2 is skipped by the user
TEST(PlanDelegationTest, HonoursSkipNodes) {
  DelegateOptions options;
  options.skip_nodes = {2};
  const DelegationPlan plan = PlanDelegation(Chain(5), SupportOnly(5, {0, 1, 2, 3, 4}), options);
  EXPECT_EQ(plan.subsets,
            (Subsets{Del({0, 1}, {0}, {2}), Cpu({2}, {2}, {3}), Del({3, 4}, {3}, {5})}));
  ASSERT_EQ(Codes(plan.nodes[2]), std::vector<ReasonCode>{ReasonCode::kUserExcluded});
  EXPECT_NE(plan.nodes[2].reasons[0].message.find("skip_nodes"), std::string::npos);
}

//   t0 -> (0) -> [1] -> [2] -> [3] -> (4) -> t5       only nodes 1..3 may be delegated
TEST(PlanDelegationTest, HonoursNodeRange) {
  DelegateOptions options;
  options.first_node = 1;
  options.last_node = 3;
  const DelegationPlan plan = PlanDelegation(Chain(5), SupportOnly(5, {0, 1, 2, 3, 4}), options);
  EXPECT_EQ(plan.subsets,
            (Subsets{Cpu({0}, {0}, {1}), Del({1, 2, 3}, {1}, {4}), Cpu({4}, {4}, {5})}));
  for (int node : {0, 4}) {
    ASSERT_EQ(Codes(plan.nodes[node]), std::vector<ReasonCode>{ReasonCode::kUserExcluded});
    EXPECT_NE(plan.nodes[node].reasons[0].message.find("[1, 3]"), std::string::npos);
  }
  // An open end.
  options.first_node = -1;
  options.last_node = 2;
  EXPECT_TRUE(IsUserExcluded(3, options));
  EXPECT_FALSE(IsUserExcluded(0, options));
}

TEST(PlanDelegationTest, UnsupportedAndExcludedNodeKeepsBothReasons) {
  DelegateOptions options;
  options.skip_nodes = {1};
  std::vector<NodeSupport> support = SupportOnly(3, {0, 2});
  support[1].reasons.clear();  // the delegate said no without saying why
  const DelegationPlan plan = PlanDelegation(Chain(3), support, options);
  EXPECT_EQ(Codes(plan.nodes[1]),
            (std::vector<ReasonCode>{ReasonCode::kUnsupportedOp, ReasonCode::kUserExcluded}));
  EXPECT_EQ(plan.nodes[1].reasons[0].layer, "delegate");
}

TEST(PlanDelegationTest, NothingSupportedLeavesOneCpuSubset) {
  const DelegationPlan plan = PlanDelegation(WorkedExample(), SupportOnly(6, {}), {});
  EXPECT_EQ(plan.subsets, (Subsets{Cpu({0, 1, 2, 3, 4, 5}, {0}, {6})}));
  EXPECT_EQ(plan.num_partitions(), 0);
  EXPECT_EQ(plan.num_candidate_partitions, 0);
  for (const NodePlacement& node : plan.nodes) EXPECT_FALSE(node.reasons.empty());
}

TEST(PlanDelegationTest, NonGreedyOptionReachesThePartitioner) {
  DelegateOptions options;
  options.greedy = false;
  const DelegationPlan plan = PlanDelegation(WorkedExample(), SupportOnly(6, {2, 3}), options);
  EXPECT_EQ(plan.subsets,
            (Subsets{Cpu({0, 1}, {0}, {2}), Del({2, 3}, {2}, {4}), Cpu({4, 5}, {2, 4}, {6})}));
}

TEST(PlanDelegationTest, RejectsSupportOfWrongLength) {
  EXPECT_THROW(PlanDelegation(Chain(3), SupportOnly(2, {0}), {}), Error);
}

// ---------------------------------------------------------------------------
// Reason names and the log line.

TEST(ReasonCodeTest, NamesAreStableSnakeCaseAndRoundTrip) {
  EXPECT_STREQ(ReasonCodeName(ReasonCode::kUnsupportedInputType), "unsupported_input_type");
  EXPECT_STREQ(ReasonCodeName(ReasonCode::kPartitionLimit), "partition_limit");
  EXPECT_STREQ(ReasonCodeName(ReasonCode::kBelowMinNodes), "below_min_nodes");
  EXPECT_STREQ(ReasonCodeName(ReasonCode::kUserExcluded), "user_excluded");
  EXPECT_STREQ(ReasonCodeName(ReasonCode::kAfterCut), "after_cut");
  EXPECT_STREQ(ReasonCodeName(ReasonCode::kFeatureLevelTooLow), "feature_level_too_low");
  std::set<std::string> seen;
  for (int value = 0; value <= static_cast<int>(ReasonCode::kAfterCut); ++value) {
    const ReasonCode code = static_cast<ReasonCode>(value);
    const std::string name = ReasonCodeName(code);
    EXPECT_NE(name, "unknown") << value;
    EXPECT_TRUE(seen.insert(name).second) << name;
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << name;
    ReasonCode parsed;
    ASSERT_TRUE(ParseReasonCode(name, &parsed));
    EXPECT_EQ(parsed, code);
  }
  ReasonCode unused;
  EXPECT_FALSE(ParseReasonCode("no_such_reason", &unused));
}

TEST(SummaryLineTest, MatchesTfliteWording) {
  EXPECT_EQ(SummaryLine("GPU", 31, 31, 1),
            "GPU delegate: 31 nodes delegated out of 31 nodes with 1 partitions.");
}

// ---------------------------------------------------------------------------
// The graph view of a model.

//   t0 (input) --> CONV_2D(t0, t1 weights, t2 bias) --> t3 --> RELU --> t4 (output)
ModelDef ConvReluModel() {
  ModelDef model;
  model.buffers.resize(3);
  model.buffers[1].mutable_bytes() = {1, 2, 3, 4};
  model.buffers[2].mutable_bytes() = {5, 6, 7, 8};
  model.operator_codes = {{BuiltinOp::kConv2d, "", 1}, {BuiltinOp::kRelu, "", 1}};
  SubgraphDef& graph = model.subgraphs.emplace_back();
  graph.tensors.resize(5);
  graph.tensors[1].buffer = 1;
  graph.tensors[2].buffer = 2;
  graph.inputs = {0};
  graph.outputs = {4};
  OperatorDef conv;
  conv.opcode_index = 0;
  conv.inputs = {0, 1, 2};
  conv.outputs = {3};
  OperatorDef relu;
  relu.opcode_index = 1;
  relu.inputs = {3};
  relu.outputs = {4};
  graph.operators = {conv, relu};
  return model;
}

TEST(GraphViewTest, OmitsOrKeepsConstantInputs) {
  const ModelDef model = ConvReluModel();
  const GraphInfo omitted = BuildGraphInfo(model);
  EXPECT_EQ(omitted.num_tensors, 5);
  EXPECT_EQ(omitted.node_inputs, (std::vector<std::vector<int>>{{0}, {3}}));
  EXPECT_EQ(omitted.node_outputs, (std::vector<std::vector<int>>{{3}, {4}}));
  EXPECT_EQ(omitted.graph_inputs, std::vector<int>{0});
  EXPECT_EQ(omitted.graph_outputs, std::vector<int>{4});
  EXPECT_FALSE(omitted.control_edges.has_value());
  EXPECT_EQ(PartitionGraph(omitted, {0}), (Subsets{Del({0}, {0}, {3}), Cpu({1}, {3}, {4})}));

  const GraphInfo kept = BuildGraphInfo(model, ConstantInputs::kKeep);
  EXPECT_EQ(kept.node_inputs, (std::vector<std::vector<int>>{{0, 1, 2}, {3}}));
  EXPECT_EQ(PartitionGraph(kept, {0}), (Subsets{Del({0}, {0, 1, 2}, {3}), Cpu({1}, {3}, {4})}));
}

TEST(GraphViewTest, MarksResourceAndControlFlowNodesAsSideEffects) {
  ModelDef model = ConvReluModel();
  model.subgraphs[0].tensors[3].type = DataType::kResource;
  model.operator_codes.push_back({BuiltinOp::kWhile, "", 1});
  OperatorDef loop;
  loop.opcode_index = 2;
  loop.inputs = {4};
  loop.outputs = {};
  model.subgraphs[0].operators.push_back(loop);
  const GraphInfo graph = BuildGraphInfo(model);
  EXPECT_EQ(graph.node_has_side_effect, (std::vector<bool>{true, true, true}));
  model.subgraphs[0].tensors[3].type = DataType::kFloat32;
  EXPECT_EQ(BuildGraphInfo(model).node_has_side_effect, (std::vector<bool>{false, false, true}));
}

TEST(GraphViewTest, RejectsModelWithoutSubgraphs) {
  EXPECT_THROW(BuildGraphInfo(ModelDef{}), Error);
}

// A delegate that takes only CONV_2D and DEPTHWISE_CONV_2D, on every shared
// model: the plan must cover every node once with dependencies pointing forward.
TEST(GraphViewTest, SharedModelsPartitionConsistently) {
  const fs::path dir = SharedDir() / "models";
  std::error_code error;
  if (!fs::is_directory(dir, error)) GTEST_SKIP() << "no shared models at " << dir;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".tflite") continue;
    std::shared_ptr<const ModelDef> model;
    try {
      model = ReadModelFile(entry.path().string());
    } catch (const Error&) {
      continue;  // the loader's tests cover files it refuses
    }
    SCOPED_TRACE(entry.path().filename().string());
    const GraphInfo graph = BuildGraphInfo(*model);
    std::vector<NodeSupport> support(graph.num_nodes());
    std::vector<int> supported;
    for (int node = 0; node < graph.num_nodes(); ++node) {
      const BuiltinOp op =
          model->operator_codes[model->subgraphs[0].operators[node].opcode_index].builtin;
      support[node].supported = op == BuiltinOp::kConv2d || op == BuiltinOp::kDepthwiseConv2d;
      if (support[node].supported) supported.push_back(node);
    }
    for (bool greedy : {true, false}) {
      CheckInvariants(graph, supported, PartitionGraph(graph, supported, greedy), greedy);
      DelegateOptions options;
      options.greedy = greedy;
      options.max_delegated_partitions = 3;
      const DelegationPlan plan = PlanDelegation(graph, support, options);
      EXPECT_LE(plan.num_partitions(), 3);
      for (const NodePlacement& node : plan.nodes) {
        EXPECT_EQ(node.delegated, node.reasons.empty());
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace delegato
