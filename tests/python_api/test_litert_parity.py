"""delegato.interpreter side by side with ai_edge_litert on every shared
model: identical details dicts, bit-exact outputs with BUILTIN_REF."""
import pathlib

import numpy as np
import pytest

ai_edge_litert = pytest.importorskip("ai_edge_litert.interpreter")
pytest.importorskip("delegato._core", reason="delegato._core not built (cmake -DDELEGATO_PYTHON=ON, target _core) nor installed")
from delegato import interpreter as dlg  # noqa: E402

MODELS_DIR = pathlib.Path(__file__).resolve().parents[3] / "shared" / "models"
MODELS = sorted(p.name for p in MODELS_DIR.glob("*.tflite")) if MODELS_DIR.is_dir() else []


def make(module, path, **kwargs):
    return module.Interpreter(model_path=str(path),
                              experimental_op_resolver_type=module.OpResolverType.BUILTIN_REF, **kwargs)


def assert_same_value(a, b, where):
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs LiteRT's {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        assert np.array_equal(a, b), f"{where}: {a} vs LiteRT's {b}"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), f"{where}: keys {sorted(a)} vs LiteRT's {sorted(b)}"
        for k in a:
            assert_same_value(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), f"{where}: {a} vs LiteRT's {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_value(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} vs LiteRT's {b!r}"


def random_inputs(details, seed):
    rng = np.random.default_rng(seed)
    values = []
    for d in details:
        if np.issubdtype(d["dtype"], np.integer):
            info = np.iinfo(d["dtype"])
            values.append(rng.integers(info.min, info.max, size=d["shape"], endpoint=True).astype(d["dtype"]))
        else:
            values.append(rng.standard_normal(d["shape"]).astype(d["dtype"]))
    return values


@pytest.mark.parametrize("model", MODELS)
def test_same_details_and_bit_exact_outputs(model):
    path = MODELS_DIR / model
    try:
        theirs = make(ai_edge_litert, path)
        theirs.allocate_tensors()
    except (ValueError, RuntimeError) as litert_error:
        ours = make(dlg, path)
        try:
            ours.allocate_tensors()
        except type(litert_error):
            return  # both refuse the model with the same exception type
        except (ValueError, RuntimeError) as e:
            pytest.fail(f"LiteRT raises {type(litert_error).__name__}, delegato {type(e).__name__}: {e}")
        pytest.skip(f"LiteRT refuses this model ({type(litert_error).__name__}: {str(litert_error)[:120]}); "
                    "delegato runs it")
    ours = make(dlg, path)
    ours.allocate_tensors()

    assert_same_value(ours.get_input_details(), theirs.get_input_details(), "input_details")
    assert_same_value(ours.get_output_details(), theirs.get_output_details(), "output_details")
    assert_same_value(ours.get_signature_list(), theirs.get_signature_list(), "signature_list")
    # LiteRT also lists the temporary tensors its kernels add after the
    # model's own; the model's tensors must match one for one.
    our_tensors, their_tensors = ours.get_tensor_details(), theirs.get_tensor_details()
    assert len(our_tensors) <= len(their_tensors)
    assert_same_value(our_tensors, their_tensors[:len(our_tensors)], "tensor_details")
    assert [t["index"] for t in our_tensors] == list(range(len(our_tensors)))

    for seed in (0, 1):
        values = random_inputs(theirs.get_input_details(), seed)
        for interp in (ours, theirs):
            for d, v in zip(interp.get_input_details(), values):
                interp.set_tensor(d["index"], v)
            interp.invoke()
        for d_ours, d_theirs in zip(ours.get_output_details(), theirs.get_output_details()):
            a, b = ours.get_tensor(d_ours["index"]), theirs.get_tensor(d_theirs["index"])
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a, b), f"{model} output {d_ours['name']} (seed {seed}) differs from LiteRT"


def test_resize_and_signature_runner_match_litert():
    path = MODELS_DIR / "hello_world_float.tflite"
    if not path.exists():
        pytest.skip("hello_world_float.tflite not in the shared models")
    results = []
    for module in (dlg, ai_edge_litert):
        interp = make(module, path)
        index = interp.get_input_details()[0]["index"]
        interp.resize_tensor_input(index, [4, 1], strict=True)
        interp.allocate_tensors()
        x = np.linspace(0, 6, 4, dtype=np.float32).reshape(4, 1)
        interp.set_tensor(index, x)
        interp.invoke()
        out = interp.get_tensor(interp.get_output_details()[0]["index"])
        runner = interp.get_signature_runner()
        by_signature = runner(dense_input=np.ones((3, 1), np.float32))
        results.append((interp.get_input_details(), out, by_signature,
                        runner.get_input_details(), runner.get_output_details()))
    assert_same_value(results[0], results[1], "resize/signature")


def test_tensor_view_is_zero_copy_and_guards_memory():
    path = MODELS_DIR / "hello_world_int8.tflite"
    if not path.exists():
        pytest.skip("hello_world_int8.tflite not in the shared models")
    interp = make(dlg, path)
    interp.allocate_tensors()
    index = interp.get_input_details()[0]["index"]
    view_fn = interp.tensor(index)
    view = view_fn()
    assert not view.flags["OWNDATA"] and view.flags["WRITEABLE"]
    view[...] = 7
    assert interp.get_tensor(index).ravel().tolist() == [7]
    with pytest.raises(RuntimeError, match="reference to internal data"):
        interp.invoke()
    del view
    interp.invoke()
    copy = interp.get_tensor(index)
    assert copy.flags["OWNDATA"]
