"""Two interpreters in two threads (invoke releases the GIL) give the
results one interpreter gives alone."""
import pathlib
import threading

import numpy as np
import pytest

pytest.importorskip("delegato._core", reason="delegato._core not built (cmake -DDELEGATO_PYTHON=ON, target _core) nor installed")
from delegato.interpreter import Interpreter, OpResolverType  # noqa: E402

MODEL = pathlib.Path(__file__).resolve().parents[3] / "shared" / "models" / "mobilenet_v1_0.25_128_quant.tflite"


def classify(interp, images):
    details = interp.get_input_details()[0]
    out = interp.get_output_details()[0]["index"]
    results = []
    for image in images:
        interp.set_tensor(details["index"], image)
        interp.invoke()
        results.append(interp.get_tensor(out))
    return results


@pytest.mark.parametrize("resolver", [OpResolverType.BUILTIN_REF, OpResolverType.AUTO])
def test_two_interpreters_two_threads(resolver):
    if not MODEL.exists():
        pytest.skip("shared model missing")
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (1, 128, 128, 3), dtype=np.uint8) for _ in range(4)]
    alone = Interpreter(model_path=str(MODEL), experimental_op_resolver_type=resolver)
    alone.allocate_tensors()
    expected = classify(alone, images)

    interpreters = [Interpreter(model_path=str(MODEL), experimental_op_resolver_type=resolver) for _ in range(2)]
    results = [None, None]

    def work(k):
        interpreters[k].allocate_tensors()
        results[k] = classify(interpreters[k], images)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        assert results[k] is not None, f"thread {k} failed"
        for a, b in zip(results[k], expected):
            assert np.array_equal(a, b)


def test_one_interpreter_shared_by_two_threads_takes_turns():
    # Not a recommended use (each thread should own an interpreter), but it must
    # not crash or compute garbage: calls that touch the interpreter's memory
    # take turns. While one thread is inside a call, the other's invoke or
    # allocate_tensors may see the wrapper's extra reference and raise LiteRT's
    # "reference to internal data" RuntimeError, as LiteRT does.
    if not MODEL.exists():
        pytest.skip("shared model missing")
    interp = Interpreter(model_path=str(MODEL), experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    image = np.full((1, 128, 128, 3), 17, np.uint8)
    expected = classify(interp, [image])[0]
    errors = []

    def work():
        try:
            for _ in range(5):
                interp.set_tensor(interp.get_input_details()[0]["index"], image)
                interp.invoke()
                assert np.array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]), expected)
                interp.allocate_tensors()
        except RuntimeError as e:
            if "reference to internal data" not in str(e):
                errors.append(e)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
