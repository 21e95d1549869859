#include "passes/measure.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "core/error.h"
#include "delegato/interpreter.h"
#include "passes/graph_edit.h"
#include "passes/values.h"

namespace delegato::passes {

std::shared_ptr<ModelDef> ExtractRegion(const Region& region) {
  const ModelDef& src = *region.model;
  const SubgraphDef& g = src.subgraphs[0];
  auto out = std::make_shared<ModelDef>();
  out->version = src.version;
  out->operator_codes = src.operator_codes;
  out->buffers.emplace_back();
  out->subgraphs.emplace_back();
  SubgraphDef& dst = out->subgraphs[0];
  std::map<int, int> remap;
  auto map_tensor = [&](int t) -> int {
    if (t < 0) return t;
    auto it = remap.find(t);
    if (it != remap.end()) return it->second;
    TensorDef def = g.tensors[t];
    def.shape_signature.clear();
    if (def.buffer != 0) {
      out->buffers.push_back(src.buffers[def.buffer]);
      def.buffer = static_cast<uint32_t>(out->buffers.size() - 1);
    }
    dst.tensors.push_back(std::move(def));
    const int index = static_cast<int>(dst.tensors.size()) - 1;
    remap[t] = index;
    return index;
  };
  for (int t : region.inputs) dst.inputs.push_back(map_tensor(t));
  for (int n : region.nodes) {
    OperatorDef op = g.operators[n];
    for (int32_t& t : op.inputs) t = map_tensor(t);
    for (int32_t& t : op.outputs) t = map_tensor(t);
    for (int32_t& t : op.intermediates) t = map_tensor(t);
    dst.operators.push_back(std::move(op));
  }
  for (int t : region.outputs) dst.outputs.push_back(map_tensor(t));
  return out;
}

namespace {

std::unique_ptr<Interpreter> MakeInterpreter(std::shared_ptr<const ModelDef> model) {
  Status status;
  InterpreterOptions options;
  options.kernels = KernelSet::kReference;
  auto interpreter = Interpreter::Create(std::move(model), options, &status);
  if (!status.ok()) Fail(status.message());
  status = interpreter->AllocateTensors();
  if (!status.ok()) Fail(status.message());
  return interpreter;
}

}  // namespace

std::vector<OutputDiff> CompareRegions(const Region& a, const Region& b, uint64_t seed, int runs) {
  DLG_CHECK(a.inputs.size() == b.inputs.size() && a.outputs.size() == b.outputs.size(),
            "regions to compare differ in their number of inputs or outputs");
  auto ia = MakeInterpreter(ExtractRegion(a));
  auto ib = MakeInterpreter(ExtractRegion(b));
  std::vector<OutputDiff> diffs(a.outputs.size());
  std::vector<double> sums(a.outputs.size(), 0.0);
  std::vector<double> lo(a.outputs.size(), INFINITY), hi(a.outputs.size(), -INFINITY);
  std::mt19937_64 rng(seed);
  for (int run = 0; run < runs; ++run) {
    for (int i = 0; i < ia->num_inputs(); ++i) {
      TensorView va = ia->input(i);
      TensorView vb = ib->input(i);
      FillRandom(va, rng);
      if (std::find(a.nonzero.begin(), a.nonzero.end(), i) != a.nonzero.end()) {
        // Divisors: a real zero would make both sides fail; nudge it one step.
        const int64_t n = ElementCount(va);
        for (int64_t k = 0; k < n; ++k)
          if (RealValue(va, k) == 0) SetRealValue(va, k, va.scales.empty() ? 1.0 : va.scales[0]);
      }
      CopyValues(va, vb);
    }
    Status s = ia->Invoke();
    if (!s.ok()) Fail(s.message());
    s = ib->Invoke();
    if (!s.ok()) Fail(s.message());
    for (size_t o = 0; o < diffs.size(); ++o) {
      TensorView oa = ia->output(static_cast<int>(o));
      TensorView ob = ib->output(static_cast<int>(o));
      const int64_t n = ElementCount(oa);
      DLG_CHECK(n == ElementCount(ob), "compared outputs \"", oa.name, "\" and \"", ob.name,
                "\" differ in size (", n, " vs ", ElementCount(ob), ")");
      OutputDiff& d = diffs[o];
      d.name = std::string(oa.name);
      const double step = oa.scales.empty() ? 1.0 : oa.scales[0];
      for (int64_t k = 0; k < n; ++k) {
        const double x = RealValue(oa, k), y = RealValue(ob, k);
        lo[o] = std::min(lo[o], x);
        hi[o] = std::max(hi[o], x);
        const double diff = std::fabs(x - y);
        d.differing += RawValue(oa, k) != RawValue(ob, k) || (diff > 0);
        d.max_abs = std::max(d.max_abs, diff);
        d.max_steps = std::max(d.max_steps, diff / step);
        sums[o] += diff;
      }
      d.elements += n;
    }
  }
  for (size_t o = 0; o < diffs.size(); ++o) {
    diffs[o].mean_abs = diffs[o].elements ? sums[o] / static_cast<double>(diffs[o].elements) : 0;
    diffs[o].reference_range = hi[o] >= lo[o] ? hi[o] - lo[o] : 0;
  }
  return diffs;
}

std::string DescribeDiff(const OutputDiff& d) {
  if (d.differing == 0) return "identical on random inputs";
  const double pct = d.elements ? 100.0 * static_cast<double>(d.differing) / d.elements : 0;
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "max %.3g steps (%.4g real), mean |diff| %.3g, %.2f%% of %lld elements differ",
                d.max_steps, d.max_abs, d.mean_abs, pct, static_cast<long long>(d.elements));
  return buf;
}

}  // namespace delegato::passes
