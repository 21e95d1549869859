#!/usr/bin/env python3
"""Python call overhead: times a tiny model's set_tensor + invoke + get_tensor
loop in delegato and in LiteRT, in one run, and prints the ratio.

  python3 bench/python_overhead.py [--model M.tflite] [--iterations N]

Runs against the installed delegato, or a build tree's extension with
DELEGATO_EXTENSION_DIR=build/python/delegato PYTHONPATH=python.
Not a test: timings depend on the machine and its load.
"""
import argparse
import pathlib
import time

import numpy as np

from ai_edge_litert import interpreter as litert
from delegato import interpreter as delegato

DEFAULT_MODEL = pathlib.Path(__file__).resolve().parents[2] / "shared" / "models" / "hello_world_float.tflite"


def loop_us(module, model, resolver, iterations, repeats):
    interp = module.Interpreter(model_path=str(model),
                                experimental_op_resolver_type=getattr(module.OpResolverType, resolver))
    interp.allocate_tensors()
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]["index"]
    value = np.zeros(inp["shape"], inp["dtype"])
    index = inp["index"]
    best = float("inf")
    for _ in range(repeats):  # best of several: the least disturbed by other load
        start = time.perf_counter()
        for _ in range(iterations):
            interp.set_tensor(index, value)
            interp.invoke()
            interp.get_tensor(out)
        best = min(best, (time.perf_counter() - start) / iterations * 1e6)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"model: {args.model}, {args.iterations} iterations, best of {args.repeats}")
    for resolver in ("AUTO", "BUILTIN_REF"):
        ours = loop_us(delegato, args.model, resolver, args.iterations, args.repeats)
        theirs = loop_us(litert, args.model, resolver, args.iterations, args.repeats)
        print(f"{resolver:12s} delegato {ours:7.2f} us/iter   LiteRT {theirs:7.2f} us/iter   "
              f"delegato/LiteRT = {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
