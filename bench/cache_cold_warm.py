#!/usr/bin/env python3
"""Cold vs warm start with the compilation cache (--delegate_serialize_dir).

For each model and each configuration (`cpu`: the optimized CPU path alone;
a target id: `--target=T`), runs `delegato bench` several times with an
empty cache directory (cold: every run a miss, which packs the weights and
writes the entry) and with a filled one (warm: every run a hit), interleaved,
and prints the medians of benchmark_model's "Init" and "First inference",
the warm/cold ratios of Init alone and of Init + first inference (the start
a user waits for), and where Init's time goes (`bench`'s "init_phases"):

  load      reading and checking the .tflite file
  create    Interpreter::Create
  lookup    the cache's lookup: the model's fingerprint, reading and checking
            the entry (payload CRC), decoding it
  prepare   every node's Prepare (AllocateTensors / ModifyGraphWithDelegate),
            of which
    weights   the optimized kernels building their packed weights: from the
              entry (warm) or by packing (cold)
  arena     planning and allocating the activation arena
  commit    checking the hit, or writing the entry
  first     the first Invoke

A report, not a timed test: the numbers depend on the machine and its load.
Medians of each phase need not add up to the median total.

usage: bench/cache_cold_warm.py [--delegato build/delegato] [--configs cpu,nnapi-1.2]
                                [--repeats 5] [--models a.tflite,name,...] [--zoo]
                                [--json out.json]
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
ZOO = pathlib.Path(os.environ.get("DELEGATO_ZOO_DIR", pathlib.Path.home() / ".cache" / "delegato" / "zoo" / "v1"))
CNNS = [
    "deeplabv3_mnv2_dm05_pascal_quant.tflite",
    "mobilenet_v1_0.25_128_quant.tflite",
    "mobilenet_v2_1.0_224_quant.tflite",
    "tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "mobilenet_v2_quantized_1x3x224x224.tflite",
    "person_detect.tflite",
    "movenet_single_pose_lightning_ptq.tflite",
]
# --zoo: the converter-made CNNs (scripts/make_zoo.py), int8 and float32.
ZOO_MODELS = [f"{net}_{variant}.tflite" for net in ("mobilenet_v2", "mobilenet_v3_small", "resnet_small",
                                                   "densenet_small") for variant in ("int8", "float32")]
PHASES = [("load", "load_us"), ("create", "create_us"), ("lookup", "cache_lookup_us"),
          ("prepare", "prepare_us"), ("weights", None), ("arena", "arena_us"), ("commit", "cache_commit_us")]


def model_path(name):
    path = pathlib.Path(name)
    if path.is_absolute() or path.exists():
        return path
    for directory in (SHARED, ZOO):
        if (directory / name).exists():
            return directory / name
    return SHARED / name


def bench_once(delegato, model, target, cache_dir):
    cmd = [delegato, "bench", f"--graph={model}", "--num_runs=1", "--min_secs=0",
           "--warmup_runs=1", "--warmup_min_secs=0", f"--delegate_serialize_dir={cache_dir}", "--format=json"]
    if target != "cpu":
        cmd.append(f"--target={target}")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}")
    result = json.loads(proc.stdout)
    phases = dict(result.get("init_phases") or {})
    phases["weights_us"] = phases.get("weights_loaded_us", 0) + phases.get("weights_packed_us", 0)
    phases["first_us"] = result["first_inference_us"]
    status = (result.get("cache") or "").split(" ")[1:2]
    return {"init": result["init_us"], "first": result["first_inference_us"], "phases": phases,
            "peak_rss_mb": result["memory"]["peak_vmhwm_mb"]}, status


def measure(delegato, model, target, repeats):
    cold_dir = pathlib.Path(tempfile.mkdtemp(prefix="delegato_cold_"))
    warm_dir = pathlib.Path(tempfile.mkdtemp(prefix="delegato_warm_"))
    try:
        _, status = bench_once(delegato, model, target, warm_dir)  # fills the warm cache
        if status != ["miss"]:
            raise RuntimeError(f"filling the cache: {status}")
        cold, warm = [], []
        for _ in range(repeats):  # interleaved, so load changes hit both alike
            shutil.rmtree(cold_dir)
            cold_dir.mkdir()
            run, status = bench_once(delegato, model, target, cold_dir)
            assert status == ["miss"], status
            cold.append(run)
            run, status = bench_once(delegato, model, target, warm_dir)
            assert status == ["hit"], status
            warm.append(run)
        return cold, warm
    finally:
        shutil.rmtree(cold_dir, ignore_errors=True)
        shutil.rmtree(warm_dir, ignore_errors=True)


def median_ms(runs, key):
    return statistics.median(key(r) for r in runs) / 1000


def phase_ms(runs, key):
    return median_ms(runs, lambda r: r["phases"].get("weights_us" if key is None else key, 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delegato", default=os.environ.get("DELEGATO_BIN", str(REPO / "build" / "delegato")))
    parser.add_argument("--configs", default="cpu", help="'cpu' and/or target ids, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default=",".join(CNNS), help="file names (shared or zoo directory) or paths")
    parser.add_argument("--zoo", action="store_true", help="also the zoo's CNNs (int8 and float32)")
    parser.add_argument("--json", help="write every run's figures here")
    args = parser.parse_args()

    names = args.models.split(",") + (ZOO_MODELS if args.zoo else [])
    raw = []
    for target in args.configs.split(","):
        print(f"\n{target}: {args.repeats} cold and {args.repeats} warm runs per model, medians in ms")
        print(f"{'model':42} {'cold init':>9} {'warm init':>9} {'cold 1st':>9} {'warm 1st':>9} "
              f"{'cold tot':>9} {'warm tot':>9} {'w/c init':>8} {'w/c tot':>8} {'peak MB c/w':>12}")
        breakdown = []
        for name in names:
            model = model_path(name)
            if not model.exists():
                print(f"{name:42} (not found)")
                continue
            try:
                cold, warm = measure(args.delegato, model, target, args.repeats)
            except (RuntimeError, AssertionError, subprocess.TimeoutExpired) as e:
                print(f"{name:42} skipped: {e}")
                continue
            raw.append({"config": target, "model": name, "cold": cold, "warm": warm})
            cold_init, warm_init = median_ms(cold, lambda r: r["init"]), median_ms(warm, lambda r: r["init"])
            cold_total = median_ms(cold, lambda r: r["init"] + r["first"])
            warm_total = median_ms(warm, lambda r: r["init"] + r["first"])
            peak = lambda runs: statistics.median(r["peak_rss_mb"] for r in runs)
            print(f"{name:42} {cold_init:9.2f} {warm_init:9.2f} {median_ms(cold, lambda r: r['first']):9.2f} "
                  f"{median_ms(warm, lambda r: r['first']):9.2f} {cold_total:9.2f} {warm_total:9.2f} "
                  f"{warm_init / cold_init:8.2f} {warm_total / cold_total:8.2f} "
                  f"{peak(cold):5.1f}/{peak(warm):5.1f}")
            breakdown.append((name, cold, warm))
        print(f"\n{target}: where the start goes (medians in ms; weights is part of prepare)")
        print(f"{'model':42} {'':4} " + " ".join(f"{label:>7}" for label, _ in PHASES) + f" {'first':>7}")
        for name, cold, warm in breakdown:
            for label, runs in (("cold", cold), ("warm", warm)):
                cells = " ".join(f"{phase_ms(runs, key):7.2f}" for _, key in PHASES)
                print(f"{name if label == 'cold' else '':42} {label:4} {cells} {phase_ms(runs, 'first_us'):7.2f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
