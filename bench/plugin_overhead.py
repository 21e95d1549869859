#!/usr/bin/env python3
"""What delegato's plugin costs inside LiteRT: one model, three ways, in one run.

  LiteRT alone                (its default CPU kernels)
  LiteRT + libdelegato_delegate.so, target cpu (delegato's kernels, LiteRT's graph)
  delegato alone              (build/time_model)

Rounds are interleaved so machine noise hits all three alike; medians and
ratios are printed. Goal from the design: LiteRT + plugin within 5% of
delegato alone (the plugin copies each partition's inputs and outputs).

  python3 bench/plugin_overhead.py MODEL [--threads 1] [--rounds 5] [--runs 20]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter, load_delegate

REPO = pathlib.Path(__file__).resolve().parents[1]


def litert_timer(model, threads, delegates):
    interpreter = Interpreter(model_path=model, num_threads=threads, experimental_delegates=delegates)
    interpreter.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in interpreter.get_input_details():
        if np.issubdtype(d["dtype"], np.integer):
            info = np.iinfo(d["dtype"])
            value = rng.integers(info.min, info.max, size=d["shape"], dtype=d["dtype"])
        else:
            value = rng.uniform(-1, 1, size=d["shape"]).astype(d["dtype"])
        interpreter.set_tensor(d["index"], value)

    def run(n):
        times = []
        for _ in range(n):
            start = time.perf_counter()
            interpreter.invoke()
            times.append((time.perf_counter() - start) * 1e3)
        return times
    run(2)  # warm-up
    return interpreter, run


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--plugin", default=str(REPO / "build" / "libdelegato_delegate.so"))
    parser.add_argument("--time_model", default=str(REPO / "build" / "time_model"))
    args = parser.parse_args()

    keep = []
    _, alone = litert_timer(args.model, args.threads, [])
    delegate = load_delegate(args.plugin, {"target": "cpu", "num_threads": args.threads})
    keep.append(delegate)
    interp, plugged = litert_timer(args.model, args.threads, [delegate])
    delegated = sum(op["op_name"] == "DELEGATE" for op in interp._get_ops_details())
    driver = subprocess.Popen([args.time_model, args.model, "--num_threads", str(args.threads)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    driver.stdout.readline()

    def delegato(n):
        driver.stdin.write(f"run {n}\n")
        driver.stdin.flush()
        return json.loads(driver.stdout.readline())["latencies_ms"]
    delegato(2)

    times = {"litert": [], "litert+plugin": [], "delegato": []}
    for _ in range(args.rounds):
        times["litert"] += alone(args.runs)
        times["litert+plugin"] += plugged(args.runs)
        times["delegato"] += delegato(args.runs)
    driver.stdin.write("quit\n")
    driver.stdin.flush()
    driver.wait()

    median = {k: statistics.median(v) for k, v in times.items()}
    print(f"model: {args.model}  threads: {args.threads}  DELEGATE nodes: {delegated}")
    for k, v in median.items():
        print(f"  {k:14s} median {v:8.3f} ms")
    print(f"  litert+plugin / delegato alone: {median['litert+plugin'] / median['delegato']:.3f}")
    print(f"  litert+plugin / litert alone:   {median['litert+plugin'] / median['litert']:.3f}")


if __name__ == "__main__":
    main()
