#!/usr/bin/env python3
"""Replays single-op test cases dumped by a unit test (DELEGATO_OP_DUMP=<dir>:
<name>.tflite, <name>.in0.., <name>.out) in LiteRT's reference kernels
(BUILTIN_REF) and compares: integer outputs must be identical, float outputs
within a relative 1e-5 (absolute 1e-6 near zero).

    mkdir -p /tmp/dump && DELEGATO_OP_DUMP=/tmp/dump build/math_test
    python3 scripts/compare_op_dumps.py /tmp/dump
"""
import pathlib
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType


def op_name(interpreter):
    ops = interpreter._get_ops_details()
    return ops[0]["op_name"] if ops else "?"


def main(directory):
    cases = sorted(pathlib.Path(directory).glob("*.tflite"))
    failures = 0
    summary = {}
    for model in cases:
        base = model.with_suffix("")
        try:
            interpreter = Interpreter(model_path=str(model),
                                      experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
            interpreter.allocate_tensors()
        except Exception as error:  # LiteRT refuses the model
            print(f"{model.name}: LiteRT cannot load: {error}")
            failures += 1
            continue
        for i, detail in enumerate(interpreter.get_input_details()):
            raw = pathlib.Path(f"{base}.in{i}").read_bytes()
            interpreter.set_tensor(detail["index"],
                                   np.frombuffer(raw, dtype=detail["dtype"]).reshape(detail["shape"]))
        interpreter.invoke()
        detail = interpreter.get_output_details()[0]
        expected = interpreter.get_tensor(detail["index"]).reshape(-1)
        ours = np.frombuffer(pathlib.Path(f"{base}.out").read_bytes(), dtype=detail["dtype"])
        name = f"{op_name(interpreter)} {np.dtype(detail['dtype']).name}"
        if np.issubdtype(expected.dtype, np.floating):
            ok = ours.shape == expected.shape and np.allclose(ours, expected, rtol=1e-5, atol=1e-6,
                                                              equal_nan=True)
        else:
            ok = ours.shape == expected.shape and np.array_equal(ours, expected)
        summary.setdefault(name, [0, 0])
        summary[name][0 if ok else 1] += 1
        if not ok:
            failures += 1
            diff = np.nonzero(ours != expected)[0] if ours.shape == expected.shape else []
            print(f"{model.name} ({name}): differs at {len(diff)} elements, first "
                  f"{[(int(i), ours[i].item(), expected[i].item()) for i in diff[:5]]}")
    for name, (good, bad) in sorted(summary.items()):
        print(f"{name:32s} {good} match, {bad} differ")
    print(f"{len(cases)} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
