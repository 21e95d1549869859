"""The CLI's contract with users: exit codes, clear errors on bad input
(naming file, node, op, tensor), never a crash (a negative return code)."""
import os
import subprocess

import numpy as np
import pytest


def run(delegato_bin, *args, timeout=120):
    proc = subprocess.run([delegato_bin, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    return proc


def test_no_command_is_usage_error(delegato_bin):
    proc = run(delegato_bin)
    assert proc.returncode == 2
    assert "usage" in proc.stderr


def test_unknown_flag_lists_valid_flags(delegato_bin):
    proc = run(delegato_bin, "run", "--grpah=x.tflite")
    assert proc.returncode == 2
    assert "unknown flag '--grpah=x.tflite'" in proc.stderr
    assert "--graph" in proc.stderr


def test_bad_flag_value(delegato_bin):
    proc = run(delegato_bin, "run", "--num_threads=two")
    assert proc.returncode == 2
    assert "--num_threads" in proc.stderr


def test_missing_model_file(delegato_bin, tmp_path):
    missing = tmp_path / "nope.tflite"
    proc = run(delegato_bin, "run", f"--graph={missing}")
    assert proc.returncode == 1
    assert str(missing) in proc.stderr


def test_random_bytes_are_rejected(delegato_bin, tmp_path):
    path = tmp_path / "random.tflite"
    path.write_bytes(np.random.default_rng(1).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    proc = run(delegato_bin, "inspect", str(path))
    assert proc.returncode == 1
    assert str(path) in proc.stderr


def test_demo_model_runs(delegato_bin, tmp_path):
    proc = run(delegato_bin, "run", "--output_dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = np.load(tmp_path / "output_0.npy")
    assert out.dtype == np.uint8 and out.shape == (1, 10)
    # Softmax probabilities in 1/256 steps sum to about 1.
    assert abs(out.astype(np.int64).sum() - 256) <= 10


def test_generate_then_inspect(delegato_bin, tmp_path):
    path = tmp_path / "demo.tflite"
    assert run(delegato_bin, "generate", "-o", str(path)).returncode == 0
    proc = run(delegato_bin, "inspect", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "CONV_2D v1: 2" in proc.stdout
    assert "arena:" in proc.stdout


def test_truncated_real_model(delegato_bin, shared_models, tmp_path):
    data = (shared_models / "mobilenet_v1_0.25_128_quant.tflite").read_bytes()
    # Cuts inside the structure or the weights (the last bytes may be padding
    # no table refers to, so a file one byte short can still be valid).
    for cut in (3, 100, len(data) // 2, len(data) * 3 // 4):
        path = tmp_path / f"cut{cut}.tflite"
        path.write_bytes(data[:cut])
        proc = run(delegato_bin, "run", f"--graph={path}")
        assert proc.returncode == 1, f"cut at {cut}: {proc.stdout}"
        assert str(path) in proc.stderr


def test_unknown_custom_op_names_node(delegato_bin, shared_models):
    proc = run(delegato_bin, "run", f"--graph={shared_models / 'model_invoking_error.tflite'}")
    assert proc.returncode == 1
    assert "fake-op-double" in proc.stderr
    assert "node 0" in proc.stderr


def test_npy_with_wrong_dtype(delegato_bin, tmp_path):
    path = tmp_path / "in.npy"
    np.save(path, np.zeros((1, 32, 32, 3), np.float32))
    proc = run(delegato_bin, "run", "--input", f"0={path}")
    assert proc.returncode == 1
    assert "dtype mismatch" in proc.stderr
    assert "holds FLOAT32" in proc.stderr and 'input 0 ("input") is UINT8' in proc.stderr


def test_npy_with_wrong_shape(delegato_bin, tmp_path):
    path = tmp_path / "in.npy"
    np.save(path, np.zeros((1, 32, 3), np.uint8))
    proc = run(delegato_bin, "run", "--input", f"input={path}")
    assert proc.returncode == 1
    assert "shape" in proc.stderr


def test_corrupt_npy(delegato_bin, tmp_path):
    path = tmp_path / "in.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr'")
    proc = run(delegato_bin, "run", "--input", f"0={path}")
    assert proc.returncode == 1
    assert str(path) in proc.stderr


def test_unknown_input_name(delegato_bin, tmp_path):
    path = tmp_path / "in.npy"
    np.save(path, np.zeros((1, 32, 32, 3), np.uint8))
    proc = run(delegato_bin, "run", "--input", f"image={path}")
    assert proc.returncode == 1
    assert 'no such input' in proc.stderr and '"input"' in proc.stderr


def test_npy_input_round_trips(delegato_bin, tmp_path):
    x = np.random.default_rng(3).integers(0, 256, (1, 32, 32, 3), dtype=np.uint8)
    np.save(tmp_path / "x.npy", x)
    proc = run(delegato_bin, "run", "--input", f"0={tmp_path / 'x.npy'}", "--output_dir",
               str(tmp_path / "o"), "--save_inputs")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "input_0.npy"), x)


def test_threads_do_not_change_results(delegato_bin, tmp_path):
    outs = []
    for threads in (1, 2):
        d = tmp_path / f"t{threads}"
        proc = run(delegato_bin, "run", "--seed=5", f"--num_threads={threads}", "--output_dir", str(d))
        assert proc.returncode == 0, proc.stderr
        outs.append(np.load(d / "output_0.npy"))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_resize_then_npy_of_the_new_batch(delegato_bin, shared_models, tmp_path):
    """A batch of 4 through a batch-1 model with --resize: the result equals
    LiteRT's reference kernels on the same resized model."""
    ai_edge_litert = pytest.importorskip("ai_edge_litert.interpreter")
    model = shared_models / "hello_world_float.tflite"
    x = np.linspace(0, 6.28, 4, dtype=np.float32).reshape(4, 1)
    np.save(tmp_path / "x.npy", x)
    # The reference kernels: the float32 fast path sums in another order.
    proc = run(delegato_bin, "run", f"--graph={model}", "--resize", "0=4,1", "--input",
               f"0={tmp_path / 'x.npy'}", "--output_dir", str(tmp_path), "--kernels", "reference")
    assert proc.returncode == 0, proc.stderr
    ours = np.load(tmp_path / "output_0.npy")
    it = ai_edge_litert.Interpreter(model_path=str(model),
                                    experimental_op_resolver_type=ai_edge_litert.OpResolverType.BUILTIN_REF)
    it.resize_tensor_input(0, [4, 1])
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    np.testing.assert_array_equal(ours, it.get_tensor(it.get_output_details()[0]["index"]))


def test_npy_of_another_shape_names_both_shapes_and_the_resize(delegato_bin, shared_models, tmp_path):
    """Like LiteRT's set_tensor "Dimension mismatch": no silent resize."""
    model = shared_models / "hello_world_float.tflite"
    np.save(tmp_path / "x.npy", np.zeros((4, 1), np.float32))
    proc = run(delegato_bin, "run", f"--graph={model}", "--input", f"0={tmp_path / 'x.npy'}")
    assert proc.returncode == 1
    assert "dimension mismatch" in proc.stderr
    assert "holds shape [4,1]" in proc.stderr and "has shape [1,1]" in proc.stderr
    assert "--resize 0=4,1" in proc.stderr


def test_npy_of_another_rank_names_both_shapes(delegato_bin, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((32, 32, 3), np.uint8))
    proc = run(delegato_bin, "run", "--input", f"input={tmp_path / 'x.npy'}")
    assert proc.returncode == 1
    assert "holds shape [32,32,3]" in proc.stderr and "has shape [1,32,32,3]" in proc.stderr


def test_resize_that_breaks_a_later_node_names_the_node(delegato_bin, tmp_path):
    # The demo model's FULLY_CONNECTED weights fit a 32x32 image only.
    proc = run(delegato_bin, "run", "--resize", "input=1,16,16,3")
    assert proc.returncode == 1
    assert "node " in proc.stderr
    assert 'after --resize of input 0 ("input") from [1,32,32,3] to [1,16,16,3]' in proc.stderr


@pytest.mark.parametrize("spec, expected", [
    ("input=1,32,32", "has rank 4"),
    ("input=1,-2,32,3", "'-2' is not a dimension"),
    ("input", "IDX_OR_NAME=D1,D2"),
    ("nope=1,2,3,4", "no such input"),
])
def test_bad_resize(delegato_bin, spec, expected):
    proc = run(delegato_bin, "run", "--resize", spec)
    assert proc.returncode in (1, 2)
    assert expected in proc.stderr


def _limit_address_space(megabytes):
    import resource

    def apply():
        limit = megabytes << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


@pytest.mark.parametrize("extra, expected", [
    ([], "cell state"),
    (["--max_memory_mb=64"], "memory budget of 67108864 bytes"),
])
def test_hostile_lstm_state_refused_within_256mb(delegato_bin, shared_models, extra, expected):
    """A 14 KB model whose LSTM cell state declares 771,751,956 elements is
    refused with a clear message under a 256 MiB address-space limit."""
    model = shared_models / "hostile" / "keras_lstm_cell_state_771M_elements.tflite"
    if not model.exists():
        pytest.skip(f"{model} not found")
    proc = subprocess.run([delegato_bin, "run", f"--graph={model}", *extra], capture_output=True,
                          text=True, timeout=120, preexec_fn=_limit_address_space(256))
    assert proc.returncode == 1, proc.stderr
    assert expected in proc.stderr
    assert "771751956" in proc.stderr
    assert "bad_alloc" not in proc.stderr


def test_max_memory_mb_refuses_what_does_not_fit(delegato_bin):
    proc = run(delegato_bin, "run", "--max_memory_mb=1", "--resize", "input=1,1024,1024,3")
    assert proc.returncode == 1
    assert 'input 0 (tensor 0 "input") UINT8 [1,1024,1024,3] needs 3145728 bytes' in proc.stderr
    assert "--max_memory_mb" in proc.stderr
    proc = run(delegato_bin, "inspect", "--max_memory_mb=0")
    assert proc.returncode == 2 and "--max_memory_mb" in proc.stderr


def test_ops_lists_the_op_table(delegato_bin):
    import json
    import pathlib
    proc = run(delegato_bin, "ops", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    table = json.loads(proc.stdout)
    by_name = {entry["name"]: entry for entry in table}
    assert by_name["CONV_2D"]["kind"] == "builtin"
    assert by_name["TFLite_Detection_PostProcess"]["kind"] == "custom"
    for entry in table:
        assert 1 <= entry["min_version"] <= entry["max_version"], entry
    # One entry per line of the table (src/ops/op_list.inc).
    op_list = pathlib.Path(__file__).resolve().parents[2] / "src" / "ops" / "op_list.inc"
    lines = [l for l in op_list.read_text().splitlines() if l.startswith(("DLG_BUILTIN(", "DLG_CUSTOM("))]
    assert len(table) == len(lines)
    text = run(delegato_bin, "ops")
    assert text.returncode == 0 and "CONV_2D\tbuiltin\tv" in text.stdout
    bad = run(delegato_bin, "ops", "--format", "yaml")
    assert bad.returncode == 2 and "--format" in bad.stderr


def test_output_dir_that_cannot_be_created(delegato_bin, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = run(delegato_bin, "run", "--output_dir", str(blocker / "out"))
    assert proc.returncode == 1
    assert f"--output_dir {blocker / 'out'}: cannot create the directory" in proc.stderr
    proc = run(delegato_bin, "run", "--output_dir", str(blocker))
    assert proc.returncode == 1
    assert f"--output_dir {blocker}: cannot create the directory" in proc.stderr


def test_outputs_leave_no_temporary_files(delegato_bin, tmp_path):
    proc = run(delegato_bin, "run", "--output_dir", str(tmp_path / "o"), "--save_inputs")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["input_0.npy", "output_0.npy"]
