// The cost model's arithmetic on tiny graphs drawn below, and cost-aware
// partitioning: never worse than greedy or CPU-only by its own estimate,
// strictly better where a hand-over costs more than the accelerator saves.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "delegate/graph_view.h"
#include "delegate/partitioner.h"
#include "delegate/target.h"
#include "model/model.h"
#include "test_util.h"
#include "tools/cost.h"
#include "tools/placement.h"

namespace delegato::tools {
namespace {

namespace fs = std::filesystem;

// Tensors: int8 activations [1,8,8,4] (256 elements, 256 bytes), 1x1 filters
// [4,1,1,4] (16 bytes of weights).
struct Builder {
  ModelDef model;
  SubgraphDef graph;
  Builder() { model.buffers.resize(1); }
  int Tensor(std::vector<int32_t> shape, bool constant = false) {
    TensorDef t;
    t.name = "t" + std::to_string(graph.tensors.size());
    t.type = DataType::kInt8;
    t.shape = std::move(shape);
    if (constant) {
      size_t n = 1;
      for (int32_t d : t.shape) n *= d;
      model.buffers.emplace_back();
      model.buffers.back().mutable_bytes().assign(n, 1);
      t.buffer = static_cast<uint32_t>(model.buffers.size() - 1);
    }
    graph.tensors.push_back(t);
    return static_cast<int>(graph.tensors.size() - 1);
  }
  int Code(BuiltinOp op) {
    for (size_t i = 0; i < model.operator_codes.size(); ++i)
      if (model.operator_codes[i].builtin == op) return static_cast<int>(i);
    model.operator_codes.push_back({op, "", 1});
    return static_cast<int>(model.operator_codes.size() - 1);
  }
  // x -> CONV_2D 1x1 -> new activation
  int Conv(int x) {
    const int w = Tensor({4, 1, 1, 4}, true);
    const int y = Tensor({1, 8, 8, 4});
    OperatorDef op;
    op.opcode_index = Code(BuiltinOp::kConv2d);
    op.inputs = {x, w, -1};
    op.outputs = {y};
    graph.operators.push_back(op);
    return y;
  }
  // x -> ADD(x, x) -> new activation
  int Add(int x) {
    const int y = Tensor({1, 8, 8, 4});
    OperatorDef op;
    op.opcode_index = Code(BuiltinOp::kAdd);
    op.inputs = {x, x};
    op.outputs = {y};
    graph.operators.push_back(op);
    return y;
  }
  ModelDef Finish(int input, int output) {
    graph.inputs = {input};
    graph.outputs = {output};
    model.subgraphs = {graph};
    return model;
  }
};

Target TargetFrom(const std::string& cost) {
  return ParseTarget(R"({"id": "t", "description": "d", "cost": )" + cost +
                         R"(, "layers": [{"name": "delegate", "description": "d", "ops_not_listed": "accept"}]})",
                     "test", ".");
}

const char* kPlaceholder = R"("placeholder": true)";

std::string Num(double v) { return R"({"value": )" + std::to_string(v) + ", " + kPlaceholder + "}"; }

// input -> CONV_2D 1x1 (4->4) -> ADD (x + x) -> output
//   CONV_2D: ops = 2 * 256 outputs * 4 input channels = 2048
//   ADD:     ops = 256 outputs
TEST(CostModel, ArithmeticOnATinyChain) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Add(b.Conv(in)));
  const NodeWork conv = NodeWorkOf(model, 0), add = NodeWorkOf(model, 1);
  EXPECT_EQ(conv.op_class, "conv_1x1");
  EXPECT_DOUBLE_EQ(conv.ops, 2048);
  EXPECT_DOUBLE_EQ(conv.weight_bytes, 16);
  EXPECT_DOUBLE_EQ(conv.activation_bytes, 512);  // 256 in + 256 out
  EXPECT_EQ(add.op_class, "elementwise");
  EXPECT_DOUBLE_EQ(add.ops, 256);
  EXPECT_DOUBLE_EQ(add.activation_bytes, 768);  // the same input twice + output

  // Accelerator: 1e9 int8 ops/s, elementwise at half of it; CPU: 1e8 ops/s.
  const Target acc = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e9) +
                                R"(}, "op_class_efficiency": {"elementwise": )" + Num(0.5) + "}}");
  const Target cpu = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e8) + "}}");
  const CostTables t = BuildCostTables(model, acc, &cpu);
  EXPECT_NEAR(t.accelerator_us[0], 2.048, 1e-9);  // 2048 / 1e9 s
  EXPECT_NEAR(t.accelerator_us[1], 0.512, 1e-9);  // 256 / 5e8 s
  EXPECT_NEAR(t.cpu_us[0], 20.48, 1e-9);
  EXPECT_NEAR(t.cpu_us[1], 2.56, 1e-9);
  EXPECT_FALSE(t.accelerator_placeholders[0].empty());  // every number used is a placeholder here
}

// Memory traffic, per-node overhead, and a board CPU from a core class:
//   CONV_2D: 2048 ops / 1e9 = 2.048 us, + 512 B / 1e8 B/s = 5.12 us, + 16 B / 1.6e7 B/s = 1 us, + 0.5 us
//   CPU: 2 cores x 1 GHz x 4 int8 ops/cycle = 8e9 ops/s, conv_1x1 efficiency 0.5 -> 2048 / 4e9 = 0.512 us
TEST(CostModel, TrafficOverheadAndCpuClass) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Conv(in));
  const Target acc = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e9) +
                                R"(}, "memory_bytes_per_second": )" + Num(1e8) +
                                R"(, "weight_bytes_per_second": )" + Num(1.6e7) +
                                R"(, "node_overhead_us": )" + Num(0.5) +
                                R"(, "cpu": {"class": "small", "cores": )" + Num(2) + R"(, "clock_hz": )" + Num(1e9) +
                                R"(}, "cpu_classes": {"small": {"ops_per_cycle_per_core": {"int8": )" + Num(4) +
                                R"(}, "op_class_efficiency": {"conv_1x1": )" + Num(0.5) + "}}}}");
  const CostTables t = BuildCostTables(model, acc, nullptr);
  EXPECT_NEAR(t.accelerator_us[0], 2.048 + 5.12 + 1 + 0.5, 1e-9);
  EXPECT_NEAR(t.cpu_us[0], 0.512, 1e-9);
  EXPECT_EQ(t.cpu_label, "2x small @ 1 GHz");
}

// An ethos-u55-256-like NPU: 2x2x8 output micro-blocks, Vela's per-element
// output rates, 8 B/cycle of SRAM for the feature maps, 1 B/cycle of flash
// for the constants, 10 cycles per convolution-like pass, the output unit's elementwise
// cycles doubled by the calibrated scale.
EthosUConstants TinyEthosU() {
  EthosUConstants k;
  k.clock_hz = 5e8;
  k.ublock_h = 2, k.ublock_w = 2, k.ublock_d = 8;
  k.ifm_block_depth = 32;
  k.output_cycles = 0.25, k.output_cycles_add_sub = 0.75, k.output_cycles_mul = 0.375, k.output_cycles_max_pool = 0.125;
  k.activation_cycles_lut = 1, k.activation_cycles_relu = 0.25;
  k.sram_bytes_per_cycle = 8, k.off_chip_bytes_per_cycle = 1;
  k.op_overhead_cycles = 10;
  k.mac_cycle_scale = 1, k.elementwise_cycle_scale = 2;
  return k;
}

// input [1,8,8,4] -> CONV_2D 1x1 (4->4) -> ADD (x + x) -> output
//   CONV_2D: 4x4 micro-blocks of 2x2, 1 of 8 channels; one kernel step (4
//     channels fit in one 32-deep IFM block): max(weight load 32, 4 x 16) = 64
//     cycles; the output unit 256 x 0.25 = 64; SRAM (256 + 256 B) / 8 = 64;
//     flash 16 B / 1 = 16 -> max 64 + 10 overhead = 74 cycles.
//   ADD: output unit 256 x 0.75 = 192, x 2 (elementwise scale) = 384; SRAM
//     (256 x 3 B) / 8 = 96 -> 384 cycles (elementwise passes carry no fixed cost).
TEST(CostModel, EthosUBlockArithmetic) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Add(b.Conv(in)));
  const EthosUConstants k = TinyEthosU();
  const EthosUCycles conv = EthosUNodeCycles(model, 0, k), add = EthosUNodeCycles(model, 1, k);
  EXPECT_DOUBLE_EQ(conv.npu, 64);
  EXPECT_DOUBLE_EQ(conv.sram, 64);
  EXPECT_DOUBLE_EQ(conv.off_chip, 16);
  EXPECT_EQ(conv.unit, EthosUCycles::Unit::kMacArray);
  EXPECT_DOUBLE_EQ(conv.total(k), 74);
  EXPECT_DOUBLE_EQ(add.npu, 192);
  EXPECT_DOUBLE_EQ(add.sram, 96);
  EXPECT_EQ(add.unit, EthosUCycles::Unit::kElementwise);
  EXPECT_DOUBLE_EQ(add.operations, 0);
  EXPECT_DOUBLE_EQ(add.total(k), 384);
}

// Memory latencies on a U65-like configuration (feature maps in DRAM behind
// an SRAM cache; SRAM 32 / 32 cycles to read / write, DRAM 500 / 250): the
// CONV_2D of EthosUBlockArithmetic waits once for its IFM and once for its OFM.
//   cache 256 B: both 256-byte maps are cached -> 64 + 10 + (32 + 32) = 138.
//   cache 128 B: both in DRAM -> (256 + 256 + 16 B) / 1 B/cycle = 528 memory
//     cycles, + 10 + (500 + 250) = 1288.
TEST(CostModel, EthosUMemoryLatencyPerOperation) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Conv(in));
  EthosUConstants k = TinyEthosU();
  k.feature_maps_off_chip = true;
  k.sram_read_latency = 32, k.sram_write_latency = 32, k.off_chip_read_latency = 500, k.off_chip_write_latency = 250;
  k.sram_cache_bytes = 256;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).total(k), 138);
  k.sram_cache_bytes = 128;
  const EthosUCycles dram = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(dram.off_chip, 528);
  EXPECT_DOUBLE_EQ(dram.latency, 750);
  EXPECT_DOUBLE_EQ(dram.total(k), 1288);
}

// ARG_MAX over the depth of [1,8,8,4] -> [1,8,8] (int32 indices, 256 B):
//   U55/U65 (rewritten): one max pooling per 4 output positions = 16
//     operations; 64 positions x ceil(4/8) x 4 = 256 cycles, SRAM (256 + 256
//     B) / 8 = 64 -> 256 + 16 x 10 = 416.
//   U85 (native, 4 cycles per input element): 256 x 4 = 1024 cycles in one
//     operation (under 65536 positions) -> 1024 + 10 = 1034.
TEST(CostModel, EthosUArgMaxRewrittenOrNative) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const int axis = b.Tensor({1}, true);
  const int out = b.Tensor({1, 8, 8});
  b.graph.tensors[axis].type = DataType::kInt32;
  b.graph.tensors[out].type = DataType::kInt32;
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kArgMax);
  b.graph.operators.back().inputs = {in, axis};
  b.graph.operators.back().outputs = {out};
  const ModelDef model = b.Finish(in, out);
  EthosUConstants k = TinyEthosU();
  const EthosUCycles rewritten = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(rewritten.operations, 16);
  EXPECT_DOUBLE_EQ(rewritten.total(k), 416);
  k.arg_max_cycles_per_element = 4;
  const EthosUCycles native = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(native.operations, 1);
  EXPECT_DOUBLE_EQ(native.total(k), 1034);
}

// Where ops / peak misleads: an RGB-like 3-channel input and a depthwise
// convolution.
//   CONV_2D 3x3, [1,8,8,3] -> [1,8,8,4]: depth-first takes 9 kernel steps of
//     one 32-deep block; part-kernel-first ceil(9/4) = 3 steps of 8 channels:
//     64 x 3 = 192 cycles for 2 x 256 x 27 = 13824 operations (36 of the
//     array's 512 per cycle).
//   DEPTHWISE_CONV_2D 3x3 on [1,8,8,4]: ceil(9/4) = 3 steps of 4 x 16
//     micro-blocks = 192 cycles.
//   RESHAPE: removed by Vela, no operation and no cycles.
TEST(CostModel, EthosUSmallDepthAndDepthwise) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 3});
  const int w = b.Tensor({4, 3, 3, 3}, true);
  const int conv_out = b.Tensor({1, 8, 8, 4});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kConv2d);
  b.graph.operators.back().inputs = {in, w, -1};
  b.graph.operators.back().outputs = {conv_out};
  const int dw = b.Tensor({1, 3, 3, 4}, true);
  const int dw_out = b.Tensor({1, 8, 8, 4});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kDepthwiseConv2d);
  b.graph.operators.back().inputs = {conv_out, dw, -1};
  b.graph.operators.back().outputs = {dw_out};
  const int flat = b.Tensor({1, 256});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kReshape);
  b.graph.operators.back().inputs = {dw_out};
  b.graph.operators.back().outputs = {flat};
  const ModelDef model = b.Finish(in, flat);
  const EthosUConstants k = TinyEthosU();
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).npu, 192);
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 1, k).npu, 192);
  const EthosUCycles reshape = EthosUNodeCycles(model, 2, k);
  EXPECT_DOUBLE_EQ(reshape.operations, 0);
  EXPECT_DOUBLE_EQ(reshape.total(k), 0);
}

// ADD of a constant per-channel vector [4] to x [1,8,8,4]: the vector is
// fetched again for each of the 64 output positions as one 16-byte brick:
// 64 x 16 = 1024 B, plus the 4 B of the constant itself, over 1 B/cycle of
// flash = 1028 cycles, above the output unit's 192 x 2 = 384.
TEST(CostModel, EthosUBroadcastConstantIsRefetched) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const int bias = b.Tensor({4}, true);
  const int out = b.Tensor({1, 8, 8, 4});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kAdd);
  b.graph.operators.back().inputs = {in, bias};
  b.graph.operators.back().outputs = {out};
  const ModelDef model = b.Finish(in, out);
  const EthosUConstants k = TinyEthosU();
  const EthosUCycles add = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(add.off_chip, 1028);
  EXPECT_DOUBLE_EQ(add.total(k), 1028);
}

// The same ADD in 16 bits (x, the constant [4] and the output int16): each
// of the 64 positions fetches one 16-channel brick of 2-byte elements (32 B),
// a quarter of a 128-byte burst, so 64 x 16 x 2 x 4 = 8192 B, plus the 8 B of
// the constant itself, over 1 B/cycle of flash = 8200 cycles.
TEST(CostModel, EthosUSixteenBitBroadcastConstantWastesBursts) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const int bias = b.Tensor({4}, true);
  const int out = b.Tensor({1, 8, 8, 4});
  for (int t : {in, bias, out}) b.graph.tensors[t].type = DataType::kInt16;
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kAdd);
  b.graph.operators.back().inputs = {in, bias};
  b.graph.operators.back().outputs = {out};
  const ModelDef model = b.Finish(in, out);
  const EthosUCycles add = EthosUNodeCycles(model, 0, TinyEthosU());
  EXPECT_DOUBLE_EQ(add.off_chip, 8200);
}

// A batch normalisation, x [1,8,8,4] -> MUL by a constant [4] -> ADD of a
// constant [4] -> output, on an NPU that fuses it (U85):
//   MUL: the output unit 256 x 0.375 = 96, x 2 (elementwise scale) = 192;
//     SRAM (256 x 2 B) / 8 = 64; flash: both constants once, 4 + 4 B = 8
//     -> 192 cycles, no re-fetch per position.
//   ADD: part of the MUL's pass, 0 cycles.
// Without the fusion the MUL re-reads its constant: 64 x 16 + 4 = 1028.
TEST(CostModel, EthosUFusedChannelScaleShift) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const int scale = b.Tensor({4}, true), shift = b.Tensor({4}, true);
  const int scaled = b.Tensor({1, 8, 8, 4}), out = b.Tensor({1, 8, 8, 4});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kMul);
  b.graph.operators.back().inputs = {in, scale};
  b.graph.operators.back().outputs = {scaled};
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kAdd);
  b.graph.operators.back().inputs = {scaled, shift};
  b.graph.operators.back().outputs = {out};
  const ModelDef model = b.Finish(in, out);
  EthosUConstants k = TinyEthosU();
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).off_chip, 1028);
  k.fuses_channel_scale_shift = true;
  const EthosUCycles mul = EthosUNodeCycles(model, 0, k), add = EthosUNodeCycles(model, 1, k);
  EXPECT_DOUBLE_EQ(mul.off_chip, 8);
  EXPECT_DOUBLE_EQ(mul.total(k), 192);
  EXPECT_DOUBLE_EQ(add.total(k), 0);
}

// input x [1,8,8,4] -> CONV_2D 1x1 (4->4) -> y; ADD (y + x) -> output, on
// an NPU that chains an elementwise op onto the convolution before it (U85):
//   CONV_2D: MAC array 64 cycles (as in EthosUBlockArithmetic); SRAM: x in,
//     y out and now x again for the chained ADD, 3 x 256 B / 8 = 96 -> 96 +
//     10 overhead = 106 cycles.
//   ADD: applied by the convolution's output unit, 0 cycles.
// Without chaining: the CONV_2D 74, the ADD 256 x 0.75 x 2 (elementwise
// scale) = 384.
TEST(CostModel, EthosUChainedElementwiseAfterConvolution) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const int y = b.Conv(in), out = b.Tensor({1, 8, 8, 4});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kAdd);
  b.graph.operators.back().inputs = {y, in};
  b.graph.operators.back().outputs = {out};
  const ModelDef model = b.Finish(in, out);
  EthosUConstants k = TinyEthosU();
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).total(k), 74);
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 1, k).total(k), 384);
  k.chains_elementwise_after_convolution = true;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).total(k), 106);
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 1, k).total(k), 0);
  // ADD (y + y) reads the convolution's output twice: not chained.
  Builder twice;
  const int x = twice.Tensor({1, 8, 8, 4});
  const ModelDef same = twice.Finish(x, twice.Add(twice.Conv(x)));
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(same, 1, k).total(k), 384);
}

// input [1,8,8,4] -> ADD (x + x) -> output, every feature map off chip, the
// port at 1 B/cycle, its read channel at 0.5 and its write channel at 2 (U85:
// Vela's ChannelBW): reads 2 x 256 B, the write 256 B.
//   Port alone: 768 B / 1 = 768 cycles.
//   With the channels: max(768, 512 / 0.5 = 1024, 256 / 2 = 128) = 1024.
TEST(CostModel, EthosUMemoryChannelLimits) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Add(in));
  EthosUConstants k = TinyEthosU();
  k.feature_maps_off_chip = true;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).off_chip, 768);
  k.off_chip_read_channel_bytes_per_cycle = 0.5, k.off_chip_write_channel_bytes_per_cycle = 2;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).off_chip, 1024);
}

// input x [1,8,8,4] -> RESIZE_BILINEAR to [1,16,16,4] -> output, on the
// whole-operation model (U85), which resizes natively: one operation priced
// like an elementwise one (Vela 5.2's debug database), the output unit over
// the OFM with its depth rounded up to the 16-channel brick:
//   16 x 16 x 16 x 0.25 = 1024 cycles (SRAM (256 + 1024 B) / 8 = 160), no
//   fixed per-operation cost, no calibrated scale (elementwise scale 2 unused).
//   int16 feature maps: twice, 2048.
TEST(CostModel, EthosUNativeResize) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4}), out = b.Tensor({1, 16, 16, 4});
  const int size = b.Tensor({2}, true);
  b.graph.tensors[size].type = DataType::kInt32;
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kResizeBilinear);
  b.graph.operators.back().inputs = {in, size};
  b.graph.operators.back().outputs = {out};
  ModelDef model = b.Finish(in, out);
  const EthosUConstants k = TinyEthosU();
  const EthosUCycles resize = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(resize.npu, 1024);
  EXPECT_DOUBLE_EQ(resize.sram, 160);
  EXPECT_DOUBLE_EQ(resize.operations, 0);
  EXPECT_DOUBLE_EQ(resize.total(k), 1024);
  for (int t : {in, out}) model.subgraphs[0].tensors[t].type = DataType::kInt16;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).total(k), 2048);
}

// x [1,8,8,16] -> TRANSPOSE_CONV 3x3 stride 2 (16 -> 4 channels) ->
// [1,16,16,4], on the whole-operation model (U85): Vela's one convolution per
// output phase, each over the whole IFM with its phase's taps (2x2, 2x1, 1x2,
// 1x1) and an 8x8 quarter of the OFM (4 x 4 micro-blocks of 2x2, 1 of 8
// channels: max(weight load 32, 4 x 16) = 64 cycles per kernel step):
//   depth-first steps 4, 2, 2, 1 (taps x one 32-deep IFM block);
//   part-kernel-first 2, 2, 2, 2 (taps / 4 rounded up x 16 / 8 channels);
//   the cheaper: 2, 2, 2, 1 -> 128 + 128 + 128 + 64 = 448 MAC cycles (each
//   above its output unit, 256 x 0.25 = 64); SRAM (1024 + 1024 B) / 8 = 256;
//   off chip (576 B of weights + 16 B of output shape) / 8 = 74;
//   4 operations x 10 overhead -> 448 + 40 = 488.
TEST(CostModel, EthosUTransposeConvPerOutputPhase) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 16}), out = b.Tensor({1, 16, 16, 4});
  const int shape = b.Tensor({4}, true);
  b.graph.tensors[shape].type = DataType::kInt32;
  const int weights = b.Tensor({4, 3, 3, 16}, true);
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kTransposeConv);
  b.graph.operators.back().inputs = {shape, weights, in};
  b.graph.operators.back().outputs = {out};
  TransposeConvParams params;
  params.stride_h = params.stride_w = 2;
  b.graph.operators.back().params = params;
  const ModelDef model = b.Finish(in, out);
  EthosUConstants k = TinyEthosU();
  k.off_chip_bytes_per_cycle = 8;
  const EthosUCycles tconv = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(tconv.npu, 448);
  EXPECT_DOUBLE_EQ(tconv.sram, 256);
  EXPECT_DOUBLE_EQ(tconv.off_chip, 74);
  EXPECT_DOUBLE_EQ(tconv.operations, 4);
  EXPECT_EQ(tconv.unit, EthosUCycles::Unit::kMacArray);
  EXPECT_DOUBLE_EQ(tconv.total(k), 488);
}

// input [1,4] -> FULLY_CONNECTED (32 B of weights, 4 -> 8) -> [1,8] on the
// whole-operation model with a fixed cost of 100 cycles per operation:
//   MAC array max(weight load 32, 4) x one IFM block = 32; flash 32 B / 1 = 32;
//   without a weight DMA rate: 32 + 100 = 132.
//   With the U85's weight DMA (10 cycles of DRAM latency, 2 B/cycle), the
//   fixed cost is at most the layer's own DMA, 10 + 32 / 2 = 26: 32 + 26 = 58.
TEST(CostModel, EthosUFixedCostAtMostTheWeightDma) {
  Builder b;
  const int in = b.Tensor({1, 4}), out = b.Tensor({1, 8});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kFullyConnected);
  b.graph.operators.back().inputs = {in, b.Tensor({8, 4}, true), -1};
  b.graph.operators.back().outputs = {out};
  const ModelDef model = b.Finish(in, out);
  EthosUConstants k = TinyEthosU();
  k.op_overhead_cycles = 100;
  k.off_chip_read_latency = 10;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).total(k), 132);
  k.weight_dma_bytes_per_cycle = 2;
  const EthosUCycles fc = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(fc.overhead_cap, 26);
  EXPECT_DOUBLE_EQ(fc.total(k), 58);
  // A larger fixed cost than the DMA is not raised: 20 stays 20.
  k.op_overhead_cycles = 20;
  EXPECT_DOUBLE_EQ(fc.total(k), 52);
}

// An int8 LSTM, input [1,2,4] (2 steps of 4 features) -> output [1,2,8] (8
// units), on an NPU whose weight DMA moves 2 B/cycle after 500 cycles of
// DRAM latency (U85): per step, 4 gates x (input layer + recurrent layer),
// each waiting for its first 16 output channels' (here all 8) weights and
// 10-byte scales:
//   input layer:     500 + (4 x 8 = 32 B + 80 B) / 2 = 556
//   recurrent layer: 500 + (8 x 8 = 64 B + 80 B) / 2 = 572
//   2 steps x 4 gates x (556 + 572) = 9024 cycles of weight_dma.
TEST(CostModel, EthosULstmWaitsForEachLayersWeights) {
  Builder b;
  const int in = b.Tensor({1, 2, 4}), out = b.Tensor({1, 2, 8});
  b.graph.operators.push_back({});
  b.graph.operators.back().opcode_index = b.Code(BuiltinOp::kUnidirectionalSequenceLstm);
  b.graph.operators.back().inputs = {in, b.Tensor({8, 4}, true), b.Tensor({8, 8}, true)};
  b.graph.operators.back().outputs = {out};
  const ModelDef model = b.Finish(in, out);
  EthosUConstants k = TinyEthosU();
  k.off_chip_read_latency = 500;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).weight_dma, 0);
  k.weight_dma_bytes_per_cycle = 2;
  EXPECT_DOUBLE_EQ(EthosUNodeCycles(model, 0, k).weight_dma, 9024);
}

// Vela's choice for weights read once on the U65 (feature maps in DRAM), on
// numbers like hello_world_int8's middle FULLY_CONNECTED: 480 bytes of
// encoded weights and scales, DRAM 500 cycles of latency at 12 B/cycle, SRAM
// 32 at 16:
//   transfer = read_direct = 500 + 480 / 12 = 540; read_buffered = 32 + 480 / 16 = 62;
//   the scheduler's NPU cycles: 600 buffered, 1100 left in DRAM; IFM read 502.
// - first operation (slack 0): 62 + 540 = 602 is not under 540, one depth
//   slice: buffering is not tried.
// - after a 1200-cycle operation: 62 + 0 < 540, tried; max(1100, 540, 502) =
//   1100 against max(600, 62, 502) = 600, and 540 + 62 = 602 <= 1100: buffered.
// - the same, left in DRAM in 580 cycles: 580 < 600, worse: not buffered.
// - buffered in 100, direct in 590: 502 <= 590, but 602 > 590: not buffered.
// - first operation, 3 depth slices: tried; 600 + 540 = 1140, less the
//   visible 540 (op-dominated, under 1000 cycles) = 600 <= 1100: buffered.
TEST(CostModel, EthosUWeightBufferingChoice) {
  EthosUWeightChoice w;
  EXPECT_TRUE(EthosUBuffersWeights(w, 0));  // not open: always buffered
  w.open = true;
  w.transfer = w.read_direct = 540, w.read_buffered = 62, w.ifm_read = 502;
  w.schedule_buffered = 600, w.schedule_direct = 1100;
  EXPECT_FALSE(EthosUBuffersWeights(w, 0));
  EXPECT_TRUE(EthosUBuffersWeights(w, 1200));
  w.schedule_direct = 580;
  EXPECT_FALSE(EthosUBuffersWeights(w, 1200));
  w.schedule_buffered = 100, w.schedule_direct = 590;
  EXPECT_FALSE(EthosUBuffersWeights(w, 1200));
  w.schedule_buffered = 600, w.schedule_direct = 1100, w.depth_slices = 3;
  EXPECT_TRUE(EthosUBuffersWeights(w, 0));
}

// input [1,8,8,3] (the graph's input) -> CONV_2D 1x1 (3->8) -> output on a
// U85-like NPU: DRAM bursts of 128 bytes, its read channel at 0.5 B/cycle.
// The 3-channel input stays in DRAM in NHWC and is read in IFM blocks 16
// channels deep: each 16-byte burst carries one pixel's 3 bytes, so its 192
// bytes cost 192 x 128 / 16 = 1536 bytes of bursts, 1536 / 0.5 = 3072 cycles
// on the read channel. Without the U85's channels (no read channel) the input
// is an SRAM feature map: (192 + 512) / 8 = 88 SRAM cycles, the 24 weight
// bytes 24 off-chip cycles.
TEST(CostModel, EthosUThreeChannelInputReadInShortBursts) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 3}), out = b.Tensor({1, 8, 8, 8});
  OperatorDef op;
  op.opcode_index = b.Code(BuiltinOp::kConv2d);
  op.inputs = {in, b.Tensor({8, 1, 1, 3}, true), -1};
  op.outputs = {out};
  b.graph.operators.push_back(op);
  const ModelDef model = b.Finish(in, out);
  EthosUConstants k = TinyEthosU();
  k.off_chip_burst_bytes = 128;
  const EthosUCycles plain = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(plain.sram, 88);
  EXPECT_DOUBLE_EQ(plain.off_chip, 24);
  k.off_chip_read_channel_bytes_per_cycle = 0.5, k.off_chip_write_channel_bytes_per_cycle = 2;
  const EthosUCycles u85 = EthosUNodeCycles(model, 0, k);
  EXPECT_DOUBLE_EQ(u85.sram, 64);
  EXPECT_DOUBLE_EQ(u85.off_chip, 3072);
}

// The same tiny chain through a target's "cost.ethos_u" section: each node's
// time is its cycles over the clock (74 and 384 cycles at 500 MHz).
TEST(CostModel, EthosUTargetSection) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Add(b.Conv(in)));
  const std::vector<std::pair<std::string, double>> values = {
      {"clock_hz", 5e8}, {"ofm_ublock_height", 2}, {"ofm_ublock_width", 2}, {"ofm_ublock_depth", 8},
      {"ifm_block_depth", 32}, {"output_cycles_per_element", 0.25}, {"output_cycles_add_sub", 0.75},
      {"output_cycles_mul", 0.375}, {"output_cycles_max_pool", 0.125}, {"activation_cycles_lut", 1},
      {"activation_cycles_relu", 0.25}, {"sram_bytes_per_cycle", 8}, {"off_chip_bytes_per_cycle", 1},
      {"feature_maps_off_chip", 0}, {"sram_cache_bytes", 0}, {"sram_read_latency_cycles", 0},
      {"sram_write_latency_cycles", 0}, {"off_chip_read_latency_cycles", 0}, {"off_chip_write_latency_cycles", 0},
      {"arg_max_cycles_per_element", 0}, {"fuses_channel_scale_shift", 0},
      {"sram_burst_bytes", 32}, {"off_chip_burst_bytes", 128}, {"shram_banks", 0}, {"output_cycles_mul_32bit", 0.5}, {"output_cycles_32bit_binary", 1.125},
      {"weight_dma_bytes_per_cycle", 0}, {"chains_elementwise_after_convolution", 0}, {"sram_channel_bytes_per_cycle", 0},
      {"off_chip_read_channel_bytes_per_cycle", 0}, {"off_chip_write_channel_bytes_per_cycle", 0},
      {"op_overhead_cycles", 10}, {"mac_cycle_scale", 1},
      {"elementwise_cycle_scale", 2}};
  std::string section;
  for (const auto& [key, value] : values)
    section += (section.empty() ? "" : ", ") + std::string("\"") + key + "\": " + Num(value);
  const Target acc = TargetFrom(R"({"ethos_u": {)" + section + "}}");
  const CostTables t = BuildCostTables(model, acc, nullptr);
  EXPECT_NEAR(t.accelerator_us[0], 74 / 5e8 * 1e6, 1e-12);
  EXPECT_NEAR(t.accelerator_us[1], 384 / 5e8 * 1e6, 1e-12);
  EXPECT_FALSE(t.accelerator_placeholders[0].empty());  // this section's numbers are placeholders
}

// An Ethos-U55-256-like section on Vela's block model (shram_banks 48): SRAM
// at 8 bytes per cycle in 32-byte bursts, 32 cycles of read and of write
// latency, constants in flash at 1 byte per cycle, no calibrated corrections.
std::string BlockModelSection(bool arena_off_chip) {
  const std::vector<std::pair<std::string, double>> values = {
      {"clock_hz", 5e8}, {"ofm_ublock_height", 2}, {"ofm_ublock_width", 2}, {"ofm_ublock_depth", 8},
      {"ifm_block_depth", 32}, {"output_cycles_per_element", 0.25}, {"output_cycles_add_sub", 0.75},
      {"output_cycles_mul", 0.375}, {"output_cycles_max_pool", 0.125}, {"activation_cycles_lut", 1},
      {"activation_cycles_relu", 0.25}, {"sram_bytes_per_cycle", 8}, {"off_chip_bytes_per_cycle", 1},
      {"feature_maps_off_chip", arena_off_chip ? 1.0 : 0.0}, {"sram_cache_bytes", arena_off_chip ? 1e6 : 0},
      {"sram_read_latency_cycles", 32}, {"sram_write_latency_cycles", 32}, {"off_chip_read_latency_cycles", 500},
      {"off_chip_write_latency_cycles", 250}, {"arg_max_cycles_per_element", 0}, {"fuses_channel_scale_shift", 0},
      {"sram_burst_bytes", 32}, {"off_chip_burst_bytes", 128}, {"shram_banks", 48}, {"output_cycles_mul_32bit", 0.5},
      {"output_cycles_32bit_binary", 1.125}, {"weight_dma_bytes_per_cycle", 0},
      {"chains_elementwise_after_convolution", 0}, {"sram_channel_bytes_per_cycle", 0},
      {"off_chip_read_channel_bytes_per_cycle", 0}, {"off_chip_write_channel_bytes_per_cycle", 0},
      {"op_overhead_cycles", 0}, {"mac_cycle_scale", 1}, {"elementwise_cycle_scale", 1}};
  std::string section;
  for (const auto& [key, value] : values)
    section += (section.empty() ? "" : ", ") + std::string("\"") + key + "\": " + Num(value);
  return R"({"ethos_u": {)" + section + "}}";
}

// input [1,8,8,4] -> ADD (x + x) -> output, both in SRAM in NHWC (the graph's
// edges), on the block model:
//   block search (elementwise): OFM blocks of 2..8 x 2..8 x 8 all fit the
//     SHRAM; the cost, 256 output elements over the block's, halved when the
//     IFM fits twice in the block, is least for 8x8x8 (256 / 512 / 2).
//   first block's wait: each read of 256 bytes comes in 8-byte bursts (the
//     4-byte rows of a depth-8 block), 256 x 32 / 8 = 1024 bytes = 128
//     cycles, + 32 of latency = 160 (the two operands overlap); the write the
//     same, 160: 320 cycles.
//   output unit: ceil(0.75 x 256) = 192; command limit: ceil((320 / 512 +
//     0.75) / 4 x 256) = 88; the pass takes 192.
//   SRAM: two reads and a write of 1024 burst bytes each = 3072 / 8 = 384.
//   The ADD takes max(192, 384) = 384 cycles: the bursts, not the adder.
TEST(CostModel, EthosUBlockModelElementwise) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Add(in));
  const CostTables t = BuildCostTables(model, TargetFrom(BlockModelSection(false)), nullptr);
  ASSERT_EQ(t.ethos_u.size(), 1u);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].npu, 192);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].sram, 384);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].off_chip, 0);
  EXPECT_NEAR(t.accelerator_us[0], 384 / 5e8 * 1e6, 1e-12);
}

// The same ADD with the arena in DRAM (a U65): the graph's input and output
// stay in the arena even though they fit the SRAM cache, so the ADD's three
// streams use the off-chip port, whose 128-byte bursts the 8-byte rows fill
// a sixteenth of: 3 x 256 x 128 / 8 = 12288 bytes at 1 byte per cycle.
TEST(CostModel, EthosUEdgeTensorsStayInTheArena) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Add(in));
  const CostTables t = BuildCostTables(model, TargetFrom(BlockModelSection(true)), nullptr);
  ASSERT_EQ(t.ethos_u.size(), 1u);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].off_chip, 12288);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].sram, 0);
}

// input [1,16] -> FULLY_CONNECTED (16->16) -> FULLY_CONNECTED (16->16) ->
// output on the block model with the arena in DRAM (U65): the first layer
// has nothing before it to hide a DMA under and reads its weights straight
// from DRAM (no DMA wait, its NPU cycles those of the direct choice); the
// second, after the first's scheduled cycles, buffers them.
TEST(CostModel, EthosUFirstLayerReadsWeightsFromDram) {
  Builder b;
  const int in = b.Tensor({1, 16});
  int x = in;
  for (int layer = 0; layer < 2; ++layer) {
    const int y = b.Tensor({1, 16});
    OperatorDef op;
    op.opcode_index = b.Code(BuiltinOp::kFullyConnected);
    op.inputs = {x, b.Tensor({16, 16}, true), -1};
    op.outputs = {y};
    b.graph.operators.push_back(op);
    x = y;
  }
  const ModelDef model = b.Finish(in, x);
  const CostTables t = BuildCostTables(model, TargetFrom(BlockModelSection(true)), nullptr);
  ASSERT_EQ(t.ethos_u.size(), 2u);
  const EthosUWeightChoice& first = t.ethos_u[0].weight_choice;
  ASSERT_TRUE(first.open);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].npu, first.npu_direct);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].weight_dma, 0);
  ASSERT_TRUE(t.ethos_u[1].weight_choice.open);
  EXPECT_TRUE(EthosUBuffersWeights(t.ethos_u[1].weight_choice, t.ethos_u[0].schedule_npu));
  EXPECT_LT(t.ethos_u[1].npu, t.ethos_u[1].weight_choice.npu_direct);  // its scales from SRAM
}

// input -> CONV_2D 1x1 (4->4, all 16 weights 1) -> output: the constants as
// Vela encodes them.
//   weights: 1 is coded 2 (zigzag); a Rice code with divisor 2^k takes
//     (2 >> k) + 1 + k = 3 bits for k = 0, 1, 2: 16 x 3 bits = 6 bytes,
//     below the 16 raw ones; padded to 16, + a 16-byte header = 32.
//   scales: 10 bytes per output channel, 40, padded to 48.
//   80 bytes from flash at 1 byte per cycle: 80 cycles on the off-chip port.
TEST(CostModel, EthosUEncodedWeights) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Conv(in));
  const CostTables t = BuildCostTables(model, TargetFrom(BlockModelSection(false)), nullptr);
  ASSERT_EQ(t.ethos_u.size(), 1u);
  EXPECT_DOUBLE_EQ(t.ethos_u[0].off_chip, 80);
  EXPECT_GT(t.ethos_u[0].npu, 0);
}

// input [1,8,8,4] -> SPLIT into two [1,8,8,2] halves. On the U55/U65 each
// split output is a MemoryCopy (a 1x1 pooling), except an output read by a
// single NPU node, which reads its slice in place: with both halves graph
// outputs the SPLIT is 2 copies; with the second half feeding an ADD, 1.
TEST(CostModel, EthosUSplitOutputReadInPlace) {
  auto split_model = [](bool second_consumed) {
    Builder b;
    const int in = b.Tensor({1, 8, 8, 4});
    const int axis = b.Tensor({1}, true);
    const int first = b.Tensor({1, 8, 8, 2}), second = b.Tensor({1, 8, 8, 2});
    OperatorDef split;
    split.opcode_index = b.Code(BuiltinOp::kSplit);
    split.inputs = {axis, in};
    split.outputs = {first, second};
    b.graph.operators.push_back(split);
    ModelDef model = b.Finish(in, first);
    if (second_consumed) {
      // ADD(second, second) becomes the graph's second output.
      model.subgraphs[0].tensors.push_back(model.subgraphs[0].tensors[second]);
      const int sum = static_cast<int>(model.subgraphs[0].tensors.size() - 1);
      OperatorDef add;
      model.operator_codes.push_back({BuiltinOp::kAdd, "", 1});
      add.opcode_index = static_cast<uint32_t>(model.operator_codes.size() - 1);
      add.inputs = {second, second};
      add.outputs = {sum};
      model.subgraphs[0].operators.push_back(add);
      model.subgraphs[0].outputs = {first, sum};
    } else {
      model.subgraphs[0].outputs = {first, second};
    }
    return model;
  };
  const Target npu = TargetFrom(BlockModelSection(false));
  const CostTables both = BuildCostTables(split_model(false), npu, nullptr);
  const CostTables one = BuildCostTables(split_model(true), npu, nullptr);
  EXPECT_DOUBLE_EQ(both.ethos_u[0].operations, 2);
  EXPECT_DOUBLE_EQ(one.ethos_u[0].operations, 1);
  EXPECT_GT(one.ethos_u[0].npu, 0);
  EXPECT_DOUBLE_EQ(both.ethos_u[0].npu, 2 * one.ethos_u[0].npu);
}

// input -> CONV_2D -> ADD -> CONV_2D -> output, the ADD refused by the target:
// greedy delegates both convolutions as two partitions. Each hand-over costs
// 100 us + the crossing bytes (256 in + 256 out) at 1e8 B/s = 5.12 us, and a
// convolution saves only 20.48 - 2.048 us: the cost-aware plan runs everything
// on the CPU.
TEST(CostPartitioning, LeavesNodesOnTheCpuWhenHandOversCostMore) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Conv(b.Add(b.Conv(in))));
  const Target acc = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e9) + R"(}, "partition_sync_us": )" +
                                Num(100) + R"(, "copy_bytes_per_second": )" + Num(1e8) + "}");
  const Target cpu = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e8) + "}}");
  const CostTables t = BuildCostTables(model, acc, &cpu);
  std::vector<NodeSupport> support(3);
  support[0].supported = support[2].supported = true;
  support[1].reasons.push_back({ReasonCode::kUnsupportedOp, "delegate", "refused", ""});
  const GraphInfo graph = BuildGraphInfo(model);
  auto plan_with = [&](const std::vector<int>& skip) {
    DelegateOptions options;
    options.skip_nodes = skip;
    return PlanDelegation(graph, support, options);
  };
  const DelegationPlan greedy = plan_with({});
  ASSERT_EQ(greedy.num_partitions(), 2);
  const CostEstimate g = EstimatePlan(model, t, greedy);
  EXPECT_NEAR(g.sync_us, 2 * (100 + 5.12), 1e-9);
  EXPECT_NEAR(g.accelerator_us, 2 * 2.048, 1e-9);
  EXPECT_NEAR(g.cpu_us, 2.56, 1e-9);
  const std::vector<int> skip = ChooseCpuNodes(model, t, greedy, plan_with);
  EXPECT_EQ(skip, (std::vector<int>{0, 2}));
  const CostEstimate c = EstimatePlan(model, t, plan_with(skip));
  EXPECT_LT(c.total_us(), g.total_us());
  EXPECT_NEAR(c.total_us(), EstimateCpuOnly(t).total_us(), 1e-9);

  // With free hand-overs the accelerator wins and greedy is kept.
  const Target cheap = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e9) + "}}");
  const CostTables t2 = BuildCostTables(model, cheap, &cpu);
  EXPECT_TRUE(ChooseCpuNodes(model, t2, greedy, plan_with).empty());
}

// The chain program alone: exact on a chain. CONV (fast on the accelerator)
// -> ADD -> CONV, all supported, one hand-over of 100 us: everything on the
// accelerator in one partition beats any split.
TEST(CostPartitioning, ChainProgramKeepsOnePartition) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Conv(b.Add(b.Conv(in))));
  const Target acc = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e9) + R"(}, "partition_sync_us": )" +
                                Num(10) + "}");
  const Target cpu = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e8) + "}}");
  const CostTables t = BuildCostTables(model, acc, &cpu);
  // 3 nodes on the accelerator: 2.048 + 0.256 + 2.048 + 10 = 14.35 us; all on the CPU: 43.52 us.
  EXPECT_EQ(ChainPartition(model, t, {true, true, true}), (std::vector<bool>{true, true, true}));
  // Only the first may go: 2.048 + 10 + CPU 2.56 + 20.48 = 35.09 us < 43.52 us.
  EXPECT_EQ(ChainPartition(model, t, {true, false, false}), (std::vector<bool>{true, false, false}));
}

// Exact on chains: input -> CONV -> ADD -> CONV -> ADD -> CONV -> output, all
// supported. For several hand-over prices, the chain program's choice priced
// by EstimatePlan equals the cheapest of all 32 placements (brute force).
TEST(CostPartitioning, ChainProgramIsExactOnAChain) {
  Builder b;
  const int in = b.Tensor({1, 8, 8, 4});
  const ModelDef model = b.Finish(in, b.Conv(b.Add(b.Conv(b.Add(b.Conv(in))))));
  const Target cpu = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e8) + "}}");
  const std::vector<NodeSupport> support(5, NodeSupport{true, {}});
  const GraphInfo graph = BuildGraphInfo(model);
  auto plan_with = [&](const std::vector<int>& skip) {
    DelegateOptions options;
    options.skip_nodes = skip;
    return PlanDelegation(graph, support, options);
  };
  for (double sync : {0.0, 3.0, 12.0, 40.0}) {
    SCOPED_TRACE(sync);
    // The accelerator is fast on convolutions and slow on ADD (elementwise at 1%).
    const Target acc = TargetFrom(R"({"ops_per_second": {"int8": )" + Num(1e9) +
                                  R"(}, "op_class_efficiency": {"elementwise": )" + Num(0.01) +
                                  R"(}, "partition_sync_us": )" + Num(sync) + R"(, "copy_bytes_per_second": )" +
                                  Num(1e8) + "}");
    const CostTables t = BuildCostTables(model, acc, &cpu);
    double best = 1e300;
    for (int mask = 0; mask < 32; ++mask) {
      std::vector<int> skip;
      for (int i = 0; i < 5; ++i)
        if (!(mask & (1 << i))) skip.push_back(i);
      best = std::min(best, EstimatePlan(model, t, plan_with(skip)).total_us());
    }
    const std::vector<bool> chosen = ChainPartition(model, t, std::vector<bool>(5, true));
    std::vector<int> skip;
    for (int i = 0; i < 5; ++i)
      if (!chosen[i]) skip.push_back(i);
    EXPECT_NEAR(EstimatePlan(model, t, plan_with(skip)).total_us(), best, 1e-9);
  }
}

// On the shared models and shipped targets: the cost-aware estimate is never
// above greedy's or CPU-only's, and greedy is the plan PlaceModel returns.
TEST(CostPartitioning, NeverWorseThanGreedyOrCpuOnShippedTargets) {
  const fs::path models = testing::SharedDir() / "models";
  if (!fs::exists(models)) GTEST_SKIP() << "shared models not found";
  int checked = 0;
  for (const char* name : {"tf2_mobilenet_v2_1.0_224_ptq.tflite", "mobilenet_v1_0.25_128_quant.tflite",
                           "deeplabv3_mnv2_dm05_pascal_quant.tflite", "person_detect.tflite"}) {
    if (!fs::exists(models / name)) continue;
    const auto model = ReadModelFile((models / name).string());
    for (const char* target : {"imx8mp-nnapi", "nnapi-1.2", "edgetpu", "ethos-u55", "vs680-nnapi"}) {
      SCOPED_TRACE(std::string(name) + " on " + target);
      const Placement p = PlaceModel(*model, target, {});
      const PlanAlternatives a = CompareAlternatives(*model, p);
      EXPECT_LE(a.cost.total_us(), a.greedy.total_us() + 1e-6);
      EXPECT_LE(a.cost.total_us(), a.cpu_only.total_us() + 1e-6);
      EXPECT_EQ(a.greedy.partitions, p.plan.num_partitions());
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace delegato::tools
