"""delegato.plan / bench / diff / fix and Interpreter(target=...): the same
answers as the CLI (they run its code in-process)."""
import json
import os
import pathlib

import numpy as np
import pytest

pytest.importorskip("delegato._core", reason="delegato._core not built (cmake -DDELEGATO_PYTHON=ON, target _core) nor installed")
import delegato  # noqa: E402
from delegato.interpreter import Interpreter, OpResolverType, load_delegate  # noqa: E402

MODELS = pathlib.Path(__file__).resolve().parents[3] / "shared" / "models"
MOBILENET = MODELS / "mobilenet_v1_0.25_128_quant.tflite"
PLUGIN = pathlib.Path(os.environ.get("DELEGATO_PLUGIN",
                                     pathlib.Path(__file__).resolve().parents[2] / "build" / "libdelegato_delegate.so"))


@pytest.fixture(scope="module")
def plugin():
    if not PLUGIN.exists():
        pytest.skip(f"plugin not found at {PLUGIN} (build target delegato_delegate or set DELEGATO_PLUGIN)")
    return str(PLUGIN)


@pytest.fixture(scope="module")
def mobilenet():
    if not MOBILENET.exists():
        pytest.skip("shared model missing")
    return MOBILENET


def test_plan_object(mobilenet):
    plan = delegato.plan(mobilenet, "nnapi-1.2")
    assert plan.target == "nnapi-1.2"
    assert len(plan.nodes) == plan.data["nodes_total"] == 31
    for node in plan.nodes:
        assert {"index", "op", "placement", "reason", "fix"} <= node.keys()
        if node["placement"] == "cpu":
            assert node["reason"], f"node {node['index']} on the CPU without a reason"
    assert sorted(plan.delegated_nodes + plan.cpu_nodes) == list(range(31))
    assert sorted(i for p in plan.partitions for i in p["nodes"]) == list(range(31))
    assert plan.estimate["kind"].startswith("cost model estimate")
    assert set(plan.alternatives) == {"greedy", "cost", "cpu_only"}
    assert plan.alternatives["cost"]["total_us"] <= plan.alternatives["greedy"]["total_us"] + 1e-6
    assert plan.recommendation["choice"] in ("greedy", "cost", "cpu_only", "fix")
    assert json.loads(plan.to_json()) == plan.data
    assert plan.to_html().startswith("<!DOCTYPE html>") and plan._repr_html_() == plan.to_html()
    assert "nnapi-1.2" in repr(plan)


def test_plan_errors(mobilenet):
    with pytest.raises(delegato.CommandError, match="target"):
        delegato.plan(mobilenet, "no-such-target")
    with pytest.raises(ValueError):
        delegato.plan("/nonexistent.tflite", "nnapi-1.2")
    assert "imx8mp-vx" in delegato.list_targets()


def test_bench_dict(mobilenet):
    result = delegato.bench(mobilenet, num_runs=2, min_secs=0, warmup_runs=1, warmup_min_secs=0,
                            enable_op_profiling=True)
    assert result["inference"]["count"] >= 2
    assert result["profile"]["runs"]["nodes"]


def test_diff_dict(mobilenet):
    report = delegato.diff(mobilenet, num_runs=2, invocations_per_run=1, target="nnapi-1.2",
                           max_abs_error=0, per_layer=True)
    assert report["passed"] and report["exit_code"] == 0
    assert all(o["max_abs_error"] == 0 for o in report["outputs"])
    assert report["per_layer"]["first_divergence"] is None


def test_fix_dry_run(mobilenet):
    data, report = delegato.fix(mobilenet, "nnapi-1.2", dry_run=True, runs=1)
    assert data is None
    assert report["exit_code"] == 0 and isinstance(report, dict)


def test_interpreter_on_emulated_target_matches_cpu(mobilenet, plugin):
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (1, 128, 128, 3), dtype=np.uint8)
    outputs = []
    for kwargs in ({}, {"target": "imx8mp-vx"},
                   {"experimental_delegates": [load_delegate(plugin, {"target": "imx8mp-vx"})]}):
        interp = Interpreter(model_path=str(mobilenet), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                             **kwargs)
        interp.allocate_tensors()
        interp.set_tensor(interp.get_input_details()[0]["index"], image)
        interp.invoke()
        outputs.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
        if kwargs:
            assert any("delegated out of" in line for line in interp.delegation_log())
    assert np.array_equal(outputs[0], outputs[1]) and np.array_equal(outputs[0], outputs[2])


def test_bad_target_and_delegate_options(mobilenet, plugin):
    with pytest.raises(ValueError):
        Interpreter(model_path=str(mobilenet), target="no-such-target")
    with pytest.raises(ValueError, match="Failed to load delegate"):
        load_delegate(plugin, {"target": "no-such-target"})
    with pytest.raises(ValueError, match="speed"):
        load_delegate(plugin, {"target": "imx8mp-vx", "speed": "max"})


def test_fix_returns_a_model_that_loads(mobilenet):
    data, report = delegato.fix(mobilenet, "edgetpu", runs=1)
    assert report["exit_code"] == 0 and report["target"] == "edgetpu"
    assert isinstance(data, bytes) and data[4:8] == b"TFL3"
    interp = Interpreter(model_content=data)
    interp.allocate_tensors()
    interp.invoke()
