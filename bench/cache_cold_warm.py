#!/usr/bin/env python3
"""Cold vs warm start with the compilation cache (--delegate_serialize_dir).

For each shared CNN and each configuration (`cpu`: the optimized CPU path
alone; a target id: `--target=T`), runs `delegato bench` several times with
an empty cache directory (cold: every run a miss) and with a filled one
(warm: every run a hit), and prints the medians of benchmark_model's "Init"
and "First inference" and their ratio. A report, not a timed test: the
numbers depend on the machine and its load.

A hit loads the optimized kernels' packed weights instead of packing them
(CONV_2D and FULLY_CONNECTED through the GEMM kernel), and with a target
skips the target's rule evaluation; arena planning and the other kernels'
Prepare still run.

usage: bench/cache_cold_warm.py [--delegato build/delegato] [--configs cpu,nnapi-1.2]
                                [--repeats 5] [--models a.tflite,b.tflite]
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("DELEGATO_SHARED_DIR", REPO.parent / "shared")) / "models"
CNNS = [
    "mobilenet_v1_0.25_128_quant.tflite",
    "mobilenet_v2_1.0_224_quant.tflite",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "mobilenet_v2_quantized_1x3x224x224.tflite",
    "person_detect.tflite",
    "deeplabv3_mnv2_dm05_pascal_quant.tflite",
]


def bench_once(delegato, model, target, cache_dir):
    cmd = [delegato, "bench", f"--graph={model}", "--num_runs=1", "--min_secs=0",
           "--warmup_runs=1", "--warmup_min_secs=0", f"--delegate_serialize_dir={cache_dir}", "--format=json"]
    if target != "cpu":
        cmd.append(f"--target={target}")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}")
    result = json.loads(proc.stdout)
    return result["init_us"], result["first_inference_us"], (result.get("cache") or "").split(" ")[1:2]


def measure(delegato, model, target, repeats):
    cold_dir = pathlib.Path(tempfile.mkdtemp(prefix="delegato_cold_"))
    warm_dir = pathlib.Path(tempfile.mkdtemp(prefix="delegato_warm_"))
    try:
        bench_once(delegato, model, target, warm_dir)  # fills the warm cache
        cold, warm = [], []
        for _ in range(repeats):  # interleaved, so load changes hit both alike
            shutil.rmtree(cold_dir)
            cold_dir.mkdir()
            init, first, status = bench_once(delegato, model, target, cold_dir)
            assert status == ["miss"], status
            cold.append((init, first))
            init, first, status = bench_once(delegato, model, target, warm_dir)
            assert status == ["hit"], status
            warm.append((init, first))
        return cold, warm
    finally:
        shutil.rmtree(cold_dir, ignore_errors=True)
        shutil.rmtree(warm_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delegato", default=os.environ.get("DELEGATO_BIN", str(REPO / "build" / "delegato")))
    parser.add_argument("--configs", default="cpu,nnapi-1.2", help="'cpu' and/or target ids")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default=",".join(CNNS))
    args = parser.parse_args()

    for target in args.configs.split(","):
        print(f"\n{target}: {args.repeats} cold and {args.repeats} warm runs per model, medians in ms")
        print(f"{'model':45} {'cold init':>10} {'warm init':>10} {'cold 1st':>10} {'warm 1st':>10} "
              f"{'cold total':>11} {'warm total':>11} {'warm/cold':>10}")
        for name in args.models.split(","):
            model = SHARED / name
            if not model.exists():
                print(f"{name:45} (not found)")
                continue
            try:
                cold, warm = measure(args.delegato, model, target, args.repeats)
            except (RuntimeError, AssertionError, subprocess.TimeoutExpired) as e:
                print(f"{name:45} skipped: {e}")
                continue
            med = lambda rows, i: statistics.median(r[i] for r in rows) / 1000
            cold_total = statistics.median(a + b for a, b in cold) / 1000
            warm_total = statistics.median(a + b for a, b in warm) / 1000
            print(f"{name:45} {med(cold, 0):10.2f} {med(warm, 0):10.2f} {med(cold, 1):10.2f} {med(warm, 1):10.2f} "
                  f"{cold_total:11.2f} {warm_total:11.2f} {warm_total / cold_total:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
