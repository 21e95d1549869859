#!/usr/bin/env python3
"""Fits the cost-model constants that have a calibration source, and writes
docs/cost_model.md with the fit and its errors.

    scripts/calibrate_cost.py seed000 [--delegato build/delegato] [--shared ../shared]
        imx8mp-nnapi's driver_fallback.slowdown: the one number that makes the
        greedy split of tf2_mobilenet_v2_1.0_224_ptq cost 355.5 / 187.5 times the
        CPU-only estimate (seed 000's measured ratio on its int8 model).
    scripts/calibrate_cost.py vela [--write-targets] [--out docs/cost_model.md]
        Ethos-U op-class throughputs fitted to Vela's per-layer cycle estimates
        on the fitting models; the estimate vs Vela's summary `inference_time`
        on held-out models reported separately.

Prints the fitted numbers; --write-targets puts them in targets/*.json.
"""
import argparse
import csv
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
SEED000_RATIO = 355.5 / 187.5  # seed 000: NNAPI split vs CPU with 4 threads, int8 model on the i.MX 8M Plus


def plan_json(delegato, model, target, targets_dir=None, extra=()):
    env = dict(os.environ)
    if targets_dir:
        env["DELEGATO_TARGETS_DIR"] = str(targets_dir)
    out = subprocess.run([delegato, "plan", "--graph", str(model), "--target", target, "--format", "json", *extra],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def with_value(text, key_regex, value):
    """`text` with the first "value" after the key matched by key_regex replaced."""
    m = re.search(key_regex + r'.*?"value": ([-0-9.e+]+)', text, re.S)
    if not m:
        raise SystemExit(f"no value for {key_regex}")
    return text[:m.start(1)] + repr(value) + text[m.end(1):]


def seed000(args):
    model = pathlib.Path(args.shared) / "models" / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
    src = (REPO / "targets" / "imx8mp-nnapi.json").read_text()
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for f in (REPO / "targets").glob("*.json"):
            shutil.copy(f, tmp)
        for s in (1.0, 2.0):
            pathlib.Path(tmp, "imx8mp-nnapi.json").write_text(with_value(src, r'"driver_fallback"', s))
            runs[s] = plan_json(args.delegato, model, "imx8mp-nnapi", tmp)
    g1, g2 = runs[1.0]["alternatives"]["greedy"], runs[2.0]["alternatives"]["greedy"]
    cpu_only = runs[1.0]["alternatives"]["cpu_only"]["total_us"]
    fallback = g2["cpu_us"] - g1["cpu_us"]  # the fallback nodes' CPU time at slowdown 1
    rest = g1["total_us"] - fallback
    slowdown = (SEED000_RATIO * cpu_only - rest) / fallback
    print(f"fallback nodes on the board CPU: {fallback / 1000:.2f} ms; rest of the greedy plan: {rest / 1000:.2f} ms; "
          f"CPU only: {cpu_only / 1000:.2f} ms")
    print(f"driver_fallback.slowdown = {slowdown:.3f} (greedy / CPU only = {SEED000_RATIO:.3f}, seed 000)")
    if args.write_targets:
        path = REPO / "targets" / "imx8mp-nnapi.json"
        path.write_text(with_value(path.read_text(), r'"driver_fallback"', round(slowdown, 3)))
        print(f"wrote {path}")


def vela(args):
    raise SystemExit("vela calibration: not written yet")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["seed000", "vela"])
    parser.add_argument("--delegato", default=str(REPO / "build" / "delegato"))
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    parser.add_argument("--out", default=str(REPO / "docs" / "cost_model.md"))
    parser.add_argument("--write-targets", action="store_true")
    args = parser.parse_args()
    if args.what == "seed000":
        seed000(args)
    else:
        vela(args)


if __name__ == "__main__":
    main()
