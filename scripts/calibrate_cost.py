#!/usr/bin/env python3
"""Fits the cost-model constants that have a calibration source, and writes
docs/cost_model.md with the fit and its errors.

    scripts/calibrate_cost.py seed000 [--delegato build/delegato] [--shared ../shared]
        imx8mp-nnapi's driver_fallback.slowdown: the one number that makes the
        greedy split of tf2_mobilenet_v2_1.0_224_ptq cost 355.5 / 187.5 times the
        CPU-only estimate (seed 000's measured ratio on its int8 model).
    scripts/calibrate_cost.py cpu-profile [--write-targets]
        The relative op-class rates of targets/cpu.json's Cortex-A classes
        (op_class_efficiency): delegato's own op profile (`bench
        --enable_op_profiling`, 1 thread, optimized int8 kernels) on this host,
        ops per second of each class over that of conv_1x1.
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


CONFIGS = {  # Vela accelerator configuration -> delegato target, MACs per cycle
    "ethos-u55-256": ("ethos-u55", 256),
    "ethos-u65-256": ("ethos-u65", 256),
    "ethos-u85-256": ("ethos-u85", 256),
}
# Models whose Vela per-layer cycles the throughputs are fitted to; every other
# shared int8/uint8 model Vela compiles is held out and only checked.
FIT_MODELS = ["mobilenet_v2_1.0_224_quant", "movenet_single_pose_lightning_ptq", "person_detect",
              "keyword_scrambled", "deeplabv3_mnv2_dm05_pascal_quant", "keras_lstm_mnist_ptq", "hello_world_int8"]
SKIP_MODELS = {"hello_world_float", "model_invoking_error"}  # float (no NPU work) / not a valid model
CLASSES = ["conv_1x1", "conv_kxk", "depthwise", "fully_connected", "elementwise", "pooling_resize",
           "data_movement", "other"]
FEATURES = CLASSES + ["activation_bytes", "weight_bytes", "nodes"]


def run_vela(model, config, out):
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["vela", f"--accelerator-config={config}", "--verbose-performance", "--output-dir", str(out),
                    str(model)], capture_output=True, text=True, timeout=600, check=True)
    summary = next(out.glob("*_summary_*.csv"))
    row = next(csv.DictReader(summary.open()))
    layers = list(csv.DictReader(next(out.glob("*_per-layer.csv")).open()))
    return row, layers


def norm_op(name):
    return name.replace("_", "").lower()


def node_seconds(plan, layers, clock):
    """Vela's per-layer cycles summed onto the model's nodes: by output tensor
    name (exact, else the longest node output the layer's name starts with);
    layers Vela created when it rewrote an op (a RESIZE_BILINEAR becomes
    convolutions, an LSTM fully connected layers) go to the nearest matched
    layer of the same original operator, else to the nearest matched layer."""
    names = {n["output"]: n["index"] for n in plan["nodes"]}
    ops = {n["index"]: norm_op(n["op"]) for n in plan["nodes"]}
    by_length = sorted((o for o in names if o), key=len, reverse=True)
    owner = []
    for row in layers:
        node = names.get(row["Name"])
        if node is None:
            node = next((names[o] for o in by_length if row["Name"].startswith(o)), None)
        owner.append(node)
    matched = [i for i, node in enumerate(owner) if node is not None]
    seconds = [0.0] * len(plan["nodes"])
    unmatched = 0.0
    for i, row in enumerate(layers):
        cycles = float(row["Op Cycles"] or 0)
        node = owner[i]
        if node is None and matched:
            op = norm_op(row["Original Operator"])
            same = [j for j in matched if ops[owner[j]] == op]
            pool = same or matched
            node = owner[min(pool, key=lambda j: abs(j - i))]
            unmatched += cycles / clock
        if node is not None:
            seconds[node] += cycles / clock
    return seconds, unmatched


def features(node):
    c = node["cost"]
    f = [0.0] * len(FEATURES)
    # int16 activations run at half the int8 peak: twice the operations at the int8 rate.
    f[CLASSES.index(c["op_class"])] = c["ops"] * (2 if node["types"].split("->")[0] == "int16" else 1)
    f[-3], f[-2], f[-1] = c["activation_bytes"], c["weight_bytes"], 1.0
    return f


def fit(data, names, peak):
    """Coefficients (seconds per feature unit) fitted to the Vela per-layer times of `names`."""
    rows, targets, classes = [], [], set()
    for name in names:
        d = data.get(name)
        if not d or d["vela_s"] <= 0:
            continue
        # Each model weighs the same: rows scaled by 1 / its Vela time (relative error).
        weight = 1.0 / d["vela_s"]
        for node in d["plan"]["nodes"]:
            if node["placement"] != "delegate":
                continue
            rows.append([weight * f for f in features(node)])
            targets.append(weight * d["seconds"][node["index"]])
            classes.add(node["cost"]["op_class"])
    # No class runs faster than the peak: fit only the time above ops / peak.
    base = [sum(r[:len(CLASSES)]) / peak for r in rows]
    coef = nnls(rows, [t - b for t, b in zip(targets, base)])
    coef[:len(CLASSES)] += 1.0 / peak
    # A class no fitting model has runs at the peak (delegato counts a missing class as 1).
    return coef, classes


def predict(d, coef):
    """The model's accelerator time (s) under `coef`: delegato's formula, summed over delegated nodes."""
    return sum(sum(c * f for c, f in zip(coef, features(node)))
               for node in d["plan"]["nodes"] if node["placement"] == "delegate")


def nnls(rows, targets):
    """Least squares with coefficients >= 0 (drop negative ones and refit)."""
    import numpy as np
    a, b = np.array(rows), np.array(targets)
    # Columns scaled to unit norm so bytes and ops are comparable.
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1
    active = [j for j in range(a.shape[1]) if np.any(a[:, j])]
    while True:
        coef = np.zeros(a.shape[1])
        sol, *_ = np.linalg.lstsq(a[:, active] / scale[active], b, rcond=None)
        coef[active] = sol / scale[active]
        negative = [j for j in active if coef[j] < 0]
        if not negative:
            return coef
        active = [j for j in active if j not in negative]


def num(value, source):
    return {"value": float(f"{value:.4g}"), "source": source}


def cost_section(config, target, macs, clock, coef, fitted_classes):
    cal = {"calibration": f"scripts/calibrate_cost.py vela ({config})",
           "says": "least-squares fit (coefficients >= 0) to Vela's per-layer cycle estimates on " +
                   ", ".join(FIT_MODELS)}
    vela_src = {"observed": f"vela --accelerator-config={config} summary CSV (core_clock)",
                "says": f"Vela's default system configuration for {config} clocks the NPU at {clock / 1e6:g} MHz; "
                        f"{macs} MACs per cycle is the configuration's size"}
    peak = 2 * macs * clock
    section = {"ops_per_second": {"int8": num(peak, vela_src), "uint8": num(peak, vela_src),
                                  "int16": dict(num(peak / 2, vela_src),
                                                note="16-bit activations take about twice the cycles of int8")},
               "op_class_efficiency": {}}
    for i, name in enumerate(CLASSES):
        if name not in fitted_classes:
            continue
        entry = num(1.0 / (coef[i] * peak), cal)
        section["op_class_efficiency"][name] = entry
    if coef[-3] > 0:
        section["memory_bytes_per_second"] = num(1.0 / coef[-3], cal)
    if coef[-2] > 0:
        section["weight_bytes_per_second"] = num(1.0 / coef[-2], cal)
    section["node_overhead_us"] = num(coef[-1] * 1e6, cal)
    section["partition_sync_us"] = {"value": 0, "source": {
        "observed": f"vela --accelerator-config={config} summary CSV (inference_time)",
        "says": "Vela's inference_time counts NPU cycles only; the estimate keeps that scope"},
        "note": "the Cortex-M driver call and cache maintenance per NPU partition are not modelled"}
    section["first_inference_compile_ms"] = {"value": 0, "source": {
        "url": "https://pypi.org/project/ethos-u-vela/",
        "says": "Vela compiles a TFLite model ahead of time into an optimised model for the Ethos-U NPU"}}
    return section


def dump_cost(obj, indent, unit="  "):
    """JSON with one cost number ({"value": ...}) per line, like the hand-written targets."""
    if not isinstance(obj, dict) or "value" in obj:
        return json.dumps(obj)
    inner = indent + unit
    items = [f'{inner}{json.dumps(k)}: {dump_cost(v, inner, unit)}' for k, v in obj.items()]
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


def splice_cost(path, section):
    """Replaces (or adds) the "cost" object of a target file, leaving the rest of the text alone
    and keeping the file's indentation."""
    text = path.read_text()
    unit = re.search(r'\n([ \t]*)"id"', text).group(1) or "  "
    body = dump_cost(section, unit, unit)
    start = text.find('"cost": {')
    if start < 0:
        insert = text.find('"layers"')
        if insert < 0:
            insert = text.rstrip().rfind("}")
            text = text[:insert].rstrip() + ",\n" + unit + '"cost": ' + body + "\n}\n"
        else:
            text = text[:insert] + '"cost": ' + body + ",\n" + unit + text[insert:]
    else:
        depth, i = 0, text.index("{", start)
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
        text = text[:start] + '"cost": ' + body + text[j + 1:]
    json.loads(text)
    path.write_text(text)


def vela(args):
    if not shutil.which("vela"):
        raise SystemExit("vela (ethos-u-vela) is not installed")
    models = sorted(p for p in (pathlib.Path(args.shared) / "models").glob("*.tflite") if p.stem not in SKIP_MODELS)
    version = subprocess.run(["vela", "--version"], capture_output=True, text=True).stdout.strip()
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        targets_dir = tmp / "targets"
        shutil.copytree(REPO / "targets", targets_dir)
        for config, (target, macs) in CONFIGS.items():
            data = {}
            for model in models:
                try:
                    summary, layers = run_vela(model, config, tmp / config / model.stem)
                except (subprocess.SubprocessError, StopIteration):
                    continue
                plan = plan_json(args.delegato, model, target, targets_dir)
                clock = float(summary["core_clock"])
                seconds, unmatched = node_seconds(plan, layers, clock)
                data[model.stem] = dict(plan=plan, seconds=seconds, unmatched=unmatched, clock=clock,
                                        vela_s=float(summary["inference_time"]))
            clock = next(iter(data.values()))["clock"]
            peak = 2 * macs * clock
            coef, fitted_classes = fit(data, FIT_MODELS, peak)
            # Leave-one-model-out: every model predicted by a fit on all the others.
            loo = {}
            for name, d in data.items():
                if d["vela_s"] > 0:
                    others = [m for m in data if m != name]
                    loo[name] = predict(d, fit(data, others, peak)[0]) / d["vela_s"] - 1
            section = cost_section(config, target, macs, clock, coef, fitted_classes)
            splice_cost(targets_dir / f"{target}.json", section)
            if args.write_targets:
                splice_cost(REPO / "targets" / f"{target}.json", section)
            results = []
            for name, d in sorted(data.items()):
                plan = plan_json(args.delegato, pathlib.Path(args.shared) / "models" / f"{name}.tflite", target,
                                 targets_dir)
                est = plan["estimate"]["accelerator_us"] / 1e6
                if d["vela_s"] <= 0:
                    continue
                check = predict(d, coef)
                if abs(check - est) > 1e-6 + 1e-3 * est:
                    print(f"warning: {name}: the script's formula gives {check * 1e3:.4f} ms, delegato "
                          f"{est * 1e3:.4f} ms", file=sys.stderr)
                results.append(dict(model=name, fitted=name in FIT_MODELS, vela_ms=d["vela_s"] * 1e3, loo=loo[name],
                                    delegato_ms=est * 1e3, error=(est - d["vela_s"]) / d["vela_s"],
                                    unmatched_ms=d["unmatched"] * 1e3,
                                    placeholders=plan["estimate"]["uses_placeholders"]))
            report[config] = dict(target=target, section=section, results=results)
            for r in results:
                print(f"{config} {'fit ' if r['fitted'] else 'held'} {r['model']:36s} vela {r['vela_ms']:9.3f} ms  "
                      f"delegato {r['delegato_ms']:9.3f} ms  {100 * r['error']:+6.1f}%  leave-one-out {100 * r['loo']:+6.1f}%  "
                      f"(by nearest layer {r['unmatched_ms']:.3f} ms)")
    write_doc(args.out, report, version)


def write_doc(out, report, version):
    lines = []
    for config, r in report.items():
        held = [x for x in r["results"] if not x["fitted"]]
        fit = [x for x in r["results"] if x["fitted"]]
        mean = lambda xs: sum(abs(x["error"]) for x in xs) / len(xs) if xs else float("nan")
        worst = lambda xs: max((abs(x["error"]) for x in xs), default=float("nan"))
        lines += [f"### {config} (target `{r['target']}`)", "",
                  f"Held-out models: mean |error| {100 * mean(held):.1f}%, worst {100 * worst(held):.1f}%. "
                  f"Fitting models: mean |error| {100 * mean(fit):.1f}%, worst {100 * worst(fit):.1f}%.", "",
                  f"Leave-one-model-out (each model predicted by a fit on all the others): mean |error| "
                  f"{100 * sum(abs(x['loo']) for x in r['results']) / len(r['results']):.1f}%, within 20% on "
                  f"{sum(abs(x['loo']) <= 0.2 for x in r['results'])} of {len(r['results'])} models.", "",
                  "| model | set | Vela inference_time (ms) | delegato accelerator_us (ms) | error | leave-one-out error |",
                  "|---|---|---:|---:|---:|---:|"]
        for x in held + fit:
            lines.append(f"| {x['model']} | {'fit' if x['fitted'] else 'held out'} | {x['vela_ms']:.4f} | "
                         f"{x['delegato_ms']:.4f} | {100 * x['error']:+.1f}% | {100 * x['loo']:+.1f}% |")
        eff = ", ".join(f"{k} {v['value']:.3g}" for k, v in r["section"]["op_class_efficiency"].items())
        extra = []
        for key in ("memory_bytes_per_second", "weight_bytes_per_second", "node_overhead_us"):
            if key in r["section"]:
                extra.append(f"{key} {r['section'][key]['value']:.4g}")
        lines += ["", f"Fitted: op_class_efficiency {eff}; " + "; ".join(extra) + ".", ""]
    doc = pathlib.Path(out)
    text = doc.read_text() if doc.exists() else ""
    begin, end = "<!-- vela-calibration:begin -->", "<!-- vela-calibration:end -->"
    block = "\n".join([begin, f"Generated by `scripts/calibrate_cost.py vela` with {version}; do not edit by hand.",
                       "", *lines, end])
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text + ("\n" if text else "") + block + "\n"
    doc.write_text(text)
    print(f"wrote {doc}")


PROFILE_MODELS = ["tf2_mobilenet_v2_1.0_224_ptq", "person_detect", "deeplabv3_mnv2_dm05_pascal_quant",
                  "movenet_single_pose_lightning_ptq"]


def cpu_profile(args):
    ops, seconds = {}, {}
    for name in PROFILE_MODELS:
        model = pathlib.Path(args.shared) / "models" / f"{name}.tflite"
        if not model.exists():
            continue
        plan = plan_json(args.delegato, model, "cpu")
        with tempfile.TemporaryDirectory() as tmp:
            prof = pathlib.Path(tmp) / "profile.csv"
            subprocess.run([args.delegato, "bench", "--graph", str(model), "--enable_op_profiling=true",
                            "--num_runs", "10", "--num_threads", "1", "--op_profiling_output_mode=csv",
                            f"--op_profiling_output_file={prof}"], capture_output=True, text=True, check=True,
                           timeout=600)
            text = prof.read_text()
        run_order = text.split("Run Order")[2].split("\n\n")[0]  # the second table: the runs, not the init
        for line in run_order.splitlines()[2:]:
            m = re.match(r"\s*\w+, [0-9.]+, ([0-9.e+-]+),.*\]:(\d+)$", line)
            if not m:
                continue
            node = plan["nodes"][int(m.group(2))]
            cls = node["cost"]["op_class"]
            ops[cls] = ops.get(cls, 0.0) + node["cost"]["ops"]
            seconds[cls] = seconds.get(cls, 0.0) + float(m.group(1)) / 1e3
    rate = {c: ops[c] / seconds[c] for c in ops if seconds[c] > 0 and ops[c] > 0}
    base = rate["conv_1x1"]
    eff = {c: min(1.0, rate[c] / base) for c in CLASSES if c in rate}
    for c in CLASSES:
        if c in eff:
            print(f"{c:16s} {rate[c] / 1e9:8.2f} Gops/s  efficiency {eff[c]:.3f}")
    if args.write_targets:
        path = REPO / "targets" / "cpu.json"
        text = path.read_text()
        source = {"calibration": "scripts/calibrate_cost.py cpu-profile",
                  "says": "ops per second of this op class over that of conv_1x1 in delegato's own op profile "
                          "(bench --enable_op_profiling, 1 thread, optimized int8 kernels, on the x86 machine "
                          "the script ran on) over " + ", ".join(PROFILE_MODELS)}
        table = {c: {"value": float(f"{v:.3g}"), "source": source,
                     "note": "the profile's shape, assumed to carry over to this core class"} for c, v in eff.items()}
        body = dump_cost(table, "        ")
        # Every core class gets the same table (replacing the one it has, if any), and so does
        # cpu.json's generic CPU (the "cost" object itself).
        out, pos = [], 0
        for m in re.finditer(r'"(cortex-a\d+)": \{', text):
            start = m.end()
            depth, j = 1, start
            while depth:
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            block = text[start:j - 1]
            if '"op_class_efficiency"' in block:
                k = block.index('"op_class_efficiency"')
                d, i = 0, block.index("{", k)
                for e in range(i, len(block)):
                    d += {"{": 1, "}": -1}.get(block[e], 0)
                    if d == 0:
                        break
                block = block[:k] + '"op_class_efficiency": ' + body + block[e + 1:]
            else:
                block = block.rstrip() + ',\n        "op_class_efficiency": ' + body + "\n      "
            out.append(text[pos:start] + block)
            pos = j - 1
        out.append(text[pos:])
        text = "".join(out)
        top = '\n    "op_class_efficiency": '
        generic = dump_cost(table, "    ")
        if top in text:
            k = text.index(top) + len(top)
            d = 0
            for e in range(k, len(text)):
                d += {"{": 1, "}": -1}.get(text[e], 0)
                if d == 0:
                    break
            text = text[:k] + generic + text[e + 1:]
        else:
            text = text.replace('  "cost": {\n', '  "cost": {' + top + generic + ",\n", 1)
        path.write_text(text)
        json.loads(path.read_text())
        print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["seed000", "cpu-profile", "vela"])
    parser.add_argument("--delegato", default=str(REPO / "build" / "delegato"))
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    parser.add_argument("--out", default=str(REPO / "docs" / "cost_model.md"))
    parser.add_argument("--write-targets", action="store_true")
    args = parser.parse_args()
    if args.what == "seed000":
        seed000(args)
    elif args.what == "cpu-profile":
        cpu_profile(args)
    else:
        vela(args)


if __name__ == "__main__":
    main()
