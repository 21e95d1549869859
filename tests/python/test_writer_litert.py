"""`delegato convert` output is a model LiteRT runs exactly like the original:
for every shared model, the reference kernels (BUILTIN_REF) give identical
outputs on the original and the converted file for the same seeded inputs."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")


def model_names():
    repo = pathlib.Path(__file__).resolve().parents[2]
    models = pathlib.Path(os.environ.get("DELEGATO_SHARED_DIR", repo.parent / "shared")) / "models"
    if not models.is_dir():
        return []
    return sorted(p.name for p in models.glob("*.tflite"))


def make_interpreter(path):
    interpreter = interpreter_module.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=interpreter_module.OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    return interpreter


def random_input(detail, rng):
    dtype = detail["dtype"]
    shape = detail["shape"]
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(dtype)
    if dtype in (np.int32, np.int64):
        return rng.integers(0, 10, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def run(interpreter, inputs):
    for detail, value in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]


@pytest.mark.parametrize("name", model_names() or ["<no shared models>"])
def test_converted_model_runs_identically(name, delegato_bin, shared_models, tmp_path):
    original = shared_models / name
    converted = tmp_path / name
    proc = subprocess.run([delegato_bin, "convert", "--graph", str(original), "-o", str(converted)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr

    try:
        reference = make_interpreter(original)
        inputs_rng = np.random.default_rng(2024)
        inputs = [random_input(d, inputs_rng) for d in reference.get_input_details()]
        expected = run(reference, inputs)
    except (RuntimeError, ValueError) as e:
        pytest.skip(f"LiteRT cannot run {name}: {e}")

    candidate = make_interpreter(converted)
    assert [d["name"] for d in candidate.get_input_details()] == \
        [d["name"] for d in reference.get_input_details()]
    actual = run(candidate, inputs)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype, f"output {i}"
        assert a.shape == e.shape, f"output {i}"
        np.testing.assert_array_equal(a, e, err_msg=f"output {i} of {name}")


def test_convert_rejects_non_model(delegato_bin, tmp_path):
    bogus = tmp_path / "bogus.tflite"
    bogus.write_bytes(b"\x10\x00\x00\x00XXXX" + bytes(64))
    proc = subprocess.run([delegato_bin, "convert", "--graph", str(bogus),
                           "-o", str(tmp_path / "out.tflite")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.startswith("delegato convert: ")
    assert "TFL3" in proc.stderr
    assert not (tmp_path / "out.tflite").exists()


def test_converted_person_detect_loads_in_litert(delegato_bin, shared_models, tmp_path):
    """person_detect's rank-1 biases carry quantized_dimension 3, which LiteRT
    refuses; delegato reads them as axis 0 and writes a file LiteRT loads."""
    original = shared_models / "person_detect.tflite"
    if not original.exists():
        pytest.skip("person_detect.tflite not in the shared models")
    converted = tmp_path / "person_detect.tflite"
    proc = subprocess.run([delegato_bin, "convert", "--graph", str(original), "-o", str(converted)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    interpreter = make_interpreter(converted)
    detail = interpreter.get_input_details()[0]
    outputs = run(interpreter, [np.zeros(detail["shape"], detail["dtype"])])
    assert outputs[0].shape == (1, 2)
