"""Every shared model through `delegato run` and through LiteRT's reference
kernels on the same inputs: integer outputs must be identical, float
outputs equal within rtol 1e-5 / atol 1e-6."""

from __future__ import annotations

import re

import numpy as np
import pytest

import litert_oracle as lo

pytestmark = pytest.mark.conformance

_MODELS = lo.list_models()
_SHARED_MISSING = (f"shared models not found in {lo.models_dir()} "
                   "(set DELEGATO_SHARED_DIR to the folder holding models/ and images/)")

# (seed, delegato threads): the second run also exercises the thread pool.
_RUNS = list(lo.DEFAULT_RUNS)


def _model_params(models):
    if not _MODELS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=_SHARED_MISSING), id="no-shared")]
    return [pytest.param(m, id=m.stem) for m in models]


def _compared_models():
    return [m for m in _MODELS if m.stem != lo.INVOKING_ERROR_MODEL]


def _classifier_models():
    return [m for m in _MODELS if m.stem in lo.IMAGE_CLASSIFIERS]


def _check_ran(run: lo.DelegatoRun, model_stem: str, oracle: lo.Oracle) -> None:
    """Fails on a crash or an error; xfails on an unsupported op (unless
    strict mode, where only the optional models may xfail) and on a file
    LiteRT itself refuses as written."""
    if run.ok:
        return
    detail = f"$ {' '.join(run.command)}\n{run.stderr.strip()}"
    if run.crashed:
        pytest.fail(f"delegato crashed (signal {-run.returncode})\n{detail}")
    if lo.rejected_like_litert(run, oracle):
        pytest.xfail(f"delegato rejects the file as LiteRT does: {run.error_line()}")
    if run.unsupported and (not lo.strict_mode() or model_stem in lo.OPTIONAL_MODELS):
        pytest.xfail(f"delegato does not support it yet: {run.error_line()}")
    pytest.fail(f"delegato run failed (exit {run.returncode})\n{detail}")


def _assert_outputs_match(actual, expected, oracle: lo.Oracle) -> None:
    assert len(actual) == len(expected), (
        f"delegato wrote {len(actual)} outputs, the model has {len(expected)}")
    comparisons = [lo.compare(a, e) for a, e in zip(actual, expected)]
    if not all(c.ok for c in comparisons):
        names = [info.name for info in oracle.outputs]
        pytest.fail("outputs differ from LiteRT reference kernels:\n"
                    + lo.describe_mismatches(comparisons, names))


def _reference(oracle: lo.Oracle, inputs):
    try:
        return oracle.run(inputs)
    except lo.OracleRejectsModel as error:
        pytest.skip(f"LiteRT fails to invoke {oracle.model_path.name}, no oracle: {error}")


@pytest.mark.parametrize("seed,threads", _RUNS, ids=[f"seed{s}-t{t}" for s, t in _RUNS])
@pytest.mark.parametrize("model", _model_params(_compared_models()))
def test_random_inputs_match_reference(model, seed, threads, delegato_bin, oracle_cache):
    oracle = oracle_cache(model)
    inputs = lo.random_inputs(oracle.inputs, seed)
    expected = _reference(oracle, inputs)
    run = lo.run_delegato(model, inputs, binary=delegato_bin,
                          extra_args=["--num_threads", str(threads)])
    _check_ran(run, model.stem, oracle)
    _assert_outputs_match(run.outputs, expected, oracle)


@pytest.mark.parametrize("model", _model_params(_classifier_models()))
def test_classifier_on_image(model, delegato_bin, oracle_cache):
    image = lo.images_dir() / lo.CLASSIFIER_IMAGE
    if not image.is_file():
        pytest.skip(f"image not found: {image}")
    oracle = oracle_cache(model)
    run = lo.run_delegato(model, image=image, binary=delegato_bin)
    _check_ran(run, model.stem, oracle)
    assert len(run.fed_inputs) == len(oracle.inputs), (
        f"--save_inputs wrote {len(run.fed_inputs)} inputs, the model has {len(oracle.inputs)}")
    _assert_outputs_match(run.outputs, _reference(oracle, run.fed_inputs), oracle)

    known = lo.IMAGE_CLASSIFIERS[model.stem]
    if known is not None:
        expected_class, _ = known
        scores = lo.dequantize(run.outputs[0], oracle.outputs[0]).reshape(-1)
        top1 = int(np.argmax(scores))
        assert top1 == expected_class, (
            f"top-1 on {image.name} is {top1} (score {scores[top1]:.3f}), expected "
            f"{expected_class} (score {scores[expected_class]:.3f})")


@pytest.mark.skipif(not any(m.stem == lo.INVOKING_ERROR_MODEL for m in _MODELS),
                    reason=f"{lo.INVOKING_ERROR_MODEL}.tflite: {_SHARED_MISSING}")
def test_unknown_custom_op_is_reported(delegato_bin):
    model = lo.models_dir() / f"{lo.INVOKING_ERROR_MODEL}.tflite"
    run = lo.run_delegato(model, binary=delegato_bin)
    assert not run.crashed, f"delegato crashed (signal {-run.returncode}):\n{run.stderr}"
    assert run.returncode > 0, "delegato accepted a model with an unknown custom op"
    assert lo.INVOKING_ERROR_OP in run.stderr, (
        f"the error does not name the custom op '{lo.INVOKING_ERROR_OP}':\n{run.stderr}")
    node = re.compile(rf"\bnode\s*#?\s*{lo.INVOKING_ERROR_NODE}\b", re.IGNORECASE)
    assert node.search(run.stderr), (
        f"the error does not name node {lo.INVOKING_ERROR_NODE}:\n{run.stderr}")
