"""Every case of the math, comparison and normalization unit tests, replayed in
LiteRT's reference kernels (BUILTIN_REF): the unit tests write each model,
its inputs and delegato's output (DELEGATO_OP_DUMP), and
scripts/compare_op_dumps.py requires identical integer outputs and float
outputs within 1e-5."""
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("ai_edge_litert.interpreter")

REPO = pathlib.Path(__file__).resolve().parents[2]
TESTS = ["math_test", "compare_test", "normalization_test"]


def build_dir():
    binary = os.environ.get("DELEGATO_BIN")
    return pathlib.Path(binary).parent if binary else REPO / "build"


@pytest.mark.parametrize("test", TESTS)
def test_unit_cases_match_litert(test, tmp_path):
    binary = build_dir() / test
    if not binary.exists():
        pytest.skip(f"{binary} not built")
    env = dict(os.environ, DELEGATO_OP_DUMP=str(tmp_path))
    run = subprocess.run([str(binary)], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert any(tmp_path.glob("*.tflite")), "the unit test wrote no cases"
    compare = subprocess.run([sys.executable, str(REPO / "scripts" / "compare_op_dumps.py"),
                              str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert compare.returncode == 0, compare.stdout[-4000:] + compare.stderr[-2000:]
