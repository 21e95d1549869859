"""`delegato diff` (TFLite's inference_diff) through the CLI: zero error where
delegato is exact, the first diverging node named for a perturbed model, the
CI gate, and clear errors for bad flags and mismatched test graphs."""
import json
import re
import subprocess

import pytest

MOBILENET = "mobilenet_v1_0.25_128_quant.tflite"
# The CNNs of the shared set that the CPU runtime runs (each diff runs the
# reference kernels, so the big ones get few runs).
CNNS = [
    "mobilenet_v1_0.25_128_quant.tflite",
    "mobilenet_v2_1.0_224_quant.tflite",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "person_detect.tflite",
]


def diff(delegato_bin, *args, check=None):
    proc = subprocess.run([delegato_bin, "diff", *args], capture_output=True, text=True, timeout=900)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def diff_json(delegato_bin, *args, check=0):
    return json.loads(diff(delegato_bin, "--format=json", *args, check=check).stdout)


def test_reference_against_itself_is_exact(delegato_bin, shared_models):
    proc = diff(delegato_bin, f"--graph={shared_models / MOBILENET}", "--num_runs=3", "--kernels=reference", check=0)
    out = proc.stdout
    # TFLite's lines, in its format.
    assert "INFO: Num evaluation runs: 3\n" in out
    assert re.search(r"INFO: Reference run latency: avg=[0-9.e+]+\(us\), std_dev=\d+\(us\)\n", out), out
    assert re.search(r"INFO: Test run latency: avg=[0-9.e+]+\(us\), std_dev=\d+\(us\)\n", out), out
    assert "INFO: OutputDiff[0]: avg_error=0, std_dev=0, " in out, out
    assert "max_abs_error=0," in out


def test_demo_model_without_graph(delegato_bin):
    result = diff_json(delegato_bin, "--num_runs=2", "--per_layer")
    assert result["passed"]
    assert all(o["max_abs_error"] == 0 for o in result["outputs"])
    assert result["per_layer"]["first_divergence"] is None
    assert result["per_layer"]["nodes"], "every node's output is listed"


@pytest.mark.parametrize("model", CNNS)
def test_target_and_threads_are_exact_on_shared_cnns(delegato_bin, shared_models, model):
    path = shared_models / model
    if not path.exists():
        pytest.skip(f"{model} not in the shared models")
    result = diff_json(delegato_bin, f"--graph={path}", "--num_runs=2", "--invocations_per_run=1",
                       "--target=nnapi-1.2", "--num_threads=2", "--max_abs_error=0", "--per_layer")
    assert result["passed"]
    for out in result["outputs"]:
        assert out["avg_error"] == 0 and out["max_abs_error"] == 0 and out["differing"] == 0, out
    assert result["per_layer"]["first_divergence"] is None
    compared = [n for n in result["per_layer"]["nodes"] if n["compared"]]
    assert compared, "at least the graph outputs are observable"
    assert all(n["max_abs_error"] == 0 for n in compared)


def test_skipped_node_splits_partitions_and_is_observable(delegato_bin, shared_models):
    result = diff_json(delegato_bin, f"--graph={shared_models / MOBILENET}", "--num_runs=2", "--target=nnapi-1.2",
                       "--skip_nodes=10", "--per_layer")
    nodes = {n["node"]: n for n in result["per_layer"]["nodes"]}
    assert nodes[10]["compared"] and nodes[10]["delegate_partition"] is None  # ran on the CPU
    assert nodes[9]["compared"] and nodes[9]["delegate_partition"] is not None  # a boundary output
    assert not nodes[5]["compared"] and "inside delegate partition" in nodes[5]["note"]
    assert result["per_layer"]["first_divergence"] is None


def perturbed_model(shared_models, tmp_path, node=5):
    """The model with one byte of node `node`'s weights changed (the weight
    bytes are found in the file by their values, read through LiteRT)."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    path = shared_models / MOBILENET
    interpreter = litert.Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    weights_index = int(interpreter._get_ops_details()[node]["inputs"][1])
    weights = interpreter.get_tensor(weights_index).tobytes()
    data = bytearray(path.read_bytes())
    offset = data.find(weights)
    assert offset >= 0 and data.find(weights, offset + 1) < 0, "weights must appear once in the file"
    data[offset + 4] = (data[offset + 4] + 37) % 256
    out = tmp_path / "perturbed.tflite"
    out.write_bytes(bytes(data))
    return out


def test_per_layer_names_the_perturbed_node_first(delegato_bin, shared_models, tmp_path):
    perturbed = perturbed_model(shared_models, tmp_path)
    args = [f"--graph={shared_models / MOBILENET}", f"--test_graph={perturbed}", "--num_runs=3", "--per_layer"]
    result = diff_json(delegato_bin, *args)
    first = result["per_layer"]["first_divergence"]
    assert first is not None and first["node"] == 5 and first["op"] == "DEPTHWISE_CONV_2D", first
    nodes = {n["node"]: n for n in result["per_layer"]["nodes"]}
    assert all(nodes[n]["max_abs_error"] == 0 for n in range(5))
    assert nodes[5]["differing"] > 0
    # The text report says the same.
    text = diff(delegato_bin, *args, check=0).stdout
    assert re.search(r"^5 +DEPTHWISE_CONV_2D .*<- first divergence", text, re.M), text
    assert "First divergence: node 5 (DEPTHWISE_CONV_2D)" in text
    # The CI gate fails on the changed outputs, with its own exit code.
    if any(o["max_abs_error"] > 0 for o in result["outputs"]):
        gate = diff(delegato_bin, *args[:3], "--max_abs_error=0", check=3)
        assert "exceeds --max_abs_error=0" in gate.stderr
        # A loose enough limit passes.
        worst = max(o["max_abs_error"] for o in result["outputs"])
        diff(delegato_bin, *args[:3], f"--max_abs_error={worst}", check=0)


def test_layer_tolerance_hides_small_differences(delegato_bin, shared_models, tmp_path):
    perturbed = perturbed_model(shared_models, tmp_path)
    result = diff_json(delegato_bin, f"--graph={shared_models / MOBILENET}", f"--test_graph={perturbed}",
                       "--num_runs=2", "--per_layer", "--layer_tolerance=255")
    assert result["per_layer"]["first_divergence"] is None


def test_same_seed_same_inputs(delegato_bin, shared_models, tmp_path):
    perturbed = perturbed_model(shared_models, tmp_path)
    args = [f"--graph={shared_models / MOBILENET}", f"--test_graph={perturbed}", "--num_runs=2"]
    a = diff_json(delegato_bin, *args, "--seed=5")
    b = diff_json(delegato_bin, *args, "--seed=5")
    assert a["outputs"] == b["outputs"]
    # TFLite's default engine maps seed 0 to 1: both give inference_diff's own sequence.
    assert diff_json(delegato_bin, *args, "--seed=0")["outputs"] == diff_json(delegato_bin, *args, "--seed=1")["outputs"]


def test_mismatched_test_graph_is_a_clear_error(delegato_bin, shared_models):
    other = shared_models / "person_detect.tflite"
    if not other.exists():
        pytest.skip("person_detect.tflite not in the shared models")
    proc = diff(delegato_bin, f"--graph={shared_models / MOBILENET}", f"--test_graph={other}", "--num_runs=1", check=1)
    assert "--test_graph: input 0" in proc.stderr
    assert "must have the same inputs and outputs" in proc.stderr


@pytest.mark.parametrize("flags, message", [
    (["--kernels=fast"], "--kernels must be"),
    (["--layer_tolerance=1"], "--layer_tolerance needs --per_layer"),
    (["--skip_nodes=3"], "--skip_nodes needs --target"),
    (["--num_runs=0"], "num_runs"),
    (["--format=xml"], "--format must be"),
    (["--max_abs_error=-1"], "--max_abs_error must be >= 0"),
    (["--no_such_flag"], "no_such_flag"),
    (["--graph=x.tflite", "--model_file=y.tflite"], "not both"),
])
def test_bad_flags_are_usage_errors(delegato_bin, flags, message):
    proc = diff(delegato_bin, *flags, check=2)
    assert message in proc.stderr, proc.stderr


def test_missing_model_and_unknown_target_are_errors(delegato_bin, shared_models):
    proc = diff(delegato_bin, "--graph=/nonexistent.tflite", check=1)
    assert "/nonexistent.tflite" in proc.stderr
    proc = diff(delegato_bin, f"--graph={shared_models / MOBILENET}", "--target=no-such-npu", check=1)
    assert "no-such-npu" in proc.stderr
