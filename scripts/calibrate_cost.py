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
    scripts/calibrate_cost.py vela [--write-targets] [--out docs/cost_model.md] [--vela-out DIR]
        The Ethos-U targets' cost.ethos_u sections: Vela's architecture tables
        and default system configuration (read from Vela's summary CSV), and
        three corrections fitted to Vela's per-layer cycles on the fitting
        models; the estimate vs Vela's summary `inference_time` on held-out
        models reported separately, with a per-node check.

Prints the fitted numbers; --write-targets puts them in targets/*.json.
"""
import argparse
import configparser
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


CONFIGS = {  # Vela accelerator configuration -> delegato target
    "ethos-u55-256": "ethos-u55",
    "ethos-u65-256": "ethos-u65",
    "ethos-u85-256": "ethos-u85",
}
# The three calibrated numbers (op_overhead_cycles, mac_cycle_scale,
# elementwise_cycle_scale) are fitted to these models' Vela inference_time;
# every other model Vela compiles is held out and only checked.
FIT_MODELS = ["mobilenet_v2_1.0_224_quant", "person_detect", "keyword_scrambled", "resnet_small_int8",
              "densenet_small_int8"]
SKIP_MODELS = {"hello_world_float", "model_invoking_error"}  # float (no NPU work) / not a valid model
CLASSES = ["conv_1x1", "conv_kxk", "depthwise", "fully_connected", "elementwise", "pooling_resize",
           "data_movement", "other"]  # delegato's op classes (CostOpClassNames), for cpu-profile
VELA_PKG = "ethos-u-vela 5.2 (PyPI), ethosu/vela/"


def _vela_ini():
    """Vela's system configurations, installed beside its package."""
    try:
        import ethosu.vela
        return pathlib.Path(ethosu.vela.__file__).resolve().parents[1] / "config_files" / "Arm" / "vela.ini"
    except ImportError:
        return None


VELA_INI = _vela_ini()


def vela_models(shared):
    """The shared int8/uint8 models and the zoo's int8 and int16x8 variants."""
    models = [p for p in sorted((pathlib.Path(shared) / "models").glob("*.tflite")) if p.stem not in SKIP_MODELS]
    zoo = pathlib.Path(os.path.expanduser("~/.cache/delegato/zoo/v1"))
    models += sorted(zoo.glob("*_int8.tflite")) + sorted(zoo.glob("*_int16x8.tflite"))
    return models


def run_vela(model, config, out):
    """Vela's summary row and per-layer rows; reuses an earlier run's files in `out`."""
    if not list(out.glob("*_summary_*.csv")):
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(["vela", f"--accelerator-config={config}", "--verbose-performance", "--output-dir", str(out),
                        str(model)], capture_output=True, text=True, timeout=900, check=True)
    summary = next(out.glob("*_summary_*.csv"))
    row = next(csv.DictReader(summary.open()))
    layers = list(csv.DictReader(next(out.glob("*_per-layer.csv")).open()))
    return row, layers


def norm_op(name):
    return name.replace("_", "").lower()


def node_cycles(plan, layers):
    """Vela's per-layer cycles summed onto the model's nodes: by output tensor
    name (exact, else the longest node output the layer's name starts with);
    layers Vela created when it rewrote an op go to the nearest matched layer
    of the same original operator, else to the nearest matched layer."""
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
    cycles = [0.0] * len(plan["nodes"])
    for i, row in enumerate(layers):
        node = owner[i]
        if node is None and matched:
            op = norm_op(row["Original Operator"])
            same = [j for j in matched if ops[owner[j]] == op]
            node = owner[min(same or matched, key=lambda j: abs(j - i))]
        if node is not None:
            cycles[node] += float(row["Op Cycles"] or 0)
    return cycles


def ethos_u_section(config, summary, fit, fit_note):
    """The target's cost.ethos_u numbers: Vela's architecture tables and its
    default system configuration (as Vela itself reports it in the summary CSV)."""
    arch = VELA_PKG + "architecture_features.py"
    u85 = config.startswith("ethos-u85")
    clock = float(summary["core_clock"])
    gib = 1024 ** 3
    sram = float(summary["sram_bandwidth"]) * gib / clock
    off_chip_area = summary["weights_storage_area"]
    off_chip = float(summary["dram_bandwidth" if off_chip_area == "DRAM" else "off_chip_flash_bandwidth"]) * gib / clock
    fm_off_chip = summary["feature_map_storage_area"] != "SRAM"
    cache = float(summary["arena_cache_size"]) * 1024 if fm_off_chip else 0.0
    csv_src = lambda field, says: {"observed": f"vela --accelerator-config={config} summary CSV ({field})", "says": says}
    if u85:
        # Vela 5.2 models the U85 in its compiled core (regor); its Python tables
        # stop at the U65. The 256-MAC U55/U65 numbers stand in for it.
        tab = lambda field, says: {"path": f"{arch}: {field} (Ethos_U55_256 / Ethos_U65_256)",
                                   "says": says + "; taken for the 256-MAC Ethos-U85 too, whose model Vela 5.2 "
                                                  "keeps in compiled code"}
    else:
        tab = lambda field, says: {"path": f"{arch}: {field} ({config})", "says": says}
    n = lambda v, src: {"value": float(f"{v:.6g}"), "source": src}
    ublock = "accelerator_configs[...].ofm_ublock"
    out = "output_cycles_per_elem"
    section = {
        "clock_hz": n(clock, csv_src("core_clock", f"Vela's default system configuration ({summary['system_config']}) "
                                                   f"clocks the NPU at {clock / 1e6:g} MHz")),
        "ofm_ublock_height": n(2, tab(ublock, "Block(2, 2, 8): the 256-MAC array computes 2x2x8 output micro-blocks")),
        "ofm_ublock_width": n(2, tab(ublock, "Block(2, 2, 8)")),
        "ofm_ublock_depth": n(8, tab(ublock, "Block(2, 2, 8)")),
        "ifm_block_depth": n(32, {"path": VELA_PKG + "architecture_allocator.py: ifm_blockdepth",
                                  "says": "round_up(min(ifm depth, 16 if part-kernel else 32), ifm_ublock.depth)"}),
        "output_cycles_per_element": n(0.25, tab(out, "index 7 (convolution, pooling and other ops): 0.25")),
        "output_cycles_add_sub": n(0.75, tab(out, "index 5 (advanced ADD/SUB): 0.75")),
        "output_cycles_mul": n(0.375, tab(out, "index 3 (MUL, or 40-bit accumulators of 16-bit convolutions): 0.375")),
        "output_cycles_max_pool": n(0.125, tab(out, "index 6 (max pooling): 0.125")),
        "activation_cycles_lut": n(1.0, tab("activation_cycles_per_elem", "index 0 (sigmoid, tanh, LUT): 1.0")),
        "activation_cycles_relu": n(0.25, tab("activation_cycles_per_elem", "index 1 (ReLU family): 0.25")),
        "sram_bytes_per_cycle": n(sram, csv_src("sram_bandwidth", f"{float(summary['sram_bandwidth']):.4g} GiB/s at "
                                                                  f"{clock / 1e6:g} MHz")),
        "off_chip_bytes_per_cycle": n(off_chip, csv_src(
            "weights_storage_area, dram_bandwidth / off_chip_flash_bandwidth",
            f"weights stream from {off_chip_area} at {off_chip * clock / gib:.4g} GiB/s")),
        "feature_maps_off_chip": n(1 if fm_off_chip else 0, csv_src(
            "feature_map_storage_area", f"feature maps live in {summary['feature_map_storage_area']} "
                                        f"(memory mode {summary['memory_mode']})")),
        "sram_cache_bytes": n(cache, csv_src("arena_cache_size", f"{float(summary['arena_cache_size']):g} KiB of SRAM "
                                             "cache the feature maps" if fm_off_chip else "no cache: feature maps are in SRAM")),
    }
    # Memory latencies: Vela's system configuration file, for the configuration the summary names.
    ini = configparser.ConfigParser()
    ini.read(VELA_INI)
    system = ini["System_Config." + summary["system_config"]]
    ports = {"sram": "Sram", "off_chip": "Dram" if off_chip_area == "DRAM" else "OffChipFlash"}
    for port, area in ports.items():
        for way in ("read", "write"):
            key = f"{area}_{way}_latency"
            section[f"{port}_{way}_latency_cycles"] = n(float(system.get(key, 0)), {
                "path": f"ethos-u-vela 5.2 (PyPI), ethosu/config_files/Arm/vela.ini: [System_Config.{summary['system_config']}] {key}",
                "says": f"{key}={system.get(key, 0)} (cycles an operation waits for its first {way})"})
    for port, area in ports.items():
        key = f"{area}_burst_length"
        section[f"{port}_burst_bytes"] = n(float(system.get(key, 0)), {
            "path": f"ethos-u-vela 5.2 (PyPI), ethosu/config_files/Arm/vela.ini: [System_Config.{summary['system_config']}] {key}",
            "says": f"{key}={system.get(key, 0)} (bytes of the longest burst; shorter bursts cost a whole one)"})
    # Vela's block model of the 256-MAC U55/U65 (block search over the SHRAM, per-block command limit);
    # 0 banks keeps the U85 on the whole-operation model.
    section["shram_banks"] = n(0 if u85 else 48, {
        "path": f"{arch}: accelerator_configs[...].shram_banks (Ethos_U55_256 / Ethos_U65_256)",
        "says": "the U85 is not in these tables: 0 keeps it on the whole-operation model" if u85 else
                "48 banks of 1 KiB of SHRAM hold the IFM and accumulator blocks"})
    if u85:
        # The U85's memory channels (regor's EthosU85Performance::ChannelBW): a channel moves at most
        # burst x min(read buffers / burst words, outstanding transactions x ports x 0.8) / latency x 0.8
        # bytes per cycle, and never more than the port's bandwidth.
        core = "ethos-u-vela regor core (published source), ethosu/regor/architecture/ethosu85/"
        ini_src = f"vela.ini [System_Config.{summary['system_config']}]"
        def channel(area, way, buffers, bandwidth):
            burst = float(system.get(f"{area}_burst_length"))
            latency = float(system.get(f"{area}_{way}_latency"))
            outstanding = float(system.get(f"{area}_max_{way}s")) * float(system.get(f"{area}_ports_used", 1)) * 0.8
            util = min(buffers / max(burst // 16, 1), outstanding) if buffers else outstanding
            return min(bandwidth, burst * util / latency * 0.8), burst, latency, util
        for key, area, way, buffers, bw in (("weight_dma_bytes_per_cycle", ports["off_chip"], "read", 104, off_chip),
                                            ("sram_channel_bytes_per_cycle", ports["sram"], "read", 128, sram),
                                            ("off_chip_read_channel_bytes_per_cycle", ports["off_chip"], "read", 128, off_chip),
                                            ("off_chip_write_channel_bytes_per_cycle", ports["off_chip"], "write", 0, off_chip)):
            v, burst, latency, util = channel(area, way, buffers, bw)
            section[key] = n(v, {"path": core + "ethos_u85_performance.cpp: ChannelBW; ethos_u85.cpp: s_EthosU85Configs "
                                 "channelRBs (Ethos_U85_256: 104 read buffers for the Mem2Mem channel, 128 for the weight and IFM "
                                 "channels); " + ini_src,
                                 "says": f"{area} {way}s: {burst:g}-byte bursts x {util:g} transactions in flight / "
                                         f"{latency:g} cycles x 0.8 = {v:.4g} bytes per cycle"})
    else:
        section["weight_dma_bytes_per_cycle"] = n(0, {
            "path": "ethos-u-vela regor core (published source), ethosu/regor/architecture/ethosu55/"
                    "ethos_u55_performance.cpp: MemToMemCycles",
            "says": "0: the U65's weight DMA moves at the DRAM's bandwidth (off_chip_bytes_per_cycle) in the block model"})
        for key in ("sram_channel_bytes_per_cycle", "off_chip_read_channel_bytes_per_cycle",
                    "off_chip_write_channel_bytes_per_cycle"):
            section[key] = n(0, {"path": "ethos-u-vela regor core (published source), ethosu/regor/architecture/"
                                         "ethosu55/ethos_u55_performance.cpp: MeasureAccessCycles",
                                 "says": "the U55/U65 bound a memory's cycles by its bandwidth alone (0: no channel limit)"})
    section["chains_elementwise_after_convolution"] = n(1 if u85 else 0, {
        "observed": f"vela --accelerator-config={config} --verbose-performance, per-layer CSV of the shared and zoo models",
        "says": ("every ADD that follows a Conv2D (94 of them) takes 0 cycles: the convolution's output unit applies it")
                if u85 else "each ADD / SUB / MUL is a pass of its own"})
    section["output_cycles_mul_32bit"] = n(0.5, tab(out, "index 2 (MUL with a 32-bit OFM): 0.5"))
    section["output_cycles_32bit_binary"] = n(1.125, tab(out, "index 1 (binary elementwise on 32-bit IFMs): 1.125"))
    if u85:
        section["arg_max_cycles_per_element"] = n(4, {
            "observed": f"vela --accelerator-config={config} --verbose-performance, per-layer CSV of "
                        "deeplabv3_mnv2_dm05_pascal_quant",
            "says": "ArgMax stays one NPU operation per 65536 output positions: 5507784 cycles for 65536 x 21 input "
                    "elements (4.0 per element); Vela 5.2's U85 model is compiled code, so this rate is read off its output"})
    else:
        section["arg_max_cycles_per_element"] = n(0, {
            "path": VELA_PKG + "tflite_graph_optimiser.py: convert_argmax_to_depthwise_conv_and_max_pool",
            "says": "ArgMax is converted to DWConv2D -> MaxPool -> LUT (0: priced as those passes)"})
    section["fuses_channel_scale_shift"] = n(1 if u85 else 0, {
        "observed": f"vela --accelerator-config={config} --verbose-performance, per-layer CSV of densenet_small_int8 "
                    "and densenet_small_int16x8",
        "says": ("each MUL by a per-channel constant followed by an ADD of one: the ADD 0 cycles, the MUL's constants "
                 "read once (12-264 bytes of DRAM)") if u85 else
                ("the MUL and the ADD are separate passes, each re-reading its per-channel constant per position")})
    for key, says in (("op_overhead_cycles", "one NPU operation's fixed cost besides the memory latencies" +
                       ("; at most a convolution-like node's own weight DMA (DRAM read latency plus its weights at "
                        "weight_dma_bytes_per_cycle, MemToMemCycles)" if u85 else "")),
                      ("mac_cycle_scale", "the MAC array's cycles on CONV_2D / FULLY_CONNECTED over the block model's"),
                      ("elementwise_cycle_scale", "the output unit's cycles on elementwise and copy operations over "
                                                  "Vela's per-element table")):
        section[key] = n(fit[key], {"calibration": f"scripts/calibrate_cost.py vela ({config})",
                                    "says": says + "; " + fit_note})
    return {"ethos_u": section,
            "partition_sync_us": {"value": 0, "source": csv_src(
                "inference_time", "Vela's inference_time counts NPU cycles only; the estimate keeps that scope"),
                "note": "the Cortex-M driver call and cache maintenance per NPU partition are not modelled"},
            "first_inference_compile_ms": {"value": 0, "source": {
                "url": "https://pypi.org/project/ethos-u-vela/",
                "says": "Vela compiles a TFLite model ahead of time into an optimised model for the Ethos-U NPU"}}}


def model_cycles(d, fit):
    """The model's NPU cycles under the fitted numbers `fit` (delegato's formula, EthosUCycles::total)."""
    total = 0.0

    def overhead(e):  # the fixed cost per operation, at most the node's own weight DMA where given
        cap = e.get("overhead_cap_cycles", 0)
        return min(fit["op_overhead_cycles"], cap) if cap > 0 else fit["op_overhead_cycles"]
    for node in d["plan"]["nodes"]:
        if node["placement"] != "delegate":
            continue
        e = node["cost"]["ethos_u"]
        scale = {"mac_array": fit["mac_cycle_scale"], "elementwise": fit["elementwise_cycle_scale"]}.get(e["unit"], 1.0)
        total += max(e["npu_cycles"] * scale + e.get("weight_dma_cycles", 0), e["sram_cycles"], e["off_chip_cycles"]) + \
            e["operations"] * (overhead(e) + e["latency_cycles"])
    return total


FITTED = {  # name -> the values scanned
    "mac_cycle_scale": [0.5 + 0.02 * i for i in range(200)],
    "elementwise_cycle_scale": [0.5 + 0.02 * i for i in range(300)],
    "op_overhead_cycles": [4.0 * i for i in range(250)],
}


def fit_numbers(data, names):
    """The three calibrated numbers minimising the disagreement with Vela on
    the fitting models: per model, the mean of the per-node error (sum of
    |delegato - Vela| over its nodes, relative to its Vela total) and of the
    total's relative error, averaged over the models. Coordinate descent, one
    scanned number at a time."""
    import numpy as np
    fit = {"mac_cycle_scale": 1.0, "elementwise_cycle_scale": 1.0, "op_overhead_cycles": 0.0}
    models = []  # per fitting model: per-node arrays and Vela's cycles
    for m in names:
        d = data.get(m)
        if not d or d["vela_s"] <= 0:
            continue
        delegated = [n for n in d["plan"]["nodes"] if n["placement"] == "delegate"]
        es = [n["cost"]["ethos_u"] for n in delegated]
        vela_nodes = node_cycles(d["plan"], d["layers"])
        arr = lambda f: np.array([f(e) for e in es], dtype=float)
        models.append(dict(npu=arr(lambda e: e["npu_cycles"]),
                           mem=arr(lambda e: max(e["sram_cycles"], e["off_chip_cycles"])),
                           dma=arr(lambda e: e.get("weight_dma_cycles", 0)),
                           ops=arr(lambda e: e["operations"]), lat=arr(lambda e: e["latency_cycles"]), mac=arr(lambda e: e["unit"] == "mac_array"),
                           elem=arr(lambda e: e["unit"] == "elementwise"), vela=d["vela_s"] * d["clock"],
                           vela_nodes=np.array([vela_nodes[n["index"]] for n in delegated], dtype=float)))

    def error(f):
        err = 0.0
        for m in models:
            scale = 1 + m["mac"] * (f["mac_cycle_scale"] - 1) + m["elem"] * (f["elementwise_cycle_scale"] - 1)
            nodes = np.maximum(m["npu"] * scale + m["dma"], m["mem"]) + m["ops"] * (f["op_overhead_cycles"] + m["lat"])
            err += (np.abs(nodes - m["vela_nodes"]).sum() / m["vela"] + abs(nodes.sum() / m["vela"] - 1)) / 2
        return err / len(models)
    for _ in range(6):
        for key, values in FITTED.items():
            fit[key] = min(values, key=lambda v: error(dict(fit, **{key: v})))
    return fit


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
    models = vela_models(args.shared)
    version = subprocess.run(["vela", "--version"], capture_output=True, text=True).stdout.strip()
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(args.vela_out) if args.vela_out else pathlib.Path(tmp) / "vela"
        targets_dir = pathlib.Path(tmp) / "targets"
        shutil.copytree(REPO / "targets", targets_dir)
        for config, target in CONFIGS.items():
            data, summary0 = {}, None
            for model in models:
                try:
                    summary, layers = run_vela(model, config, work / config / model.stem)
                except (subprocess.SubprocessError, StopIteration):
                    continue
                summary0 = summary0 or summary
                data[model.stem] = dict(path=model, layers=layers, clock=float(summary["core_clock"]),
                                        vela_s=float(summary["inference_time"]))
            # The section with neutral calibrated numbers gives every node's cycles; then they are fitted.
            note = ("fitted with the other two calibrated numbers to Vela's per-layer cycles (summed per node) and "
                    "inference_time on " +
                    ", ".join(FIT_MODELS))
            neutral = {"mac_cycle_scale": 1.0, "elementwise_cycle_scale": 1.0, "op_overhead_cycles": 0.0}
            splice_cost(targets_dir / f"{target}.json", ethos_u_section(config, summary0, neutral, note))
            for d in data.values():
                d["plan"] = plan_json(args.delegato, d["path"], target, targets_dir)
            fit = fit_numbers(data, FIT_MODELS)
            section = ethos_u_section(config, summary0, fit, note)
            splice_cost(targets_dir / f"{target}.json", section)
            if args.write_targets:
                splice_cost(REPO / "targets" / f"{target}.json", section)
            results = []
            for name, d in sorted(data.items()):
                if d["vela_s"] <= 0:
                    continue
                plan = plan_json(args.delegato, d["path"], target, targets_dir)
                est = plan["estimate"]["accelerator_us"] / 1e6
                check = model_cycles(d, fit) / d["clock"]
                if abs(check - est) > 1e-6 + 1e-3 * est:
                    print(f"warning: {name}: the script's formula gives {check * 1e3:.4f} ms, delegato "
                          f"{est * 1e3:.4f} ms", file=sys.stderr)
                # Per node: delegato's estimate against Vela's layers summed onto the node.
                vela_nodes = node_cycles(plan, d["layers"])
                worst = max(((abs(n["cost"]["accelerator_us"] - vela_nodes[n["index"]] / d["clock"] * 1e6), n["op"])
                             for n in plan["nodes"] if n["placement"] == "delegate"), default=(0.0, ""))
                within = [n for n in plan["nodes"] if n["placement"] == "delegate" and vela_nodes[n["index"]] > 0]
                ok = sum(abs(n["cost"]["accelerator_us"] / (vela_nodes[n["index"]] / d["clock"] * 1e6) - 1) <= 0.3
                         for n in within)
                results.append(dict(model=name, fitted=name in FIT_MODELS, vela_ms=d["vela_s"] * 1e3,
                                    delegato_ms=est * 1e3, error=(est - d["vela_s"]) / d["vela_s"],
                                    nodes_ok=ok, nodes=len(within), worst_node=worst[1],
                                    worst_ms=worst[0] / 1e3,
                                    placeholders=any(n.startswith("ethos_u.")
                                                     for n in plan["estimate"].get("placeholders", []))))
            report[config] = dict(target=target, section=section, results=results, fit=fit)
            for r in results:
                print(f"{config} {'fit ' if r['fitted'] else 'held'} {r['model']:36s} vela {r['vela_ms']:9.3f} ms  "
                      f"delegato {r['delegato_ms']:9.3f} ms  {100 * r['error']:+6.1f}%  nodes within 30%: "
                      f"{r['nodes_ok']}/{r['nodes']}  worst node {r['worst_node']} {r['worst_ms']:.3f} ms"
                      f"{'  PLACEHOLDER' if r['placeholders'] else ''}")
    write_doc(args.out, report, version)


def write_doc(out, report, version):
    lines = []
    for config, r in report.items():
        held = [x for x in r["results"] if not x["fitted"]]
        fit = [x for x in r["results"] if x["fitted"]]
        mean = lambda xs: sum(abs(x["error"]) for x in xs) / len(xs) if xs else float("nan")
        worst = lambda xs: max((abs(x["error"]) for x in xs), default=float("nan"))
        lines += [f"### {config} (target `{r['target']}`)", "",
                  f"Held-out models: mean |error| {100 * mean(held):.1f}%, worst {100 * worst(held):.1f}%, "
                  f"within 20% on {sum(abs(x['error']) <= 0.2 for x in held)} of {len(held)}. "
                  f"Fitting models: mean |error| {100 * mean(fit):.1f}%, worst {100 * worst(fit):.1f}%. "
                  "Fitted: " + ", ".join(f"{k} {v:.4g}" for k, v in r["fit"].items()) + ". "
                  f"Ethos-U estimates resting on a placeholder: {sum(x['placeholders'] for x in r['results'])}.", "",
                  "| model | set | Vela inference_time (ms) | delegato accelerator_us (ms) | error | "
                  "nodes within 30% of Vela | largest node gap (ms) |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for x in held + fit:
            lines.append(f"| {x['model']} | {'fit' if x['fitted'] else 'held out'} | {x['vela_ms']:.4f} | "
                         f"{x['delegato_ms']:.4f} | {100 * x['error']:+.1f}% | {x['nodes_ok']}/{x['nodes']} | "
                         f"{x['worst_ms']:.4f} ({x['worst_node']}) |")
        lines.append("")
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
    parser.add_argument("--vela-out", help="keep (and reuse) Vela's output files in this directory")
    args = parser.parse_args()
    if args.what == "seed000":
        seed000(args)
    elif args.what == "cpu-profile":
        cpu_profile(args)
    else:
        vela(args)


if __name__ == "__main__":
    main()
