#include "tools/model_compare.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "passes/graph_edit.h"
#include "passes/values.h"

namespace delegato::tools {
namespace {

using passes::CopyValues;
using passes::ElementCount;
using passes::RealValue;

std::unique_ptr<Interpreter> Make(std::shared_ptr<const ModelDef> model, int num_threads) {
  Status status;
  InterpreterOptions options;
  options.num_threads = num_threads;
  auto interpreter = Interpreter::Create(std::move(model), options, &status);
  if (!status.ok()) Fail(status.message());
  status = interpreter->AllocateTensors();
  if (!status.ok()) Fail(status.message());
  return interpreter;
}

bool IsIntegerType(DataType t) {
  return t == DataType::kInt32 || t == DataType::kInt64 || t == DataType::kBool || t == DataType::kInt16;
}

// Accumulates one run's outputs into `cmp` (range tracked through lo/hi).
struct Accumulator {
  std::vector<OutputComparison> outputs;
  std::vector<double> sums, lo, hi;

  void Add(const Interpreter& a, const Interpreter& b) {
    DLG_CHECK(a.num_outputs() == b.num_outputs(), "the models have ", a.num_outputs(), " and ", b.num_outputs(),
              " outputs");
    if (outputs.empty()) {
      outputs.resize(a.num_outputs());
      sums.assign(a.num_outputs(), 0);
      lo.assign(a.num_outputs(), INFINITY);
      hi.assign(a.num_outputs(), -INFINITY);
    }
    for (int o = 0; o < a.num_outputs(); ++o) {
      TensorView x = a.output(o), y = b.output(o);
      const int64_t n = ElementCount(x);
      DLG_CHECK(n == ElementCount(y), "output ", o, " (\"", x.name, "\") has ", n, " elements in one model and ",
                ElementCount(y), " in the other");
      OutputComparison& c = outputs[o];
      c.name = std::string(x.name);
      c.type_a = passes::TypeName(x.type);
      c.type_b = passes::TypeName(y.type);
      c.integer_output = IsIntegerType(x.type) && x.scales.empty();
      const double step = (!x.scales.empty() && x.type != DataType::kFloat32) ? x.scales[0] : 0.0;
      for (int64_t k = 0; k < n; ++k) {
        const double u = RealValue(x, k), v = RealValue(y, k);
        const double d = std::fabs(u - v);
        lo[o] = std::min(lo[o], u);
        hi[o] = std::max(hi[o], u);
        c.equal += d == 0;
        c.max_abs = std::max(c.max_abs, d);
        c.max_steps = std::max(c.max_steps, step > 0 ? d / step : d);
        sums[o] += d;
      }
      c.elements += n;
    }
  }

  std::vector<OutputComparison> Finish() {
    for (size_t o = 0; o < outputs.size(); ++o) {
      outputs[o].mean_abs = outputs[o].elements ? sums[o] / outputs[o].elements : 0;
      outputs[o].reference_range = hi[o] >= lo[o] ? hi[o] - lo[o] : 0;
    }
    return outputs;
  }
};

}  // namespace

double OutputComparison::error() const {
  if (integer_output) return 1.0 - agreement();
  if (max_abs == 0) return 0;
  return mean_abs / std::max(reference_range, 1e-12);
}

RandomComparison CompareOnRandomInputs(std::shared_ptr<const ModelDef> a, std::shared_ptr<const ModelDef> b,
                                       uint64_t seed, int runs, int num_threads) {
  auto ia = Make(std::move(a), num_threads);
  auto ib = Make(std::move(b), num_threads);
  DLG_CHECK(ia->num_inputs() == ib->num_inputs(), "the models have ", ia->num_inputs(), " and ",
            ib->num_inputs(), " inputs");
  std::mt19937_64 rng(seed);
  Accumulator acc;
  for (int r = 0; r < runs; ++r) {
    for (int i = 0; i < ia->num_inputs(); ++i) {
      passes::FillRandom(ia->input(i), rng);
      CopyValues(ia->input(i), ib->input(i));
    }
    Status s = ia->Invoke();
    if (!s.ok()) Fail(s.message());
    s = ib->Invoke();
    if (!s.ok()) Fail(s.message());
    acc.Add(*ia, *ib);
  }
  RandomComparison out;
  out.runs = runs;
  out.seed = seed;
  out.outputs = acc.Finish();
  return out;
}

ImageComparison CompareOnImage(std::shared_ptr<const ModelDef> a, std::shared_ptr<const ModelDef> b,
                               const RgbImage& image, int num_threads) {
  auto ia = Make(std::move(a), num_threads);
  auto ib = Make(std::move(b), num_threads);
  DLG_CHECK(ia->num_inputs() >= 1 && ib->num_inputs() >= 1, "--image: the model has no input");
  FillInputFromImage(image, ia->input(0));
  FillInputFromImage(image, ib->input(0));
  Status s = ia->Invoke();
  if (!s.ok()) Fail(s.message());
  s = ib->Invoke();
  if (!s.ok()) Fail(s.message());
  ImageComparison out;
  Accumulator acc;
  acc.Add(*ia, *ib);
  out.outputs = acc.Finish();

  TensorView x = ia->output(0), y = ib->output(0);
  const int64_t n = ElementCount(x);
  if (IsIntegerType(x.type) && x.dims.size() >= 2) {
    out.kind = ImageComparison::Kind::kSegmentation;
    out.pixels = n;
    for (int64_t k = 0; k < n; ++k) out.pixels_agreeing += RealValue(x, k) == RealValue(y, k);
  } else if (x.type == DataType::kFloat32 && x.dims.size() >= 2 && x.dims.back() == 3 && n >= 6 &&
             ia->input(0).dims.size() == 4) {
    out.kind = ImageComparison::Kind::kKeypoints;
    out.keypoints = static_cast<int>(n / 3);
    const double h = ia->input(0).dims[1], w = ia->input(0).dims[2];
    double total = 0;
    for (int k = 0; k < out.keypoints; ++k) {
      const double dy = (RealValue(x, 3 * k) - RealValue(y, 3 * k)) * h;
      const double dx = (RealValue(x, 3 * k + 1) - RealValue(y, 3 * k + 1)) * w;
      const double shift = std::sqrt(dy * dy + dx * dx);
      total += shift;
      out.max_shift_px = std::max(out.max_shift_px, shift);
      out.moved += shift > 2.0;
      if (RealValue(x, 3 * k + 2) >= 0.3) {
        ++out.confident;
        out.confident_max_shift_px = std::max(out.confident_max_shift_px, shift);
      }
      out.max_score_change = std::max(out.max_score_change, std::fabs(RealValue(x, 3 * k + 2) - RealValue(y, 3 * k + 2)));
    }
    out.mean_shift_px = total / out.keypoints;
  } else if (!IsIntegerType(x.type) && n >= 2 && (x.dims.size() <= 2 || n == x.dims.back())) {
    out.kind = ImageComparison::Kind::kClassifier;
    auto top1 = [](const TensorView& t) {
      int64_t best = 0;
      for (int64_t k = 1; k < ElementCount(t); ++k)
        if (RealValue(t, k) > RealValue(t, best)) best = k;
      return static_cast<int>(best);
    };
    out.top1_a = top1(x);
    out.top1_b = top1(y);
    out.score_a = RealValue(x, out.top1_a);
    out.score_b = RealValue(y, out.top1_a);
  }
  return out;
}

std::string FormatComparison(const OutputComparison& c) {
  char buf[256];
  const double pct = 100.0 * c.agreement();
  if (c.integer_output) {
    std::snprintf(buf, sizeof(buf), "%.3f%% of %lld values equal", pct, static_cast<long long>(c.elements));
  } else {
    std::snprintf(buf, sizeof(buf), "max |diff| %.4g (%.3g steps), mean %.4g (%.3g%% of the output range %.4g), %.2f%% equal",
                  c.max_abs, c.max_steps, c.mean_abs, 100.0 * c.error(), c.reference_range, pct);
  }
  std::string out = buf;
  if (c.type_a != c.type_b) out += " [type " + c.type_a + " -> " + c.type_b + "]";
  return out;
}

}  // namespace delegato::tools
