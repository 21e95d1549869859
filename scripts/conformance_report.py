#!/usr/bin/env python3
"""Runs every shared model through `delegato run` and LiteRT on the same
inputs and writes docs/conformance.md: per model and per output, how many
elements equal LiteRT's reference kernels (the bit-exactness target) and its
default optimized interpreter, and by how much the others differ.

  python3 scripts/conformance_report.py --delegato build/delegato

The file is deterministic (no dates, no timings, no absolute paths), so a
change in it is a change in behaviour. Progress and timings go to stderr.
Exit status 1 when a model mismatches, errors or crashes (the file is
written anyway); unsupported ops and the optional models do not count.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
import time
from pathlib import Path
from typing import Optional

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests" / "conformance"))

import numpy as np  # noqa: E402

import litert_oracle as lo  # noqa: E402


@dataclasses.dataclass
class Tally:
    """Equal elements and the largest difference of one output over all runs."""
    is_float: Optional[bool] = None
    elements: int = 0
    equal: int = 0
    max_diff: float = 0.0
    layout_error: str = ""
    within: bool = True       # every run passed (exact, or float within tolerance)

    def add(self, c: lo.Comparison) -> None:
        self.within = self.within and c.ok
        if c.layout_error:
            self.layout_error = c.layout_error
            return
        self.is_float = c.is_float
        self.elements += c.elements
        self.equal += c.equal
        self.max_diff = max(self.max_diff, c.max_diff)

    def percent_equal(self) -> str:
        if self.layout_error:
            return "-"
        if self.elements == 0:
            return "-"
        if self.equal == self.elements:
            return "100%"
        # Round down so that "100%" always means every element.
        return f"{math.floor(10000 * self.equal / self.elements) / 100:.2f}%"

    def max_text(self) -> str:
        if self.layout_error:
            return "dtype/shape differ"
        if self.elements == 0 or self.is_float is None:
            return "-"
        if self.is_float:
            return "0" if self.max_diff == 0 else f"rel {self.max_diff:.2e}"
        return f"{self.max_diff:.0f} LSB"


@dataclasses.dataclass
class OutputRow:
    name: str
    dtype: str
    shape: tuple
    vs_ref: Tally = dataclasses.field(default_factory=Tally)
    vs_opt: Tally = dataclasses.field(default_factory=Tally)
    ref_vs_opt: Tally = dataclasses.field(default_factory=Tally)


@dataclasses.dataclass
class ModelResult:
    name: str
    status: str = ""
    notes: list = dataclasses.field(default_factory=list)
    outputs: list = dataclasses.field(default_factory=list)
    image: str = ""   # classifier result on the image, if run
    compared: bool = False   # every run compared: the figures are complete
    seconds: float = 0.0

    def percent_equal(self, field: str) -> str:
        tallies = [getattr(row, field) for row in self.outputs]
        if not tallies or any(t.layout_error for t in tallies):
            return "-" if not tallies else "dtype/shape differ"
        total = Tally(is_float=False, elements=sum(t.elements for t in tallies),
                      equal=sum(t.equal for t in tallies))
        return total.percent_equal()

    def max_text(self, field: str) -> str:
        """Largest differences, integer and float outputs apart."""
        tallies = [getattr(row, field) for row in self.outputs]
        if any(t.layout_error for t in tallies):
            return "dtype/shape differ"
        parts = []
        for is_float in (False, True):
            kind = [t for t in tallies if t.is_float is is_float]
            if kind:
                parts.append(Tally(is_float=is_float, elements=1,
                                   max_diff=max(t.max_diff for t in kind)).max_text())
        return "; ".join(parts) or "-"

    def bit_exact(self) -> bool:
        return bool(self.outputs) and all(
            not row.vs_ref.layout_error and row.vs_ref.equal == row.vs_ref.elements
            for row in self.outputs)


def _status_of_failed_run(run: lo.DelegatoRun, oracle: lo.Oracle) -> str:
    if run.crashed:
        return f"CRASH (signal {-run.returncode})"
    if lo.rejected_like_litert(run, oracle):
        return "rejected, as by LiteRT"
    if run.unsupported:
        return "unsupported"
    return f"ERROR (exit {run.returncode})"


def _clean(text: str) -> str:
    """One line, safe inside a Markdown table, without local paths."""
    text = text.replace(str(lo.models_dir()) + "/", "").replace(str(lo.shared_dir()) + "/", "")
    text = re.sub(r"/tmp/delegato_conf_[^/\s]+/", "", text)
    return text.replace("|", "\\|").replace("\n", " ").strip()


def check_invoking_error(model: Path, binary: Path) -> ModelResult:
    result = ModelResult(model.stem)
    run = lo.run_delegato(model, binary=binary)
    node = re.compile(rf"\bnode\s*#?\s*{lo.INVOKING_ERROR_NODE}\b", re.IGNORECASE)
    if run.crashed:
        result.status = f"CRASH (signal {-run.returncode})"
    elif run.ok:
        result.status = "FAIL: accepted a model with an unknown custom op"
    elif lo.INVOKING_ERROR_OP in run.stderr and node.search(run.stderr):
        result.status = "rejected as expected"
    else:
        result.status = "FAIL: error does not name the op and node"
    if run.stderr.strip():
        result.notes.append(f"delegato: `{_clean(run.error_line())}`")
    result.notes.append(f"Expected: a non-zero exit naming custom op `{lo.INVOKING_ERROR_OP}` "
                        f"and node {lo.INVOKING_ERROR_NODE}; LiteRT itself refuses it too.")
    return result


def _classify_image(outputs, oracle: lo.Oracle, model_stem: str) -> str:
    scores = lo.dequantize(outputs[0], oracle.outputs[0]).reshape(-1)
    top1 = int(np.argmax(scores))
    text = f"top-1 {top1} (score {scores[top1]:.3f})"
    known = lo.IMAGE_CLASSIFIERS.get(model_stem)
    if known is not None:
        expected, _ = known
        text += ", expected " + str(expected) + (" ✓" if top1 == expected else " ✗")
    return text


def compare_model(model: Path, binary: Path, runs) -> ModelResult:
    result = ModelResult(model.stem)
    try:
        ref = lo.Oracle(model, reference=True)
        opt = lo.Oracle(model, reference=False)
    except lo.OracleRejectsModel as error:
        result.status = "no oracle"
        result.notes.append(f"LiteRT cannot run it: `{_clean(str(error))}`")
        return result
    if ref.note:
        result.notes.append(ref.note + ".")
    result.outputs = [OutputRow(o.name, str(o.dtype), o.shape) for o in ref.outputs]

    def tally(actual, ref_out, opt_out):
        if len(actual) != len(ref_out):
            raise AssertionError(f"delegato wrote {len(actual)} outputs, the model has {len(ref_out)}")
        for row, a, r, o in zip(result.outputs, actual, ref_out, opt_out):
            row.vs_ref.add(lo.compare(a, r))
            row.vs_opt.add(lo.compare(a, o))
            row.ref_vs_opt.add(lo.compare(o, r))

    for seed, threads in runs:
        inputs = lo.random_inputs(ref.inputs, seed)
        run = lo.run_delegato(model, inputs, binary=binary, extra_args=["--num_threads", str(threads)])
        if not run.ok:
            result.status = _status_of_failed_run(run, ref)
            result.notes.append(f"delegato: `{_clean(run.error_line())}`")
            return result
        try:
            tally(run.outputs, ref.run(inputs), opt.run(inputs))
        except lo.OracleRejectsModel as error:
            result.status = "no oracle"
            result.notes.append(f"LiteRT fails to invoke it: `{_clean(str(error))}`")
            return result
        except AssertionError as error:
            result.status = "MISMATCH"
            result.notes.append(str(error))
            return result
    if any(row.vs_ref.layout_error for row in result.outputs):
        result.status, result.compared = "MISMATCH", True
        result.notes += [f"output {i}: {row.vs_ref.layout_error}"
                         for i, row in enumerate(result.outputs) if row.vs_ref.layout_error]
        return result

    image = lo.images_dir() / lo.CLASSIFIER_IMAGE
    if model.stem in lo.IMAGE_CLASSIFIERS and image.is_file():
        run = lo.run_delegato(model, image=image, binary=binary)
        if not run.ok:
            result.status = _status_of_failed_run(run, ref)
            result.notes.append(f"delegato on {image.name}: `{_clean(run.error_line())}`")
            return result
        try:
            tally(run.outputs, ref.run(run.fed_inputs), opt.run(run.fed_inputs))
        except lo.OracleRejectsModel as error:
            result.status = "no oracle"
            result.notes.append(f"LiteRT fails to invoke it on {image.name}: `{_clean(str(error))}`")
            return result
        except (AssertionError, ValueError) as error:
            result.status = "MISMATCH"
            result.notes.append(f"on {image.name}: {error}")
            return result
        result.image = f"{image.name}: delegato " + _classify_image(run.outputs, ref, model.stem)

    result.compared = True
    if result.bit_exact():
        result.status = "bit-exact"
    elif all(row.vs_ref.within for row in result.outputs):
        result.status = "within float tolerance"
    else:
        result.status = "MISMATCH"
    if result.image and "✗" in result.image and result.status != "MISMATCH":
        result.status += ", wrong top-1"
    return result


def render(results: list[ModelResult], backend: lo.OracleBackend, runs) -> str:
    seeds = ", ".join(str(s) for s, _ in runs)
    threads = ", ".join(f"seed {s}: {t}" for s, t in runs)
    lines = [
        "# Conformance with LiteRT",
        "",
        "Generated by `python3 scripts/conformance_report.py --delegato build/delegato`; "
        "do not edit by hand. The same comparisons run as a test: "
        "`pytest tests/conformance -m conformance`.",
        "",
        f"- Oracle: `{backend.package}` {backend.version}. **ref** = its reference kernels "
        "(`BUILTIN_REF` op resolver), the bit-exactness target; **optimized** = its default "
        "interpreter (optimized kernels and the XNNPACK delegate), shown for comparison.",
        f"- Inputs: seeded random, {len(runs)} seeds ({seeds}); delegato threads per seed: {threads}. "
        "uint8/int8/int16 uniform over the full range, float32 uniform in [-1, 1), "
        "wider integers in [-8, 8]. Classifiers also run on `images/"
        f"{lo.CLASSIFIER_IMAGE}`, preprocessed by delegato (`--image`, `--save_inputs`) and the same "
        "input fed to LiteRT.",
        f"- Pass: integer outputs identical to ref; float outputs within rtol {lo.FLOAT_RTOL:g}, "
        f"atol {lo.FLOAT_ATOL:g}.",
        "- `= ref` / `= optimized`: share of output elements exactly equal, over all runs. "
        "`max diff`: largest difference in LSB (raw integer units) for integer outputs, "
        "largest relative difference for float outputs.",
        "- Status: **bit-exact** (every output element equal to ref), **within float tolerance**, "
        "**MISMATCH**, **unsupported** (delegato names an op it has no kernel for), "
        "**rejected, as by LiteRT** (LiteRT refuses the file as written too; its figures would come "
        "from a patched copy), **ERROR** / **CRASH** (delegato failed otherwise), "
        "**no oracle** (LiteRT cannot run the model).",
        "",
        "## Summary",
        "",
        "| model | status | outputs | = ref | max diff vs ref | = optimized | max diff vs optimized |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if r.compared:
            figures = (f"{r.percent_equal('vs_ref')} | {r.max_text('vs_ref')} | "
                       f"{r.percent_equal('vs_opt')} | {r.max_text('vs_opt')}")
        else:
            figures = "- | - | - | -"
        lines.append(f"| `{r.name}` | {r.status} | {len(r.outputs) or '-'} | {figures} |")
    lines += ["", "## Per model", ""]
    for r in results:
        lines += [f"### `{r.name}`", "", f"Status: **{r.status}**.", ""]
        for note in r.notes:
            lines.append(f"- {note}")
        if r.image:
            lines.append(f"- {r.image}")
        if r.notes or r.image:
            lines.append("")
        if r.compared:
            lines += [
                "| output | dtype | shape | = ref | max diff vs ref | = optimized | "
                "max diff vs optimized | ref vs optimized (LiteRT alone) |",
                "|---|---|---|---:|---:|---:|---:|---:|",
            ]
            for i, row in enumerate(r.outputs):
                shape = "x".join(str(d) for d in row.shape) or "scalar"
                ro = row.ref_vs_opt
                lines.append(
                    f"| {i} `{_clean(row.name) or '(unnamed)'}` | {row.dtype} | {shape} | "
                    f"{row.vs_ref.percent_equal()} | {row.vs_ref.max_text()} | "
                    f"{row.vs_opt.percent_equal()} | {row.vs_opt.max_text()} | "
                    f"{ro.percent_equal()}, {ro.max_text()} |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delegato", type=Path, default=lo.delegato_binary(),
                        help="delegato binary (default: $DELEGATO_BIN or build/delegato)")
    parser.add_argument("--output", type=Path, default=REPO_ROOT / "docs" / "conformance.md")
    parser.add_argument("--models", nargs="*", default=None,
                        help="only models whose name contains one of these")
    args = parser.parse_args()

    try:
        backend = lo.backend()
    except lo.OracleUnavailable as error:
        print(f"conformance_report: {error}", file=sys.stderr)
        return 2
    if not args.delegato.is_file():
        print(f"conformance_report: no delegato binary at {args.delegato}", file=sys.stderr)
        return 2
    models = lo.list_models()
    if not models:
        print(f"conformance_report: no models in {lo.models_dir()} (set DELEGATO_SHARED_DIR)",
              file=sys.stderr)
        return 2
    if args.models:
        models = [m for m in models if any(key in m.stem for key in args.models)]

    runs = lo.DEFAULT_RUNS
    results = []
    for model in models:
        start = time.monotonic()
        if model.stem == lo.INVOKING_ERROR_MODEL:
            result = check_invoking_error(model, args.delegato)
        else:
            result = compare_model(model, args.delegato, runs)
        result.seconds = time.monotonic() - start
        print(f"{model.stem:40s} {result.status:28s} {result.seconds:6.1f}s", file=sys.stderr)
        results.append(result)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(results, backend, runs), encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    bad = [r for r in results if r.status.startswith(("MISMATCH", "CRASH", "FAIL", "ERROR"))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
