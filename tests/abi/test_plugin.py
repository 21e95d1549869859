"""libdelegato_delegate.so inside stock LiteRT: same outputs as LiteRT's
reference kernels, the partitions `delegato plan` reports, and clear errors
for bad use."""
import ctypes
import json
import subprocess

import numpy as np
import pytest

from ai_edge_litert.interpreter import Interpreter, OpResolverType, load_delegate

from conftest import shared_dir

TARGETS = ["cpu", "imx8mp-vx", "nnapi-1.2", "edgetpu"]


def shared_models():
    models = shared_dir() / "models"
    return sorted(models.glob("*.tflite")) if models.is_dir() else []


def make_interpreter(model, delegates=()):
    return Interpreter(model_path=str(model), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                       experimental_delegates=list(delegates))


def random_inputs(interpreter, seed=0):
    rng = np.random.default_rng(seed)
    inputs = []
    for detail in interpreter.get_input_details():
        dtype, shape = detail["dtype"], detail["shape"]
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            inputs.append(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
        else:
            inputs.append(rng.uniform(-1, 1, size=shape).astype(dtype))
    return inputs


def invoke(interpreter, inputs):
    for detail, value in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def delegate_nodes(interpreter):
    return sum(op["op_name"] == "DELEGATE" for op in interpreter._get_ops_details())


_reference_cache = {}


def litert_reference(model):
    """LiteRT alone (reference kernels) on seeded inputs; None when LiteRT cannot run the model."""
    if model not in _reference_cache:
        try:
            interpreter = make_interpreter(model)
            interpreter.allocate_tensors()
            inputs = random_inputs(interpreter)
            _reference_cache[model] = (inputs, invoke(interpreter, inputs))
        except (ValueError, RuntimeError):
            _reference_cache[model] = None
    return _reference_cache[model]


def plan_json(delegato_bin, model, target):
    out = subprocess.run([delegato_bin, "plan", "--graph", str(model), "--target", target, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model", shared_models(), ids=lambda p: p.stem)
def test_same_outputs_and_partitions_as_plan(plugin_path, delegato_bin, tmp_path, model, target):
    reference = litert_reference(model)
    if reference is None:
        pytest.skip(f"LiteRT alone cannot run {model.name}")
    inputs, expected = reference
    report = tmp_path / "report.json"
    delegate = load_delegate(plugin_path, {"target": target, "report": str(report)})
    interpreter = make_interpreter(model, [delegate])
    interpreter.allocate_tensors()
    outputs = invoke(interpreter, inputs)
    for i, (want, got) in enumerate(zip(expected, outputs)):
        assert want.dtype == got.dtype and want.shape == got.shape, f"output {i}"
        if np.issubdtype(want.dtype, np.integer):
            np.testing.assert_array_equal(got, want, err_msg=f"output {i} of {model.name} on {target}")
        else:  # float models: delegato's optimized kernels may round differently
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"output {i}")

    claimed = json.loads(report.read_text())
    assert delegate_nodes(interpreter) == claimed["delegate_kernels"]
    if target == "cpu":
        # delegato as a CPU backend: it claims every node its kernels run.
        assert claimed["nodes_delegated"] == claimed["nodes_total"], claimed["summary"]
        assert delegate_nodes(interpreter) == 1
    else:
        plan = plan_json(delegato_bin, model, target)
        assert delegate_nodes(interpreter) == plan["delegate_kernels"]
        assert [n["placement"] for n in claimed["nodes"]] == [n["placement"] for n in plan["nodes"]]


def small_model():
    path = shared_dir() / "models" / "mobilenet_v1_0.25_128_quant.tflite"
    if not path.exists():
        pytest.skip("shared models not found")
    return path


@pytest.mark.parametrize("options, message", [
    ({"frobnicate": "1"}, "unknown option 'frobnicate'"),
    ({"target": "no-such-npu"}, "option target"),
    ({"target": ""}, "option target: empty"),
    ({"num_threads": "two"}, "option num_threads"),
    ({"num_threads": 2.5}, "option num_threads"),
    ({"num_threads": 0}, "option num_threads"),
    ({"kernels": True}, "option kernels"),
    ({"log": 3}, "option log"),
    ({"never_delegate": "3-1"}, "option never_delegate"),
    ({"cache_dir": "/nonexistent/dir"}, "option cache_dir"),
    ({"report": "/nonexistent/dir/report.json"}, "option report"),
])
def test_bad_options_fail_create_with_a_message(plugin_path, options, message):
    with pytest.raises(ValueError, match="Failed to load delegate") as error:
        load_delegate(plugin_path, options)
    assert message in str(error.value)


def test_option_parsing_creates_no_file(plugin_path, tmp_path):
    # The report is written whole when the delegate is applied, not probed
    # into existence when the options are parsed.
    report = tmp_path / "report.json"
    delegate = load_delegate(plugin_path, {"report": str(report)})
    del delegate
    assert not report.exists()
    with pytest.raises(ValueError, match="option report"):
        load_delegate(plugin_path, {"report": str(tmp_path)})  # a directory


def test_c_entry_points_tolerate_null(plugin_path):
    lib = ctypes.CDLL(plugin_path)
    lib.tflite_plugin_destroy_delegate.argtypes = [ctypes.c_void_p]
    lib.tflite_plugin_destroy_delegate(None)  # must be a no-op
    create = lib.tflite_plugin_create_delegate
    create.restype = ctypes.c_void_p
    create.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                       ctypes.c_void_p]
    keys = (ctypes.c_char_p * 1)(b"bogus")
    values = (ctypes.c_char_p * 1)(b"1")
    assert create(keys, values, 1, None) is None  # no report_error: the message goes to stderr
    delegate = create(None, None, 0, None)
    assert delegate
    lib.tflite_plugin_destroy_delegate(delegate)


def test_options_are_not_modified(plugin_path):
    keys = [b"target", b"never_delegate"]
    values = [b"cpu", b"0,2-3"]
    key_array = (ctypes.c_char_p * 2)(*keys)
    value_array = (ctypes.c_char_p * 2)(*values)
    lib = ctypes.CDLL(plugin_path)
    lib.tflite_plugin_create_delegate.restype = ctypes.c_void_p
    delegate = lib.tflite_plugin_create_delegate(key_array, value_array, ctypes.c_size_t(2), None)
    assert delegate
    assert [key_array[0], key_array[1], value_array[0], value_array[1]] == keys + values
    lib.tflite_plugin_destroy_delegate.argtypes = [ctypes.c_void_p]
    lib.tflite_plugin_destroy_delegate(ctypes.c_void_p(delegate))


def test_one_delegate_several_interpreters(plugin_path):
    models = [small_model(), shared_dir() / "models" / "keras_lstm_mnist_ptq.tflite"]
    delegate = load_delegate(plugin_path, {"target": "cpu", "num_threads": 2})
    interpreters = [make_interpreter(m, [delegate]) for m in models]
    for interpreter in interpreters:
        interpreter.allocate_tensors()
    for round_ in range(2):  # interleaved, twice: state stays per interpreter
        for model, interpreter in zip(models, interpreters):
            inputs, expected = litert_reference(model)
            for want, got in zip(expected, invoke(interpreter, inputs)):
                np.testing.assert_array_equal(got, want)


def test_resize_reruns_the_plan(plugin_path, tmp_path):
    model = shared_dir() / "models" / "hello_world_int8.tflite"
    if not model.exists():
        pytest.skip("shared models not found")
    alone = make_interpreter(model)
    delegate = load_delegate(plugin_path, {"target": "cpu"})
    delegated = make_interpreter(model, [delegate])
    shape = list(alone.get_input_details()[0]["shape"])
    shape[0] = 3
    for interpreter in (alone, delegated):
        interpreter.resize_tensor_input(0, shape)
        interpreter.allocate_tensors()
    inputs = random_inputs(alone, seed=7)
    want = invoke(alone, inputs)
    got = invoke(delegated, inputs)
    assert got[0].shape[0] == 3
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    assert delegate_nodes(delegated) == 1


def test_never_delegate_kernels_and_cache(plugin_path, tmp_path):
    model = small_model()
    inputs, expected = litert_reference(model)
    report = tmp_path / "report.json"
    cache = tmp_path / "cache"
    cache.mkdir()
    for run in range(2):  # the second run loads the packed weights the first stored
        delegate = load_delegate(plugin_path, {"target": "cpu", "never_delegate": "0,5-6", "kernels": "reference",
                                               "cache_dir": str(cache), "report": str(report), "log": "error"})
        interpreter = make_interpreter(model, [delegate])
        interpreter.allocate_tensors()
        for want, got in zip(expected, invoke(interpreter, inputs)):
            np.testing.assert_array_equal(got, want)
        claimed = json.loads(report.read_text())
        cpu_nodes = [n["index"] for n in claimed["nodes"] if n["placement"] == "cpu"]
        assert cpu_nodes == [0, 5, 6]
        assert all(n["reasons"][0]["code"] == "user_excluded" for n in claimed["nodes"] if n["index"] in cpu_nodes)
        assert delegate_nodes(interpreter) == claimed["delegate_kernels"] == 2
