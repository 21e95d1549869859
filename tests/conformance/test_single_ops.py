"""Every single-op unit test case, replayed in LiteRT's reference kernels.

The C++ unit tests build their one-op models with OpModel (tests/unit/test_util.h).
With DELEGATO_OP_DUMP_DIR set, each interpreter they invoke leaves a case directory:
model.tflite (written by delegato's own writer), invoke_<k>/input_<i>.npy and
invoke_<k>/output_<i>.npy (delegato's outputs), and meta.json. Here every case runs in
LiteRT (`OpResolverType.BUILTIN_REF`), invokes replayed in order on one interpreter
(stateful ops carry their variables over), and the outputs are compared:

- integer and bool outputs: exactly equal (bit-exactness is the contract);
- float outputs: |delegato - litert| <= FLOAT_ATOL + FLOAT_RTOL * |litert|, NaN where
  LiteRT has NaN. Per-op exceptions with their reason are in FLOAT_TOLERANCE_BY_OP.

Where the cases come from: DELEGATO_OP_CASES names a directory the unit tests already
filled (CI: the ctest stage runs with DELEGATO_OP_DUMP_DIR=build/op_cases); otherwise
this test runs the unit-test binaries of build/ (DELEGATO_BUILD_DIR) itself.

A case whose op version LiteRT's reference resolver does not register (it registers fewer
versions of some ops than the default resolver) is compared with LiteRT's default kernels
(`BUILTIN_WITHOUT_DEFAULT_DELEGATES`) and marked `reference_lacks_version`.

LiteRT's reference kernels can abort the process on some inputs, so cases run in child
processes, in batches; a batch that dies is resumed after the case it died on, and
that case is reported as "LiteRT aborts" (not a delegato failure, but listed).

Coverage: every entry of the op table (`delegato ops --format json`) must appear in at
least one case that matched LiteRT. The per-case results are written to
<cases>/results.json for scripts/ops_doc.py (docs/ops.md).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
BATCH_SIZE = 200

FLOAT_RTOL = 1e-5
FLOAT_ATOL = 1e-6
# op name -> (rtol, atol, why). Float kernels that evaluate transcendental functions
# or accumulate in another order than LiteRT's reference loops.
FLOAT_TOLERANCE_BY_OP: dict[str, tuple[float, float, str]] = {}

# TFLite_Detection_PostProcess writes only the first num_detections (output 3) rows of
# its boxes, classes and scores; LiteRT leaves the remaining rows as the arena held
# them, so only the valid rows are compared.
DETECTION_POSTPROCESS = "TFLite_Detection_PostProcess"

# Where BUILTIN_REF kills the process, the case is compared with this resolver instead.
ABORT_FALLBACK_RESOLVER = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"
# Aborting cases that match neither resolver: test name -> reason.
LITERT_ABORTS_KNOWN: dict[str, str] = {}

# Where BUILTIN_REF is no oracle, the case is replayed with ABORT_FALLBACK_RESOLVER (LiteRT's
# default kernels without XNNPACK) instead; the result records which resolver answered.
#   op name -> reason: ops the reference resolver does not register at all;
#   test name (suite.test) -> reason: cases where the reference kernel itself is wrong.
REFERENCE_RESOLVER_LACKS_OP: dict[str, str] = {
    "SEGMENT_SUM": "tflite/kernels/register_ref.cc registers no SEGMENT_SUM (the default "
                   "resolver does)",
}
REFERENCE_KERNEL_WRONG: dict[str, str] = {
    "Sum.QuantizedUint8Int8Int16": "LiteRT 2.3's reference SUM for int8/int16 returns "
                                   "uninitialized memory (int16 values change run to run); "
                                   "the default kernel computes the sum",
}

# Cases the replay cannot feed to LiteRT: test name -> reason (checked by the unit test only).
NOT_REPLAYABLE: dict[str, str] = {
    "Shape.ScalarInputGivesEmpty": "LiteRT's set_tensor refuses the rank-0 input "
                                   "('Invalid tensor size.')",
}

# Cases LiteRT refuses to load or prepare, that are nevertheless not delegato bugs:
# test name (suite.test) -> reason. Anything else LiteRT rejects fails the test (the
# writer produced a model TFLite does not accept, or delegato accepts what TFLite refuses).
_CONV_NEEDS_BIAS = ("LiteRT's CONV_2D requires a bias input (tflite/kernels/conv.cc: has_bias); "
                    "delegato runs a bias-less CONV_2D as a zero bias, a superset (converters "
                    "always write the bias)")
LITERT_REJECTS_ALLOWED: dict[str, str] = {
    # LiteRT 2.3 refuses 16x8 and hybrid convolutions without a bias input; delegato runs
    # them with a zero bias (a superset); the biased variants of these tests match LiteRT.
    "HybridConv.Variants": "LiteRT 2.3 refuses a bias-less hybrid CONV_2D",
    "HybridDepthwiseConv.Variants": "LiteRT 2.3 refuses a bias-less hybrid DEPTHWISE_CONV_2D",
    "Int16x8Test.Conv2D": "LiteRT 2.3 refuses a bias-less int16x8 CONV_2D",
    "Int16x8Test.DepthwiseConv2D": "LiteRT 2.3 refuses a bias-less int16x8 DEPTHWISE_CONV_2D",
    "OneHot.Axis0Int64IndicesAndTypes": "LiteRT 2.3's ONE_HOT refuses int64 indices with this "
                                        "output type; delegato accepts them (a superset)",
    "ScatterNd.ElementsInt64IndicesInt32Values": "LiteRT 2.3's SCATTER_ND refuses int64 "
                                                 "indices; delegato accepts them (a superset)",
    "SegmentSum.ConstantIds": "SEGMENT_SUM with constant ids is refused by LiteRT 2.3's default "
                              "kernel; checked by its unit test only",
    "Range.QuantizedInt8": "LiteRT 2.3 refuses int8 RANGE (its kernel takes int32, int64, "
                           "float32); delegato also runs the quantized int8 form",
    "Conv2DFloat.NoBias": _CONV_NEEDS_BIAS,
    "Conv2DInt8PerChannel.NoBias": _CONV_NEEDS_BIAS,
}


# ---------------------------------------------------------------------------
# The worker: runs in a child process, one JSON line per case on stdout.

def _load_npy(path: Path):
    return np.load(path, allow_pickle=False)


def _tolerance(ops):
    rtol, atol = FLOAT_RTOL, FLOAT_ATOL
    for op in ops:
        if op["name"] in FLOAT_TOLERANCE_BY_OP:
            r, a, _ = FLOAT_TOLERANCE_BY_OP[op["name"]]
            rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _compare(ours: np.ndarray, theirs: np.ndarray, rtol: float, atol: float) -> str | None:
    if ours.dtype != theirs.dtype:
        return f"dtype {ours.dtype} vs LiteRT {theirs.dtype}"
    if ours.shape != theirs.shape:
        return f"shape {list(ours.shape)} vs LiteRT {list(theirs.shape)}"
    if np.issubdtype(ours.dtype, np.floating):
        a = ours.astype(np.float64)
        b = theirs.astype(np.float64)
        nan_mismatch = np.isnan(a) != np.isnan(b)
        with np.errstate(invalid="ignore"):
            close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        bad = ~close | nan_mismatch
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return (f"{int(bad.sum())}/{bad.size} values beyond rtol {rtol} atol {atol}; first at "
                    f"flat index {i}: {a.flat[i]!r} vs LiteRT {b.flat[i]!r}")
        return None
    bad = ours != theirs
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return (f"{int(bad.sum())}/{bad.size} values differ; first at flat index {i}: "
                f"{ours.flat[i]!r} vs LiteRT {theirs.flat[i]!r}")
    return None


def replay_case(case: Path, resolver: str = "BUILTIN_REF") -> dict:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    meta = json.loads((case / "meta.json").read_text())
    result = {"case": case.name, "test": f"{meta['suite']}.{meta['test']}", "ops": meta["ops"],
              "kernels": meta["kernels"], "num_threads": meta["num_threads"],
              "types": sorted({t["type"] for t in meta["inputs"] + meta["outputs"]})}
    if "dump_error" in meta:
        result.update(status="not_dumped", detail=meta["dump_error"])
        return result
    if result["test"] in NOT_REPLAYABLE:
        result.update(status="not_replayable", detail=NOT_REPLAYABLE[result["test"]])
        return result
    try:
        interpreter = Interpreter(model_path=str(case / "model.tflite"),
                                  experimental_op_resolver_type=getattr(OpResolverType, resolver))
        interpreter.allocate_tensors()
    except Exception as error:  # LiteRT raises ValueError / RuntimeError
        detail = str(error).strip().splitlines()[-1:]
        if resolver == "BUILTIN_REF" and any("Registration failed" in line for line in detail):
            # The reference resolver registers fewer versions of some ops (STRIDED_SLICE 1-4,
            # TILE 1-2, RANGE 1, ...) than the default one: those versions are compared with
            # the default kernels, and the result says so.
            fallback = replay_case(case, ABORT_FALLBACK_RESOLVER)
            fallback["reference_lacks_version"] = True
            return fallback
        result.update(status="litert_rejects", detail=detail)
        return result
    rtol, atol = _tolerance(meta["ops"])
    inputs = interpreter.get_input_details()
    outputs = interpreter.get_output_details()
    for k in range(meta["invokes"]):
        step = case / f"invoke_{k}"
        try:
            values = [_load_npy(step / f"input_{i}.npy") for i in range(len(inputs))]
            resized = False
            for detail, value in zip(inputs, values):
                if list(detail["shape"]) != list(value.shape):
                    interpreter.resize_tensor_input(detail["index"], list(value.shape))
                    resized = True
            if resized:
                interpreter.allocate_tensors()
            for detail, value in zip(inputs, values):
                interpreter.set_tensor(detail["index"], value)
            interpreter.invoke()
        except Exception as error:
            result.update(status="litert_rejects",
                          detail=f"invoke {k}: " + " ".join(str(error).strip().splitlines()[-1:]))
            return result
        theirs_all = [interpreter.get_tensor(d["index"]) for d in outputs]
        valid_rows = None
        if any(op["name"] == DETECTION_POSTPROCESS for op in meta["ops"]) and len(outputs) == 4:
            valid_rows = int(theirs_all[3].reshape(-1)[0])
        for i, theirs in enumerate(theirs_all):
            ours = _load_npy(step / f"output_{i}.npy")
            if valid_rows is not None and i < 3 and ours.shape == theirs.shape and ours.ndim >= 2:
                ours, theirs = ours[:, :valid_rows], theirs[:, :valid_rows]
            problem = _compare(ours, theirs, rtol, atol)
            if problem:
                result.update(status="mismatch", detail=f"invoke {k} output {i}: {problem}")
                return result
    result.update(status="match")
    return result


def _worker(resolver: str, cases: list[str]) -> None:
    for case in cases:
        try:
            result = replay_case(Path(case), resolver)
        except Exception as error:  # a malformed dump: reported, the batch goes on
            result = {"case": Path(case).name, "status": "harness_error", "detail": repr(error)}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------------------
# The parent: produces the cases (or finds them), replays them in batches.

def _run_batch(cases: list[Path], resolver: str = "BUILTIN_REF") -> tuple[list[dict], bool]:
    proc = subprocess.run([sys.executable, __file__, "--worker", resolver, *map(str, cases)],
                          capture_output=True, text=True)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return results, proc.returncode != 0


def _resolver_for(case: Path) -> str:
    meta = json.loads((case / "meta.json").read_text())
    if f"{meta['suite']}.{meta['test']}" in REFERENCE_KERNEL_WRONG or any(
            op["name"] in REFERENCE_RESOLVER_LACKS_OP for op in meta["ops"]):
        return ABORT_FALLBACK_RESOLVER
    return "BUILTIN_REF"


def replay_all(cases: list[Path]) -> list[dict]:
    by_resolver: dict[str, list[Path]] = {}
    for case in cases:
        by_resolver.setdefault(_resolver_for(case), []).append(case)
    results: list[dict] = []
    for resolver, group in sorted(by_resolver.items()):
        for r in _replay_group(group, resolver):
            r["resolver"] = resolver
            results.append(r)
    return results


def _replay_group(cases: list[Path], resolver: str) -> list[dict]:
    results: list[dict] = []
    pending = list(cases)
    while pending:
        batch = pending[:BATCH_SIZE]
        done, crashed = _run_batch(batch, resolver)
        results.extend(done)
        pending = pending[len(done):]
        if crashed and pending:
            # The worker flushes each result, so the first unreported case is the one
            # it died on; confirm alone, then resume after it.
            suspect = pending.pop(0)
            alone, alone_crashed = _run_batch([suspect], resolver)
            if alone_crashed and not alone:
                # The second opinion: LiteRT's default (optimized) kernels, without XNNPACK.
                fallback, _ = _run_batch([suspect], ABORT_FALLBACK_RESOLVER)
                meta = json.loads((suspect / "meta.json").read_text())
                results.append({"case": suspect.name, "test": f"{meta['suite']}.{meta['test']}",
                                "ops": meta["ops"], "kernels": meta["kernels"],
                                "num_threads": meta["num_threads"], "types": [],
                                "status": "litert_aborts",
                                "detail": "LiteRT's reference kernel killed the process",
                                "fallback": fallback[0] if fallback else {"status": "litert_aborts"}})
            else:
                results.extend(alone)
    return results


def _build_dir() -> Path:
    return Path(os.environ.get("DELEGATO_BUILD_DIR", REPO / "build"))


def _produce_cases(out: Path) -> None:
    binaries = sorted(p for p in _build_dir().glob("*_test") if os.access(p, os.X_OK))
    if not binaries:
        pytest.skip(f"no unit-test binaries in {_build_dir()} (build first, or set DELEGATO_OP_CASES)")
    env = dict(os.environ, DELEGATO_OP_DUMP_DIR=str(out))
    for binary in binaries:
        # Failures of the unit tests themselves are ctest's business; the dumps of the
        # invokes that succeeded are what is compared here.
        subprocess.run([str(binary), "--gtest_brief=1"], env=env, cwd=_build_dir(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def replay_results(tmp_path_factory):
    pytest.importorskip("ai_edge_litert.interpreter")
    given = os.environ.get("DELEGATO_OP_CASES")
    if given:
        root = Path(given)
        if not root.is_dir():
            pytest.fail(f"DELEGATO_OP_CASES={given} is not a directory")
    else:
        root = tmp_path_factory.mktemp("op_cases")
        _produce_cases(root)
    cases = sorted(p for p in root.iterdir() if (p / "meta.json").is_file())
    if not cases:
        pytest.fail(f"no dumped cases in {root}")
    results = replay_all(cases)
    (root / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    for r in results:
        r["_root"] = str(root)
    return results


def _lines(results, status):
    return [f"  {r['case']} ({'+'.join(o['name'] for o in r.get('ops', []))}): {r.get('detail', '')}"
            for r in results if r["status"] == status]


def test_every_case_matches_litert(replay_results):
    bad = [r for r in replay_results if r["status"] in ("mismatch", "harness_error", "not_dumped")]
    summary = {}
    for r in replay_results:
        summary[r["status"]] = summary.get(r["status"], 0) + 1
    print("single-op replay:", summary)
    assert not bad, ("delegato differs from LiteRT (BUILTIN_REF):\n" +
                     "\n".join(_lines(bad, "mismatch") + _lines(bad, "harness_error") +
                               _lines(bad, "not_dumped")))


def test_litert_rejects_only_allowlisted(replay_results):
    rejected = [r for r in replay_results
                if r["status"] == "litert_rejects" and r["test"] not in LITERT_REJECTS_ALLOWED]
    assert not rejected, ("LiteRT refuses models delegato ran (not in LITERT_REJECTS_ALLOWED):\n" +
                          "\n".join(_lines(rejected, "litert_rejects")))


def test_allowlisted_rejects_still_exist(replay_results):
    """An allow-list entry whose test no longer produces a rejected case is stale."""
    rejected = {r["test"] for r in replay_results if r["status"] == "litert_rejects"}
    stale = sorted(set(LITERT_REJECTS_ALLOWED) - rejected)
    assert not stale, f"LITERT_REJECTS_ALLOWED entries LiteRT no longer rejects: {stale}"


def test_litert_aborts_match_default_kernels(replay_results):
    """Where LiteRT's reference kernel kills the process it cannot be the oracle (not a
    delegato failure); the case must then match LiteRT's default kernels instead, or be
    listed in LITERT_ABORTS_KNOWN with the reason."""
    aborted = [r for r in replay_results if r["status"] == "litert_aborts"]
    if aborted:
        print(f"LiteRT's reference kernels abort on {len(aborted)} case(s):\n" +
              "\n".join(f"  {r['case']}: {ABORT_FALLBACK_RESOLVER} "
                        f"{r['fallback']['status']} {r['fallback'].get('detail', '')}"
                        for r in aborted))
    bad = [f"  {r['case']}: {r['fallback']['status']} {r['fallback'].get('detail', '')}"
           for r in aborted
           if r["fallback"]["status"] != "match" and r["test"] not in LITERT_ABORTS_KNOWN]
    assert not bad, (f"LiteRT BUILTIN_REF aborts and delegato does not match "
                     f"{ABORT_FALLBACK_RESOLVER} either:\n" + "\n".join(bad))


def test_every_table_op_has_a_litert_checked_case(replay_results):
    binary = Path(os.environ.get("DELEGATO_BIN", _build_dir() / "delegato"))
    if not binary.exists():
        pytest.skip(f"delegato binary not found at {binary}")
    table = json.loads(subprocess.run([str(binary), "ops", "--format", "json"], check=True,
                                      capture_output=True, text=True).stdout)
    checked = {op["name"] for r in replay_results if r["status"] == "match" for op in r["ops"]}
    # SEGMENT_SUM: LiteRT's reference resolver lacks it and its default kernel refuses
    # constant segment ids, so its unit tests are its only check (docs/ops.md says so).
    unverifiable = {"SEGMENT_SUM"}
    missing = [f"{e['name']} (v{e['min_version']}-{e['max_version']})" for e in table
               if e["name"] not in checked and e["name"] not in unverifiable]
    assert not missing, ("op table entries without a single-op case that matched LiteRT "
                         "(add an OpModel test): " + ", ".join(missing))


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "--worker":
    _worker(sys.argv[2], sys.argv[3:])


@pytest.mark.parametrize("kind", ["integer", "float"])
def test_replay_catches_a_wrong_output(replay_results, tmp_path, kind):
    """The comparison itself: one matched case with one output value changed must fail."""
    import shutil
    root = Path(replay_results[0]["_root"])  # where the cases are
    for r in replay_results:
        case = root / r["case"]
        out = case / "invoke_0" / "output_0.npy"
        if r["status"] != "match" or not out.is_file():
            continue
        value = np.load(out)
        is_float = np.issubdtype(value.dtype, np.floating)
        if value.size == 0 or is_float != (kind == "float") or value.dtype == np.bool_:
            continue
        if is_float and not np.isfinite(value.flat[0]):
            continue
        copy = tmp_path / case.name
        shutil.copytree(case, copy)
        changed = value.copy()
        if is_float:
            changed.flat[0] = changed.flat[0] * (1 + 1e-3) + 1e-3  # beyond rtol 1e-5 / atol 1e-6
        else:
            changed.flat[0] = changed.flat[0] ^ 1
        np.save(copy / "invoke_0" / "output_0.npy", changed)
        assert replay_case(case)["status"] == "match"
        result = replay_case(copy)
        assert result["status"] == "mismatch", result
        assert "output 0" in result["detail"]
        return
    pytest.skip(f"no matched case with a {kind} output")
