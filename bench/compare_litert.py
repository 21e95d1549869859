#!/usr/bin/env python3
"""delegato vs LiteRT (XNNPACK) on this machine, side by side.

For each model and thread count, one delegato process (bench/time_model) and
one LiteRT process (this script with --serve-litert: ai_edge_litert's default
interpreter, whose CPU path is the XNNPACK delegate) load the model once and
are fed the same seeded random inputs. The script then alternates batches of
invocations between the two (order flipped every round), so both see the same
machine load, and reports medians over all invocations: wall-clock latency
and process CPU time per inference, initialization time, peak RSS.

Rows avx2:NAME run delegato with DELEGATO_ISA=avx2 and, where the kernel's
CPUID faulting works (x86-64 Linux, the cpuid_fault CPU flag), both engines
under build/libdelegato_cpumask.so (bench/cpu_mask), which hides AVX-512,
AMX and AVX-VNNI from CPUID: LiteRT's XNNPACK then picks its AVX2 kernels as
on a CPU without AVX-512 (--avx2-mask off: LiteRT unmasked, at its best).

With --kernels-bench, also runs the per-kernel micro-benchmarks
(bench/kernels_bench, Google Benchmark) and the int8 multiply-add peak
(vpdpbusd or vpmaddwd), and reports achieved MAC/s for MobileNet v2 against the CPU's int8 peak.

    python3 bench/compare_litert.py --time-model build/time_model \\
        --kernels-bench build/kernels_bench --output docs/performance.md
"""
import argparse
import datetime
import fnmatch
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED_INT8_MODELS = [
    "mobilenet_v1_0.25_128_quant",
    "mobilenet_v2_1.0_224_quant",
    "tf2_mobilenet_v2_1.0_224_ptq",
    "mobilenet_v2_quantized_1x3x224x224",
    "person_detect",
    "deeplabv3_mnv2_dm05_pascal_quant",
    "movenet_single_pose_lightning_ptq",
    "keras_lstm_mnist_ptq",
]
# float32 rows: FLOAT_PREFIX + a quantized model's name runs its float32 twin
# (bench/float_model: weights dequantized, every tensor float32), generated
# once into --float-cache.
FLOAT_PREFIX = "float32:"
# Converter-made models (scripts/make_zoo.py, cached in --zoo-dir): ZOO_PREFIX +
# the file's stem. Variants the converter cannot make are absent from the zoo
# (docs/zoo.md) and skipped with a message.
ZOO_PREFIX = "zoo:"
ZOO_ARCHITECTURES = ["mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "resnet_small", "densenet_small", "resnext_small",
                     "transformer_encoder", "encoder_decoder", "lstm_sequence_tf_keras"]
ZOO_VARIANTS = ["float32", "int8", "int16x8", "dynamic"]
# ISA_PREFIX + a row: delegato restricted to that instruction set through
# DELEGATO_ISA; with the CPU mask (--avx2-mask), LiteRT too.
ISA_PREFIX = "avx2:"
DEFAULT_MODELS = (
    SHARED_INT8_MODELS
    + [FLOAT_PREFIX + m for m in ("mobilenet_v1_0.25_128_quant", "mobilenet_v2_1.0_224_quant")]
    + [f"{ZOO_PREFIX}{a}_{v}" for v in ZOO_VARIANTS for a in ZOO_ARCHITECTURES]
    + [ISA_PREFIX + m for m in SHARED_INT8_MODELS]
    + [f"{ISA_PREFIX}{ZOO_PREFIX}{a}_int8" for a in ZOO_ARCHITECTURES]
    # AVX2-only CPUs (most laptops) run float32 and hybrid models too.
    + [ISA_PREFIX + FLOAT_PREFIX + m for m in ("mobilenet_v1_0.25_128_quant", "mobilenet_v2_1.0_224_quant")]
    + [f"{ISA_PREFIX}{ZOO_PREFIX}{a}_{v}" for v in ("float32", "dynamic") for a in ZOO_ARCHITECTURES])
MAC_MODEL = "mobilenet_v2_1.0_224_quant"


# ------------------------------------------------------------------ helpers

def status_mb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1024.0
    return 0.0


def litert_module():
    from ai_edge_litert import interpreter  # noqa: WPS433
    return interpreter


def loadable_model_path(model, tmp_dir):
    """The model, or a patched copy when LiteRT rejects an out-of-range
    quantized_dimension on biases (a field no kernel reads)."""
    interpreter = litert_module()
    try:
        interpreter.Interpreter(model_path=str(model))
        return model, ""
    except (ValueError, RuntimeError) as error:
        if "quantized_dimension" not in str(error):
            raise
    sys.path.insert(0, str(REPO / "tests" / "conformance"))
    from litert_oracle import fix_out_of_range_quantized_dimension  # noqa: WPS433
    patched, fixed = fix_out_of_range_quantized_dimension(model.read_bytes())
    copy = pathlib.Path(tmp_dir) / f"{model.stem}.litert.tflite"
    copy.write_bytes(patched)
    return copy, (f"LiteRT rejects the file (quantized_dimension out of range on {fixed} "
                  "bias tensors); it runs a copy with that field set to 0")


def random_inputs(model, seed, tmp_dir):
    """Seeded inputs in the model's input order, saved as .npy files."""
    interpreter = litert_module()
    it = interpreter.Interpreter(model_path=str(model))
    rng = np.random.default_rng(seed)
    files = []
    for i, d in enumerate(it.get_input_details()):
        dtype = np.dtype(d["dtype"])
        shape = tuple(int(x) for x in d["shape"])
        if dtype == np.float32:
            value = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        elif dtype.kind in "iu" and dtype.itemsize == 1:
            info = np.iinfo(dtype)
            value = rng.integers(info.min, info.max + 1, size=shape, dtype=np.int64).astype(dtype)
        else:
            value = rng.integers(0, 10, size=shape).astype(dtype)
        path = pathlib.Path(tmp_dir) / f"{model.stem}_input_{i}.npy"
        np.save(path, value)
        files.append(path)
    return files


def model_macs(model):
    """Multiply-accumulates of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED."""
    interpreter = litert_module()
    kwargs = {"model_path": str(model)}
    enum = getattr(interpreter, "OpResolverType", None)
    if enum is not None:
        kwargs["experimental_op_resolver_type"] = enum.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = interpreter.Interpreter(**kwargs)
    shapes = {d["index"]: [int(x) for x in d["shape"]] for d in it.get_tensor_details()}
    macs = 0
    for op in it._get_ops_details():  # noqa: SLF001 (public enough, stable for years)
        name = op["op_name"]
        if name not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            continue
        out = int(np.prod(shapes[op["outputs"][0]]))
        w = shapes[op["inputs"][1]]
        if name == "CONV_2D":
            macs += out * w[1] * w[2] * w[3]
        elif name == "DEPTHWISE_CONV_2D":
            macs += out * w[1] * w[2]
        else:
            macs += out * w[1]
    return macs


def avx2_mask_state(args):
    """(LD_PRELOAD value or None, sentence for the report) for the avx2: rows."""
    if args.avx2_mask == "off":
        return None, "off (--avx2-mask off)"
    probe = REPO / "bench" / "cpu_mask" / "cpuid_probe.py"
    library = pathlib.Path(args.cpu_mask).resolve()

    def features(preload):
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        if preload:
            env["LD_PRELOAD"] = str(library)
        out = subprocess.run([sys.executable, str(probe)], env=env, capture_output=True,
                             text=True, timeout=60)
        return json.loads(out.stdout) if out.returncode == 0 else None

    reason = None
    if platform.machine() not in ("x86_64", "AMD64") or not sys.platform.startswith("linux"):
        reason = "not x86-64 Linux"
    elif not library.exists():
        reason = f"{library} not built"
    else:
        native = features(False)
        if native is not None and not native["avx512f"] and not native["avx_vnni"]:
            reason = "this CPU has neither AVX-512 nor AVX-VNNI: both engines run AVX2 unmasked"
        else:
            masked = features(True)
            if masked is None or masked["avx512f"] or masked["avx_vnni"] or not masked["avx2"]:
                reason = "CPUID faulting unavailable here (no cpuid_fault), the mask has no effect"
    if reason is not None:
        if args.avx2_mask == "on":
            raise SystemExit(f"--avx2-mask on: {reason}")
        return None, f"unavailable ({reason})"
    return str(library), "on"


# ------------------------------------------------------------------ runners

class Runner:
    """A process speaking the time_model line protocol."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1,
                                     env=env)
        self.info = self._read()
        self.wall = []
        self.cpu = []

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} failed: {self.proc.stderr.read().strip()}")
        return json.loads(line)

    def run(self, count):
        self.proc.stdin.write(f"run {count}\n")
        self.proc.stdin.flush()
        reply = self._read()
        self.wall += reply["latencies_ms"]
        self.cpu += reply.get("cpu_ms", [])

    def finish(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.info.update(self._read())
        self.proc.wait(timeout=60)


def serve_litert(args):
    """--serve-litert: the LiteRT side of the line protocol."""
    interpreter = litert_module()  # the library is loaded before the baseline
    rss_before = status_mb("VmRSS:")
    start = time.perf_counter()
    it = interpreter.Interpreter(model_path=args.serve_litert, num_threads=args.num_threads)
    it.allocate_tensors()
    init_ms = (time.perf_counter() - start) * 1e3
    for detail, path in zip(it.get_input_details(), args.inputs or []):
        it.set_tensor(detail["index"], np.load(path))
    start = time.perf_counter()
    it.invoke()
    first_ms = (time.perf_counter() - start) * 1e3
    print(json.dumps({"init_ms": init_ms, "first_inference_ms": first_ms,
                      "rss_before_load_mb": rss_before}), flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "run":
            wall, cpu = [], []
            for _ in range(int(parts[1])):
                c0, t0 = time.process_time(), time.perf_counter()
                it.invoke()
                wall.append((time.perf_counter() - t0) * 1e3)
                cpu.append((time.process_time() - c0) * 1e3)
            print(json.dumps({"latencies_ms": wall, "cpu_ms": cpu}), flush=True)
        elif parts[0] == "quit":
            break
    print(json.dumps({"peak_rss_mb": status_mb("VmHWM:")}), flush=True)


def split_row(row_name):
    """(ISA forced on delegato or None, model name) of a row."""
    if row_name.startswith(ISA_PREFIX):
        return ISA_PREFIX[:-1], row_name[len(ISA_PREFIX):]
    return None, row_name


def model_kind(model_name):
    """float32, int8, int16x8 or hybrid (dynamic-range: int8 weights, float
    activations): what the row's goal and grouping depend on."""
    if model_name.startswith(FLOAT_PREFIX):
        return "float32"
    if model_name.startswith(ZOO_PREFIX):
        variant = model_name.rsplit("_", 1)[1]
        return {"dynamic": "hybrid"}.get(variant, variant)
    return "int8"  # the shared benchmark models are all 8-bit (uint8 or int8)


def row_goal(row_name, has_vnni):
    """The latency ratio a row should stay at or below (issue 17): 0.7 of
    LiteRT for 8-bit models on AVX-512 VNNI, 1.0 elsewhere."""
    isa, model_name = split_row(row_name)
    return 0.7 if model_kind(model_name) == "int8" and isa is None and has_vnni else 1.0


def select_rows(patterns, isas):
    """DEFAULT_MODELS filtered by --models (shell patterns matched against the
    row name, or its name without the ISA prefix) and --isa; names not in the
    default list are taken as given."""
    chosen = []
    for pattern in patterns:
        matches = [r for r in DEFAULT_MODELS
                   if fnmatch.fnmatchcase(r, pattern) or fnmatch.fnmatchcase(split_row(r)[1], pattern)]
        if not matches and not any(c in pattern for c in "*?["):
            matches = [pattern]
        chosen += [m for m in matches if m not in chosen]
    return [r for r in chosen if (split_row(r)[0] or "default") in isas]


def model_path(model_name, args):
    """The .tflite file of a row: a shared model, a zoo model, or the float32
    twin of a shared one (made by bench/float_model into args.float_cache on
    first use)."""
    if model_name.startswith(ZOO_PREFIX):
        return pathlib.Path(args.zoo_dir).expanduser() / f"{model_name[len(ZOO_PREFIX):]}.tflite"
    if not model_name.startswith(FLOAT_PREFIX):
        return pathlib.Path(args.models_dir) / f"{model_name}.tflite"
    source = model_name[len(FLOAT_PREFIX):]
    cache = pathlib.Path(args.float_cache).expanduser()
    cache.mkdir(parents=True, exist_ok=True)
    twin = cache / f"{source}.float32.tflite"
    if not twin.exists():
        subprocess.run([args.float_model, str(pathlib.Path(args.models_dir) / f"{source}.tflite"),
                        str(twin)], check=True)
    return twin


def compare(row_name, threads, args, tmp_dir):
    isa, model_name = split_row(row_name)
    model = model_path(model_name, args)
    env = dict(os.environ)
    env.pop("DELEGATO_ISA", None)
    litert_env = None  # inherited
    masked = bool(isa and args.avx2_preload)
    if isa:
        env["DELEGATO_ISA"] = isa
    if masked:
        # Both engines see a CPU without AVX-512 / AVX-VNNI (bench/cpu_mask).
        preload = " ".join(p for p in (os.environ.get("LD_PRELOAD"), args.avx2_preload) if p)
        env["LD_PRELOAD"] = preload
        litert_env = dict(os.environ, LD_PRELOAD=preload)
    litert_path, note = loadable_model_path(model, tmp_dir)
    inputs = random_inputs(litert_path, args.seed, tmp_dir)
    delegato_argv = [args.time_model, str(model), "--num_threads", str(threads)]
    for i, path in enumerate(inputs):
        delegato_argv += ["--input", f"{i}={path}"]
    litert_argv = [sys.executable, __file__, "--serve-litert", str(litert_path),
                   "--num_threads", str(threads), "--inputs", *map(str, inputs)]
    delegato = Runner("delegato", delegato_argv, env)
    litert = Runner("LiteRT", litert_argv, litert_env)
    runners = [delegato, litert]
    before = None
    if args.before_time_model and threads == 1:
        # An earlier build of delegato, interleaved with the other two: the
        # "before" of a change, measured under the same load.
        before = Runner("delegato before", [args.before_time_model] + delegato_argv[1:], env)
        runners.append(before)
    # Batches of about args.batch_seconds each, from the first inference.
    first = max(delegato.info["first_inference_ms"], litert.info["first_inference_ms"], 0.05)
    count = max(1, min(500, int(args.batch_seconds * 1e3 / first)))
    # Bounded: a model slower than a batch gets fewer rounds (at least 3).
    rounds = args.rounds if first * 3 <= args.batch_seconds * 1e3 else max(3, args.rounds // 2)
    for runner in runners:  # warm-up, not recorded
        runner.run(max(1, count // 3))
        runner.wall.clear()
        runner.cpu.clear()
    for r in range(rounds):
        for runner in (runners if r % 2 == 0 else runners[::-1]):
            runner.run(count)
    for runner in runners:
        runner.finish()
    reference_ms = None
    if args.reference_runs > 0 and threads == 1 and isa is None:
        # The same binary with the reference kernel set: the "before" figure.
        reference = Runner("delegato reference", delegato_argv + ["--kernels", "reference"], env)
        reference.run(args.reference_runs)
        reference.finish()
        reference_ms = statistics.median(reference.wall)
    row = {"model": row_name, "threads": threads, "note": note, "samples": len(delegato.wall),
           "kind": model_kind(model_name), "isa": isa or "default", "rounds": rounds,
           "cpu_masked": masked, "delegato_isa": delegato.info.get("isa")}
    for key, runner in (("delegato", delegato), ("litert", litert)):
        row[key] = {
            "median_ms": statistics.median(runner.wall),
            # Mean, not median: Linux charges a thread that runs without
            # sleeping (a spinning worker) to the process clock at scheduler
            # ticks, so single-inference CPU deltas are lumpy; their sum over
            # the batch is exact to a tick.
            "cpu_mean_ms": statistics.fmean(runner.cpu) if runner.cpu else None,
            "init_ms": runner.info["init_ms"],
            "first_inference_ms": runner.info["first_inference_ms"],
            "peak_rss_mb": runner.info["peak_rss_mb"],
            "rss_before_load_mb": runner.info["rss_before_load_mb"],
        }
    row["reference_kernels_ms"] = reference_ms
    if before is not None:
        row["before"] = {"median_ms": statistics.median(before.wall),
                         "cpu_mean_ms": statistics.fmean(before.cpu) if before.cpu else None}
    row["ratio"] = row["delegato"]["median_ms"] / row["litert"]["median_ms"]
    if row["delegato"]["cpu_mean_ms"] and row["litert"]["cpu_mean_ms"]:
        row["cpu_ratio"] = row["delegato"]["cpu_mean_ms"] / row["litert"]["cpu_mean_ms"]
    return row


# ------------------------------------------------------------- micro-benchmarks

def run_kernels_bench(path, min_time):
    out = subprocess.run([path, f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["benchmarks"]


ISA_NAMES = {"-1": "reference", "0": "scalar", "1": "avx2", "2": "avx512vnni", "3": "amx"}


def kernels_table(benchmarks):
    rows, peak = {}, None
    for b in benchmarks:
        if b.get("error_occurred"):
            continue
        if b["name"].startswith("BM_Peak"):
            # The widest int8 multiply-add this CPU has: vpdpbusd (AVX-512 VNNI) over
            # vpmaddwd (AVX2).
            instruction = b["name"][len("BM_Peak"):].split("/")[0].lower()
            if peak is None or instruction == "vpdpbusd":
                peak = {"instruction": instruction, "mac_per_s": b["items_per_second"]}
            continue
        layer, _, isa = b["name"].rpartition("/isa:")
        rows.setdefault(layer, {})[ISA_NAMES.get(isa, isa)] = (
            b["cpu_time"], b["items_per_second"] / 1e9)
    return rows, peak


# ------------------------------------------------------------------- report

def cpu_description():
    model = "unknown CPU"
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    wanted = ["avx2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni", "amx_int8"]
    return model, [f for f in wanted if f in flags]


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def avx2_rows_sentence(rows, args):
    """The setup line on the avx2: rows: which of them ran both engines under the CPU mask."""
    state = getattr(args, "avx2_mask_state", None) or "off (an older run: no mask)"
    avx2 = [r for r in rows if r.get("isa") == "avx2"]
    masked = [r for r in avx2 if r.get("cpu_masked")]
    text = ("- Rows `avx2:...` restrict delegato to its AVX2 kernels (`DELEGATO_ISA=avx2`), as on "
            "a CPU without AVX-512. CPU mask (`--avx2-mask`, `bench/cpu_mask`): " + state + ". ")
    if avx2 and len(masked) == len(avx2):
        isas = sorted({r.get("delegato_isa") or "?" for r in masked})
        return text + ("Both engines ran those rows under `libdelegato_cpumask.so`, which makes "
                       "CPUID fault (Linux `ARCH_SET_CPUID`) and answers it with AVX-512, AMX and "
                       "AVX-VNNI hidden: LiteRT's XNNPACK picks its AVX2 kernels, so these rows "
                       "compare AVX2 with AVX2 (delegato's selected ISA: "
                       + ", ".join(isas) + ").")
    if masked:
        return text + (f"{len(masked)} of the {len(avx2)} avx2 rows ran both engines under the "
                       "mask (AVX2 with AVX2); the others ran LiteRT unmasked.")
    return text + ("LiteRT ran unmasked in those rows (XNNPACK picks its own ISA, on this CPU "
                   "its best), so they compare delegato's AVX2 path with LiteRT at its best on "
                   "this CPU, not AVX2 with AVX2.")


def write_report(rows, kernels, peak, macs, args, path):
    model_name, flags = cpu_description()
    has_vnni = "avx512_vnni" in flags
    import ai_edge_litert  # noqa: WPS433
    litert_version = getattr(ai_edge_litert, "__version__", "?")
    lines = [
        "# Performance: delegato vs LiteRT on this machine",
        "",
        f"Generated by `python3 bench/compare_litert.py` on {datetime.date.today()}; do not edit "
        "by hand (rerun the script).",
        "",
        "## Setup",
        "",
        f"- CPU: {model_name}, {os.cpu_count()} logical CPUs; features: {', '.join(flags)}. "
        f"Load average at the start: {args.load_before}.",
        f"- LiteRT: `ai_edge_litert` {litert_version}, default interpreter (its CPU path is the "
        "XNNPACK delegate), `num_threads` as in the table.",
        "- delegato: `bench/time_model` (the library's default optimized kernel set), same "
        "thread count.",
        avx2_rows_sentence(rows, args),
        "- Models: the shared 8-bit benchmark models; `float32:NAME`, the float32 twin of a "
        "shared model (`bench/float_model`); `zoo:NAME`, the converter-made models of "
        "`scripts/make_zoo.py` (TensorFlow's converter, random weights; `_int8` full integer, "
        "`_int16x8` 16-bit activations with 8-bit weights, `_dynamic` dynamic-range = hybrid: "
        "int8 weights, float activations). LiteRT runs int16x8 models with its own "
        "optimized kernels (XNNPACK has no int16x8 path).",
        f"- Inputs: the same seeded random tensors for both (seed {args.seed}).",
        f"- Method: both engines load the model once in their own process; the script alternates "
        f"batches of invocations between them ({args.rounds} rounds, fewer (at least 3) for a "
        "model slower than a third of a batch, order flipped each round, "
        f"about {args.batch_seconds}s per batch), so both see the same machine load. Reported: "
        "the median over all timed invocations. **Wall** is the latency a caller sees; **CPU** is "
        "the process CPU time per inference (all threads, including a worker spinning while it "
        "waits for the next op; the batch's total over its invocations), which other processes "
        "on a shared "
        "machine disturb less. Init: load + create + allocate (LiteRT's includes applying "
        "XNNPACK, which packs its weights then; delegato packs its weights in Prepare, inside "
        "allocate). Peak RSS: the process high-water mark; Δ subtracts the process's RSS before "
        "loading the model (for LiteRT, after importing `ai_edge_litert`: Python, numpy and the "
        "LiteRT library are excluded; delegato's library is part of its binary).",
        "- The machine is shared (2 cores); other jobs ran at the same time, so absolute numbers "
        "are noisy; ratios from interleaved runs are the meaningful figures.",
        "",
        "## Latency",
        "",
        "| model | threads | delegato wall ms | LiteRT wall ms | ratio (wall) | delegato CPU ms | "
        "LiteRT CPU ms | ratio (CPU) | init ms delegato / LiteRT | peak RSS MB delegato / LiteRT "
        "| Δ RSS MB delegato / LiteRT | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for r in rows:
        d, l = r["delegato"], r["litert"]
        goal = row_goal(r["model"], has_vnni)
        flag = " ⚠" if r["ratio"] > goal else ""
        lines.append(
            f"| `{r['model']}` | {r['threads']} | {fmt(d['median_ms'])} | {fmt(l['median_ms'])} "
            f"| **{fmt(r['ratio'])}**{flag} | {fmt(d['cpu_mean_ms'])} | {fmt(l['cpu_mean_ms'])} "
            f"| {fmt(r.get('cpu_ratio'))} | {fmt(d['init_ms'], 1)} / {fmt(l['init_ms'], 1)} "
            f"| {fmt(d['peak_rss_mb'], 1)} / {fmt(l['peak_rss_mb'], 1)} "
            f"| {fmt(d['peak_rss_mb'] - d['rss_before_load_mb'], 1)} / "
            f"{fmt(l['peak_rss_mb'] - l['rss_before_load_mb'], 1)} | {goal:.1f} |")
        note = f"`{r['model']}`: {r['note']}."
        if r["note"] and note not in notes:
            notes.append(note)
    slower = [f"`{r['model']}` at {r['threads']} thread(s) ({r['ratio']:.2f}, CPU "
              f"{fmt(r.get('cpu_ratio'))})"
              for r in rows if r["ratio"] > row_goal(r["model"], has_vnni)]
    lines.append("")
    lines.append("Goal (issue 17): a ratio of at most 0.7 for 8-bit models on AVX-512 VNNI, 1.0 "
                 "for every other row; ⚠ marks a wall-clock ratio above it.")
    lines.append("")
    if slower:
        lines.append("Above the goal in this run (wall-clock ratio, CPU-time ratio): "
                     + "; ".join(slower) + ".")
    else:
        lines.append("Every row is at or below its goal in this run.")
    more_memory = [f"`{r['model']}` at {r['threads']} thread(s)" for r in rows
                   if r["delegato"]["peak_rss_mb"] - r["delegato"]["rss_before_load_mb"]
                   > r["litert"]["peak_rss_mb"] - r["litert"]["rss_before_load_mb"]]
    if more_memory:
        lines.append("")
        lines.append("Δ RSS above LiteRT's: " + "; ".join(more_memory) + ".")
    for n in notes:
        lines += ["", n]

    changed = [r for r in rows if r.get("before")]
    if changed:
        lines += ["", "## Before / after this change (delegato, 1 thread, same run)", "",
                  f"`before`: delegato built from {args.before_label}, run as a third process "
                  "interleaved with the two above (same rounds, same inputs); `after`: this "
                  "build (the table above). Ratios are to LiteRT's figure in the same run: "
                  "wall-clock medians, and CPU time per inference (steadier on a loaded "
                  "machine).", "",
                  "| model | before ms | after ms | before / LiteRT | after / LiteRT | "
                  "before CPU ms | after CPU ms | before / LiteRT (CPU) | after / LiteRT (CPU) "
                  "| after / before (CPU) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in changed:
            b, a, l = r["before"]["median_ms"], r["delegato"]["median_ms"], r["litert"]["median_ms"]
            bc, ac = r["before"]["cpu_mean_ms"], r["delegato"]["cpu_mean_ms"]
            lc = r["litert"]["cpu_mean_ms"]
            cpu = (f"{fmt(bc)} | {fmt(ac)} | {bc / lc:.2f} | {ac / lc:.2f} | {ac / bc:.2f}"
                   if bc and ac and lc else "- | - | - | - | -")
            lines.append(f"| `{r['model']}` | {b:.2f} | {a:.2f} | {b / l:.2f} | {a / l:.2f} "
                         f"| {cpu} |")

    befores = [r for r in rows if r.get("reference_kernels_ms")]
    if befores:
        lines += ["", "## Before / after (delegato, 1 thread)", "",
                  "The same binary with `--kernels reference` (the bit-exact reference kernels, "
                  f"median of {args.reference_runs} runs, not interleaved) and with the default "
                  "optimized kernels (median from the table above). Outputs are identical "
                  "(float32 rows: equal up to rounding, the vector kernels sum in another "
                  "order).", "",
                  "| model | reference kernels ms | optimized kernels ms | speed-up |",
                  "|---|---:|---:|---:|"]
        for r in befores:
            b, a = r["reference_kernels_ms"], r["delegato"]["median_ms"]
            lines.append(f"| `{r['model']}` | {b:.1f} | {a:.2f} | {b / a:.0f}x |")

    if macs:
        lines += ["", "## MobileNet v2: achieved MAC/s vs the CPU's int8 peak", ""]
        if peak:
            rate = peak["mac_per_s"]
            if peak["instruction"] == "vpdpbusd":
                lines.append(
                    f"Peak: `BM_PeakVpdpbusd` in `bench/kernels_bench` runs 24 independent "
                    f"`vpdpbusd zmm` (64 int8 multiply-adds each) per loop iteration in assembly, "
                    f"registers only, and measured **{rate / 1e9:.0f} GMAC/s per core** (CPU time) "
                    f"— {rate / 64 / 1e9:.2f} G instructions/s. Peak for N threads = N times that.")
            else:
                lines.append(
                    f"Peak: this CPU has no AVX-512 VNNI; `BM_PeakVpmaddwd` in "
                    f"`bench/kernels_bench` runs 12 independent `vpmaddwd ymm` (16 multiply-adds "
                    f"of int16-widened int8 each, what both engines' AVX2 GEMMs use) per loop "
                    f"iteration in assembly, registers only, and measured **{rate / 1e9:.0f} "
                    f"GMAC/s per core** (CPU time) — {rate / 16 / 1e9:.2f} G instructions/s. "
                    "Peak for N threads = N times that. (`vpmaddubsw` would count 32 per "
                    "instruction but saturates its pair sums, so exact kernels cannot use it "
                    "on arbitrary int8 data.)")
        lines.append("")
        lines.append(f"`{MAC_MODEL}`: {macs / 1e6:.1f} M MACs per inference "
                     "(CONV_2D + DEPTHWISE_CONV_2D + FULLY_CONNECTED).")
        lines.append("")
        lines.append("| threads | engine | median wall ms | GMAC/s (wall) | CPU ms | "
                     "GMAC/s per busy core (CPU time) | % of peak |")
        lines.append("|---:|---|---:|---:|---:|---:|---:|")
        for r in rows:
            if r["model"] != MAC_MODEL:
                continue
            for key, name in (("delegato", "delegato"), ("litert", "LiteRT")):
                e = r[key]
                wall_rate = macs / (e["median_ms"] * 1e-3) / 1e9
                cpu_rate = macs / (e["cpu_mean_ms"] * 1e-3) / 1e9 if e["cpu_mean_ms"] else None
                pct = (f"{100 * wall_rate * 1e9 / (peak['mac_per_s'] * r['threads']):.1f}%"
                       if peak else "-")
                lines.append(f"| {r['threads']} | {name} | {fmt(e['median_ms'])} | "
                             f"{wall_rate:.1f} | {fmt(e['cpu_mean_ms'])} | {fmt(cpu_rate, 1)} "
                             f"| {pct} |")
        lines.append("")
        lines.append("% of peak = GMAC/s (wall) / (threads x per-core peak). The whole model "
                     "runs far below the peak: besides the 1x1 convolutions (which reach a large "
                     "share of it, see the kernel table), depthwise convolutions, requantization, "
                     "im2col, residual ADDs and memory traffic are not multiply-add bound.")

    if kernels:
        lines += ["", "## Optimized kernels (micro-benchmarks)", "",
                  "`bench/kernels_bench` (Google Benchmark), one thread, MobileNet v2 layer shapes, "
                  "int8 with per-channel requantization; each cell is CPU µs per call and throughput in "
                  "GMAC/s (convolutions, FULLY_CONNECTED) or G output elements/s (the others). "
                  "`reference` is the bit-exact reference kernel; the others are the optimized "
                  "kernel forced to one ISA (every ISA gives identical results). "
                  "`conv_hybrid` and `fully_connected_hybrid`: dynamic-range (float input "
                  "quantized on every call, int8 weights, float output) as the op runs them, "
                  "the quantization included. `amx`: the int8 GEMM (CONV_2D, FULLY_CONNECTED) "
                  "on AMX tiles within avx512vnni, which then runs without them; by default "
                  "layers of at least 64 taps use them.", "",
                  "| kernel / layer | reference | scalar | avx2 | avx512vnni | amx | speed-up vs reference |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for layer, cells in kernels.items():
            def cell(isa):
                return "-" if isa not in cells else f"{cells[isa][0]:.0f} µs, {cells[isa][1]:.1f}"
            best = min((v[0] for k, v in cells.items() if k != "reference"), default=None)
            speedup = (f"{cells['reference'][0] / best:.0f}x" if best and "reference" in cells
                       else "-")
            lines.append(f"| `{layer}` | {cell('reference')} | {cell('scalar')} | {cell('avx2')} "
                         f"| {cell('avx512vnni')} | {cell('amx')} | {speedup} |")

    extra = REPO / "docs" / "performance_notes.md"
    if extra.exists():
        lines += ["", extra.read_text().rstrip()]
    path.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve-litert", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--num_threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--time-model", default=str(REPO / "build" / "time_model"))
    parser.add_argument("--kernels-bench", help="bench/kernels_bench binary (optional)")
    parser.add_argument("--kernels-min-time", type=float, default=0.3)
    parser.add_argument("--models-dir",
                        default=os.environ.get("DELEGATO_SHARED_DIR",
                                               str(REPO.parent / "shared")) + "/models")
    parser.add_argument("--models", nargs="*", default=DEFAULT_MODELS,
                        help="rows to run: names or shell patterns, matched with and without "
                        "the avx2: prefix (default: all); float32:NAME is NAME's float32 twin, "
                        "zoo:NAME a converter-made model")
    parser.add_argument("--isa", nargs="*", default=["default", "avx2"],
                        choices=["default", "avx2"],
                        help="delegato's kernel sets to measure: default (the best this CPU "
                        "has) and/or avx2 (the avx2: rows)")
    parser.add_argument("--avx2-mask", choices=["auto", "on", "off"], default="auto",
                        help="run both engines of the avx2: rows under bench/cpu_mask (AVX-512, "
                        "AMX and AVX-VNNI hidden from CPUID): auto = when CPUID faulting works "
                        "(default), on = fail otherwise, off = LiteRT unmasked")
    parser.add_argument("--cpu-mask", default=str(REPO / "build" / "libdelegato_cpumask.so"),
                        help="the CPU mask library (built by CMake on x86-64 Linux)")
    parser.add_argument("--zoo-dir", default="~/.cache/delegato/zoo/v1",
                        help="the converter-made models (scripts/make_zoo.py)")
    parser.add_argument("--float-model", default=str(REPO / "build" / "float_model"),
                        help="bench/float_model binary (makes the float32 twins)")
    parser.add_argument("--float-cache", default="~/.cache/delegato/float_models",
                        help="where the float32 twins are kept (outside the repository)")
    parser.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--batch-seconds", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default=str(REPO / "docs" / "performance.md"))
    parser.add_argument("--json", help="also write the raw results here")
    parser.add_argument("--reference-runs", type=int, default=5,
                        help="also time delegato's reference kernels (1 thread); 0 to skip")
    parser.add_argument("--from-json", help="rewrite the report from a --json file, no runs")
    parser.add_argument("--before-time-model",
                        help="an earlier build's time_model, interleaved at 1 thread (before/after)")
    parser.add_argument("--before-label", default="an earlier commit",
                        help="what --before-time-model was built from (for the report)")
    args = parser.parse_args()
    if args.serve_litert:
        serve_litert(args)
        return
    if args.from_json:
        saved = json.loads(pathlib.Path(args.from_json).read_text())
        for key, value in saved.get("args", {}).items():
            setattr(args, key, value)
        peak = saved.get("peak") or (  # older files: a vpdpbusd rate
            {"instruction": "vpdpbusd", "mac_per_s": saved["peak_mac_per_s"]}
            if saved.get("peak_mac_per_s") else None)
        for row in saved["rows"]:  # older files: a per-inference median CPU time
            for engine in ("delegato", "litert"):
                if "cpu_median_ms" in row.get(engine, {}):
                    row[engine]["cpu_mean_ms"] = row[engine].pop("cpu_median_ms")
        write_report(saved["rows"], saved["kernels"], peak, saved["macs"],
                     args, pathlib.Path(args.output))
        print(f"wrote {args.output}")
        return
    args.load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    args.avx2_preload, args.avx2_mask_state = None, "not used (no avx2 rows)"
    if "avx2" in args.isa:
        args.avx2_preload, args.avx2_mask_state = avx2_mask_state(args)
        print(f"CPU mask for the avx2 rows: {args.avx2_mask_state}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in select_rows(args.models, args.isa):
            if not model_path(split_row(model)[1], args).exists() and model.find(ZOO_PREFIX) >= 0:
                print(f"{model}: not in the zoo (the converter cannot make it), skipped", flush=True)
                continue
            for threads in args.threads:
                row = compare(model, threads, args, tmp)
                rows.append(row)
                print(f"{model:44s} t={threads} delegato {row['delegato']['median_ms']:8.2f} ms  "
                      f"LiteRT {row['litert']['median_ms']:8.2f} ms  ratio {row['ratio']:.2f}  "
                      f"(CPU ratio {row.get('cpu_ratio', float('nan')):.2f})", flush=True)
    kernels, peak = ({}, None)
    if args.kernels_bench:
        kernels, peak = kernels_table(run_kernels_bench(args.kernels_bench, args.kernels_min_time))
    macs = None
    if any(r["model"] == MAC_MODEL for r in rows):
        macs = model_macs(pathlib.Path(args.models_dir) / f"{MAC_MODEL}.tflite")
    write_report(rows, kernels, peak, macs, args, pathlib.Path(args.output))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"rows": rows, "kernels": kernels, "peak": peak, "macs": macs,
             "args": {k: getattr(args, k) for k in ("rounds", "batch_seconds", "seed",
                                                    "load_before", "reference_runs",
                                                    "before_label", "avx2_mask_state")}},
            indent=1))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
