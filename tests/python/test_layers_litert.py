"""Layer ops replayed in LiteRT: the unit tests of TRANSPOSE_CONV,
BATCH_MATMUL, the int16x8 convolutions / FULLY_CONNECTED, int16 pooling /
LOGISTIC / TANH / SOFTMAX / elementwise ops, FLOAT16 DEQUANTIZE and hybrid
FULLY_CONNECTED save every case they run (model, inputs, delegato's outputs)
when DELEGATO_LITERT_DUMP is set; each case must give the same outputs in
LiteRT's reference kernels (BUILTIN_REF): integer outputs identical, float
outputs within 1e-5 relative."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("DELEGATO_BUILD_DIR", REPO / "build"))
BINARIES = ["transpose_conv_test", "batch_matmul_test", "int16x8_test", "int16_ops_test",
            "int16_elementwise_test", "hybrid_test"]


@pytest.fixture(scope="module")
def dumped_cases(tmp_path_factory):
    out = tmp_path_factory.mktemp("layers")
    ran = False
    for name in BINARIES:
        binary = BUILD / name
        if not binary.exists():
            continue
        env = dict(os.environ, DELEGATO_LITERT_DUMP=str(out))
        proc = subprocess.run([str(binary)], env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        ran = True
    if not ran:
        pytest.skip(f"none of {BINARIES} built in {BUILD}")
    return out


def test_layer_cases_match_litert(dumped_cases):
    models = sorted(dumped_cases.glob("*.tflite"))
    assert models, "the unit tests dumped no cases"
    failures = []
    for model in models:
        stem = str(model)[: -len(".tflite")]
        interp = interpreter_module.Interpreter(
            model_path=str(model),
            experimental_op_resolver_type=interpreter_module.OpResolverType.BUILTIN_REF)
        interp.allocate_tensors()
        for i, d in enumerate(interp.get_input_details()):
            data = np.fromfile(f"{stem}.in{i}.bin", dtype=d["dtype"]).reshape(d["shape"])
            interp.set_tensor(d["index"], data)
        interp.invoke()
        for i, d in enumerate(interp.get_output_details()):
            expected = interp.get_tensor(d["index"])
            got = np.fromfile(f"{stem}.out{i}.bin", dtype=d["dtype"]).reshape(expected.shape)
            if np.issubdtype(expected.dtype, np.floating):
                ok = np.allclose(got, expected, rtol=1e-5, atol=1e-5)
            else:
                ok = np.array_equal(got, expected)
            if not ok:
                diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
                failures.append(f"{model.name} output {i}: max diff {diff.max()}, "
                                f"{int((diff > 0).sum())} of {diff.size} differ")
    assert not failures, "\n".join(failures)
    print(f"{len(models)} cases match LiteRT BUILTIN_REF")
