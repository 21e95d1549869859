// The cost model behind `delegato plan`'s latency estimate (docs/cost_model.md):
// per node, the accelerator's time from the node's work and the target's
// throughput for its op class and dtype, plus its memory traffic; the board
// CPU's time from its core class, clock and core count; per delegated
// partition, a fixed hand-over plus the bytes crossing it over a copy
// bandwidth. And the cost-aware partitioning that chooses which supported
// nodes to leave on the CPU. Everything here is an estimate, not a measurement.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "delegate/partitioner.h"
#include "delegate/target.h"
#include "model/model.h"

namespace delegato::tools {

// What one node does, as the cost model sees it.
struct NodeWork {
  double ops = 0;               // 2 per MAC for convolutions / FC, output elements otherwise
  double activation_bytes = 0;  // non-constant inputs + outputs
  double weight_bytes = 0;      // constant inputs
  std::string dtype;            // "int8", "uint8", "float32", ...
  std::string op_class;         // one of CostOpClassNames()
};

std::string NodeOpClass(const ModelDef& model, int node);
NodeWork NodeWorkOf(const ModelDef& model, int node);

// An Ethos-U NPU as Vela's performance model sees it (the target's
// "cost.ethos_u" section; docs/cost_model.md cites each number).
struct EthosUConstants;
struct EthosUConstants {
  double clock_hz = 0;
  double ublock_h = 0, ublock_w = 0, ublock_d = 0;  // output micro-block of the MAC array
  double ifm_block_depth = 0;           // IFM channels one kernel step consumes (8-bit)
  double output_cycles = 0;             // per output element: convolutions, pooling, other
  double output_cycles_add_sub = 0, output_cycles_mul = 0, output_cycles_max_pool = 0;
  double activation_cycles_lut = 0, activation_cycles_relu = 0;
  double sram_bytes_per_cycle = 0, off_chip_bytes_per_cycle = 0;
  bool feature_maps_off_chip = false;   // arena in DRAM/flash (Dedicated_Sram), else in SRAM
  double sram_cache_bytes = 0;          // feature maps up to this size stay in the SRAM cache
  // Access latency of each memory (Vela's <area>_read/write_latency): an
  // operation waits once for its IFM's first read and its OFM's first write.
  double sram_read_latency = 0, sram_write_latency = 0, off_chip_read_latency = 0, off_chip_write_latency = 0;
  // 0: ARG_MAX is rewritten into max poolings (U55/U65); else the NPU's own
  // ARG_MAX at this many cycles per input element (U85).
  double arg_max_cycles_per_element = 0;
  // A MUL by a per-channel constant followed by an ADD of one (a batch
  // normalisation) becomes one pass reading both constants once (U85).
  bool fuses_channel_scale_shift = false;
  // Vela's block model of the 256-MAC U55/U65 (its compiled core's
  // EthosU55Performance): when shram_banks > 0, convolution-like, pooling,
  // copy and elementwise passes are priced per OFM block of the block
  // configuration Vela would choose for the SHRAM, with the command-issue
  // limit that carries the memory latencies. 0 keeps the whole-operation model.
  double shram_banks = 0;
  double sram_burst_bytes = 0, off_chip_burst_bytes = 0;  // vela.ini <area>_burst_length
  double output_cycles_mul_32bit = 0;   // output unit, MUL with a 32-bit OFM (a matrix product's first half)
  double output_cycles_32bit_binary = 0;  // output unit, binary elementwise on 32-bit IFMs (softmax internals)
  // The U85's weight DMA into SRAM (its Mem2Mem channel, bytes per cycle): a
  // convolution-like node waits for the off-chip read latency plus its
  // weights' bytes at this rate, less what the previous node hides. 0: not
  // modelled this way (the U65's block model has its own wait).
  double weight_dma_bytes_per_cycle = 0;
  // The U85 applies an ADD / SUB / MUL that directly follows a CONV_2D (and
  // alone reads its output) in the convolution's output unit.
  bool chains_elementwise_after_convolution = false;
  // Per-channel limits of each memory (U85: Vela's ChannelBW; 0 = the port's bandwidth only).
  double sram_channel_bytes_per_cycle = 0;
  double off_chip_read_channel_bytes_per_cycle = 0, off_chip_write_channel_bytes_per_cycle = 0;
  double op_overhead_cycles = 0;        // per NPU operation Vela emits, besides the memory latencies
  // Calibrated corrections of the MAC array's cycles (CONV_2D, FULLY_CONNECTED)
  // and of the output unit's on elementwise and copy operations.
  double mac_cycle_scale = 1, elementwise_cycle_scale = 1;
};

// A pass that reads its weights once (a single OFM block position) from
// off-chip memory while the feature maps' arena is there too (U65): Vela
// either buffers the weights in SRAM by DMA or leaves them in DRAM
// (Scheduler::ProposeSlicedWeightBuffering). The node's own figures are the
// buffered ones; these are the other choice and the numbers it is made on.
struct EthosUWeightChoice {
  bool open = false;          // false: the weights are buffered (more than one OFM block position, or no DRAM)
  double transfer = 0;        // DMA of all the weights into SRAM (MemToMemCycles)
  double read_buffered = 0;   // reading them from SRAM: its latency plus bytes (MinReadCycles)
  double read_direct = 0;     // reading them from DRAM
  double ifm_read = 0;        // reading the IFM from its memory
  double depth_slices = 1;    // OFM depth over the block's depth (whole slices)
  // The NPU cycles as Vela's scheduler estimates them (feature maps in the
  // DRAM arena), buffered and left in DRAM (scales read at the DRAM's latency).
  double schedule_buffered = 0, schedule_direct = 0;
  // Left in DRAM: the NPU cycles and each port's, at the feature maps' own places.
  double npu_direct = 0, sram_direct = 0, off_chip_direct = 0;
};

// Whether Vela buffers such weights, with `slack` cycles of the previous
// operation (its scheduler's estimate; 0 for the first) to hide the DMA under.
bool EthosUBuffersWeights(const EthosUWeightChoice& w, double slack);

// One node's cycles: the MAC array / output unit, and each memory port.
// Vela's per-layer `Op Cycles` is the largest of these.
struct EthosUCycles {
  enum class Unit { kMacArray, kElementwise, kOther };
  double npu = 0, sram = 0, off_chip = 0;  // npu: before the calibrated scale of its unit
  // Vela operations for the node that carry the fixed per-operation cost:
  // convolution-like passes (convolutions, pooling, vector products) and
  // memory copies. Elementwise passes show none in Vela's per-layer cycles.
  double operations = 1;
  double latency = 0;  // per operation: the IFM's read and the OFM's write latency
  // Waiting for the weights' DMA into SRAM (U65), beyond what the previous
  // operation hides.
  double weight_dma = 0;
  // The NPU cycles Vela's scheduler estimates with the feature maps in the
  // DRAM arena (U65 convolution-like passes; else 0): the slack under which
  // the next operation's weight DMA runs.
  double schedule_npu = 0;
  // The fixed per-operation cost is at most this (U85: the node's own weight
  // DMA, which that cost stands for); 0: no bound.
  double overhead_cap = 0;
  EthosUWeightChoice weight_choice;
  Unit unit = Unit::kOther;
  double total(const EthosUConstants& k) const {
    const double scale = unit == Unit::kMacArray      ? k.mac_cycle_scale
                         : unit == Unit::kElementwise ? k.elementwise_cycle_scale
                                                      : 1.0;
    const double overhead = overhead_cap > 0 ? std::min(k.op_overhead_cycles, overhead_cap) : k.op_overhead_cycles;
    return std::max({npu * scale + weight_dma, sram, off_chip}) + operations * (overhead + latency);
  }
};

// `arena_tensors` (per tensor, optional): the feature maps Vela keeps in the
// arena rather than the SRAM cache and in NHWC rather than 16-channel bricks,
// those the NPU hands to or takes from the CPU; without it, the graph's
// inputs and outputs.
EthosUCycles EthosUNodeCycles(const ModelDef& model, int node, const EthosUConstants& npu,
                              const std::vector<bool>* arena_tensors = nullptr);

// The tensors at the NPU's edges: the graph's inputs and outputs and those
// read or written by a node outside `npu_nodes` (per node; empty = all).
std::vector<bool> NpuEdgeTensors(const ModelDef& model, const std::vector<bool>& npu_nodes);

struct CostEstimate {
  double accelerator_us = 0;
  double cpu_us = 0;
  double sync_us = 0;
  double first_inference_compile_ms = 0;
  int partitions = 0;
  bool uses_placeholders = false;  // some number used is a placeholder
  std::vector<std::string> placeholders;  // which ("ops_per_second.int8", ...), unique
  double total_us() const { return accelerator_us + cpu_us + sync_us; }
};

// Per-node times of one model on one target; built once, then any plan of
// that model is priced by EstimatePlan.
struct CostTables {
  std::vector<double> accelerator_us, cpu_us;
  std::vector<std::vector<std::string>> accelerator_placeholders, cpu_placeholders;
  std::vector<double> tensor_bytes;    // per tensor; 0 for constants
  double sync_us = 0;
  double copy_bytes_per_us = 0;        // 0 = copies not modelled
  std::vector<std::string> sync_placeholders, copy_placeholders;
  std::string fallback_layer;          // nodes refused by this layer run on the runtime's CPU fallback
  double fallback_slowdown = 1;
  std::vector<std::string> fallback_placeholders;
  double compile_ms = 0;
  std::vector<std::string> compile_placeholders;
  std::string cpu_label;               // "4x cortex-a53 @ 1.8 GHz" or "generic (cpu.json)"
  std::vector<EthosUCycles> ethos_u;   // per node, for an Ethos-U target; else empty
};

// `cpu_target`: the shipped cpu.json (its cpu_classes and generic rates), or
// nullptr when there is none.
// `npu_nodes` (optional, per node): the nodes the accelerator accepts; the
// Ethos-U model keeps the tensors it exchanges with the others in the arena.
CostTables BuildCostTables(const ModelDef& model, const Target& target, const Target* cpu_target,
                           const std::vector<bool>& npu_nodes = {});

// Whether a CPU node of `plan` runs on the delegate runtime's CPU fallback
// (refused only by the fallback layer, and not excluded by the user).
bool RunsOnFallback(const CostTables& tables, const NodePlacement& node);

CostEstimate EstimatePlan(const ModelDef& model, const CostTables& tables, const DelegationPlan& plan);
// Every node on the board's CPU through the TFLite runtime, nothing delegated.
CostEstimate EstimateCpuOnly(const CostTables& tables);

// Cost-aware choice of the supported nodes to keep on the CPU: a dynamic
// program over the execution order (exact when the graph is a chain), then
// bounded improvement on the real partitioning (dropping whole partitions,
// moving single nodes at partition edges). Returns the skip list; `plan_with`
// builds the plan a skip list gives.
std::vector<int> ChooseCpuNodes(const ModelDef& model, const CostTables& tables, const DelegationPlan& greedy,
                                const std::function<DelegationPlan(const std::vector<int>&)>& plan_with);

// The chain dynamic program alone: per node in execution order, accelerator
// (only where `may_delegate`) or CPU, minimising node times plus one hand-over
// (sync + bytes of the crossing tensor) at every CPU->accelerator entry.
// Returns which nodes to place on the accelerator.
std::vector<bool> ChainPartition(const ModelDef& model, const CostTables& tables,
                                 const std::vector<bool>& may_delegate);

}  // namespace delegato::tools
