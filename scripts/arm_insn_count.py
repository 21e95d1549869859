#!/usr/bin/env python3
"""Instructions per inference of delegato's aarch64 build under qemu-aarch64,
per kernel ISA path (DELEGATO_ISA), and the ratio to the scalar path.

A proxy for speed where no Arm machine is at hand: it counts executed guest
instructions (a small QEMU TCG plugin, scripts/qemu/insn_count.c, built here
with the host's cc), not cycles. Emulation says nothing of memory stalls,
issue width or latencies, so instruction ratios are not speedups.

For each model and ISA, bench/time_model (build-aarch64/time_model) is run
twice under qemu: once loading the model and invoking it `--warmup` times,
once invoking it `--warmup + --runs` times more; the difference divided by
--runs is the count per inference (load, Prepare and weight packing cancel).

  scripts/build_aarch64.sh
  scripts/arm_insn_count.py ../shared/models/mobilenet_v1_0.25_128_quant.tflite --markdown
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# One glibc for loader and libc (see cmake/aarch64-linux-gnu.cmake): the
# multiarch libc6:arm64 when installed, else the cross package's.
SYSROOT = "/" if Path("/lib/ld-linux-aarch64.so.1").exists() else "/usr/aarch64-linux-gnu"


def build_plugin(out_dir):
    so = Path(out_dir) / "insn_count.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so),
                    str(ROOT / "scripts/qemu/insn_count.c")], check=True)
    return so


def count(plugin, binary, model, isa, cpu, invocations, kernels):
    with tempfile.NamedTemporaryFile(suffix=".log") as log:
        env = dict(os.environ)
        env.pop("DELEGATO_ISA", None)
        if isa is not None:
            env["DELEGATO_ISA"] = isa
        cmd = ["qemu-aarch64", "-L", SYSROOT, "-cpu", cpu, "-plugin", str(plugin),
               "-d", "plugin", "-D", log.name, str(binary), str(model), "--num_threads", "1",
               "--kernels", kernels]
        stdin = (f"run {invocations}\n" if invocations else "") + "quit\n"
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
        found = re.findall(r"insns (\d+)", Path(log.name).read_text())
        if not found:
            sys.exit(f"no instruction count from the plugin ({log.name})")
        return int(found[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--build", type=Path, default=ROOT / "build-aarch64")
    ap.add_argument("--isas", default="scalar,neon,dotprod,i8mm",
                    help="DELEGATO_ISA values, comma-separated (the first is the ratio's base)")
    ap.add_argument("--cpu", default="max", help="qemu -cpu model (max has dotprod and i8mm)")
    ap.add_argument("--runs", type=int, default=2, help="measured invocations")
    ap.add_argument("--warmup", type=int, default=1, help="invocations in both runs")
    ap.add_argument("--reference", action="store_true", help="also count the reference kernels")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()
    binary = args.build / "time_model"
    if not binary.exists():
        sys.exit(f"{binary} not found: run scripts/build_aarch64.sh first")
    with tempfile.TemporaryDirectory() as tmp:
        plugin = build_plugin(tmp)
        rows = []
        for model in args.models:
            paths = [(isa, "optimized") for isa in args.isas.split(",")]
            if args.reference:
                paths.append((None, "reference"))
            base = None
            for isa, kernels in paths:
                before = count(plugin, binary, model, isa, args.cpu, args.warmup, kernels)
                after = count(plugin, binary, model, isa, args.cpu, args.warmup + args.runs, kernels)
                per = (after - before) / args.runs
                if base is None:
                    base = per
                name = isa if kernels == "optimized" else "reference kernels"
                rows.append((model.name, name, per, per / base))
                print(f"{model.name:45s} {name:18s} {per / 1e6:12.2f} M insns/inference "
                      f"{per / base:6.3f} x {args.isas.split(',')[0]}", file=sys.stderr, flush=True)
    if args.markdown:
        print(f"| model | path | instructions per inference (M) | ratio to {args.isas.split(',')[0]} |")
        print("|---|---|---:|---:|")
        for model, name, per, ratio in rows:
            print(f"| {model} | {name} | {per / 1e6:.2f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
