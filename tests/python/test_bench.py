"""`delegato bench` speaks benchmark_model's language: the same flags and the
same output lines, so the scripts and greps users already have keep working.

Every regular expression below is checked against real benchmark_model output
(the TFLITE_* fixtures, quoted from published logs) AND against delegato's
output, so the two cannot drift apart. Timings are never asserted."""
import csv
import io
import json
import re
import subprocess

import pytest

# Short runs everywhere: the format is under test, not the speed.
QUICK = ["--num_runs=3", "--min_secs=0", "--warmup_runs=1", "--warmup_min_secs=0"]

# ---------------------------------------------------------------- fixtures
# Lines printed by TFLite's benchmark_model (2.x; newer versions prefix "INFO: ").
TFLITE_LOG = """\
INFO: STARTING!
INFO: Log parameter values verbosely: [0]
INFO: Graph: [/data/local/tmp/mobilenet_v1_0.25_224_quant.tflite]
INFO: NNAPI accelerator name: [synap-npu]
VERBOSE: Replacing 31 out of 31 node(s) with delegate (TfLiteNnapiDelegate) node, yielding 1 partitions for the whole graph.
INFO: Explicitly applied NNAPI delegate, and the model graph will be completely executed by the delegate.
INFO: The input model file size (MB): 0.497264
INFO: Initialized session in 66.002ms.
INFO: Running benchmark for at least 1 iterations and at least 0.5 seconds but terminate if exceeding 150 seconds.
INFO: count=1 curr=637079
INFO: Running benchmark for at least 50 iterations and at least 1 seconds but terminate if exceeding 150 seconds.
INFO: count=520 first=2531 curr=2793 min=1171 max=9925 avg=1885.74 std=870
INFO: Inference timings in us: Init: 66002, First inference: 637079, Warmup (avg): 637079, Inference (avg): 1885.74
INFO: Memory footprint delta from the start of the tool (MB): init=7.40234 overall=7.83203
"""
TFLITE_PARTIAL = ("Explicitly applied NNAPI delegate, and the model graph will be partially executed "
                  "by the delegate w/ 4 delegate kernels.")
TFLITE_TIMINGS_SCIENTIFIC = ("Inference timings in us: Init: 34075, First inference: 1599062, "
                             "Warmup (avg): 1.59906e+06, Inference (avg): 1380.86")
TFLITE_STAT_LONG = "count=50 first=68293 curr=66811 min=66170 max=70650 avg=68201.1 std=1021"
TFLITE_PEAK = "Peak memory footprint (MB): init=0 overall=4.65234"
TFLITE_PROFILE = """\
Operator-wise Profiling Info for Regular Benchmark Runs:
============================== Run Order ==============================
\t             [node type]\t  [first]\t [avg ms]\t     [%]\t  [cdf%]\t  [mem KB]\t[times called]\t[Name]
\t     TfLiteNnapiDelegate\t    6.458\t    6.441\t  9.446%\t  9.446%\t     0.000\t        1\t[Identity]:219
\t   TfLiteXNNPackDelegate\t   12.543\t   13.381\t 19.624%\t100.000%\t     0.000\t        1\t[tfl.quantize, tfl.quantize2]:220

============================== Top by Computation Time ==============================
\t             [node type]\t  [first]\t [avg ms]\t     [%]\t  [cdf%]\t  [mem KB]\t[times called]\t[Name]
\t   TfLiteXNNPackDelegate\t   12.543\t   13.381\t 19.624%\t 19.624%\t     0.000\t        1\t[tfl.quantize, tfl.quantize2]:220
\t     TfLiteNnapiDelegate\t    6.458\t    6.441\t  9.446%\t100.000%\t     0.000\t        1\t[Identity]:219

Number of nodes executed: 2
============================== Summary by node type ==============================
\t             [Node type]\t  [count]\t  [avg ms]\t    [avg %]\t    [cdf %]\t  [mem KB]\t[times called]
\t     TfLiteNnapiDelegate\t        4\t    40.564\t    59.495%\t    59.495%\t     0.000\t        4
\t   TfLiteXNNPackDelegate\t        3\t    27.616\t    40.505%\t   100.000%\t     0.000\t        3

Timings (microseconds): count=50 first=68272 curr=66794 min=66156 max=70634 avg=68184.7 std=1022
Memory (bytes): count=0
2 nodes observed

Delegate internal: 
============================== Run Order ==============================
\t             [node type]\t  [first]\t [avg ms]\t     [%]\t  [cdf%]\t  [mem KB]\t[times called]\t[Name]
\t        DelegateOpInvoke\t    0.265\t    0.283\t  1.025%\t  1.025%\t     0.000\t        1\tDelegate/Convert (NC, F32, QS8):5
"""
TFLITE_INIT_ROW = ("\t ModifyGraphWithDelegate\t 1614.218\t  808.024\t 50.129%\t 50.129%\t  1252.000\t"
                   "        2\tModifyGraphWithDelegate/0")

# ---------------------------------------------------------------- patterns
P = r"^(?:INFO: )?"  # benchmark_model >= 2.13 prefixes its log lines
NUM = r"-?(?:\d+(?:\.\d*)?(?:e[+-]\d+)?|nan|inf)"  # C++ default stream formatting
STAT = rf"count=(\d+)(?: first=(\d+))? curr=(\d+)(?:\(all same\)| min=(\d+) max=(\d+) avg=({NUM}) std=(\d+))?"
PATTERNS = {
    "starting": re.compile(P + r"STARTING!$", re.M),
    "graph": re.compile(P + r"Graph: \[(.*)\]$", re.M),
    "model_size": re.compile(P + rf"The input model file size \(MB\): ({NUM})$", re.M),
    "init": re.compile(P + rf"Initialized session in ({NUM})ms\.$", re.M),
    "running": re.compile(P + rf"Running benchmark for at least (\d+) iterations and at least ({NUM}) seconds "
                          rf"but terminate if exceeding ({NUM}) seconds\.$", re.M),
    "stat": re.compile(P + STAT + "$", re.M),
    "timings": re.compile(P + rf"Inference timings in us: Init: (\d+), First inference: (\d+), "
                          rf"Warmup \(avg\): ({NUM}), Inference \(avg\): ({NUM})$", re.M),
    "memory": re.compile(P + rf"Memory footprint delta from the start of the tool \(MB\): "
                         rf"init=({NUM}) overall=({NUM})$", re.M),
    "peak": re.compile(P + rf"Peak memory footprint \(MB\): init=({NUM}) overall=({NUM})$", re.M),
    "applied": re.compile(P + r"Explicitly applied (\S+) delegate, and the model graph will be "
                          r"(?:completely executed by the delegate|partially executed by the delegate "
                          r"w/ (\d+) delegate kernels)\.$", re.M),
    "replacing": re.compile(r"^(?:VERBOSE: )?Replacing (\d+) out of (\d+) node\(s\) with delegate \((\S+)\) "
                            r"node, yielding (\d+) partitions for the whole graph\.$", re.M),
    "table_title": re.compile(r"^={30} (Run Order|Top by Computation Time|Summary by node type) ={30}$", re.M),
    "node_header": re.compile(r"^\t +\[node type\]\t +\[first\]\t +\[avg ms\]\t +\[%\]\t +\[cdf%\]\t +"
                              r"\[mem KB\]\t\[times called\]\t\[Name\]$", re.M),
    "node_row": re.compile(r"^\t *(\S+)\t *(\d+\.\d{3})\t *(\d+\.\d{3})\t *(\d+\.\d{3})%\t *(\d+\.\d{3})%\t *"
                           r"(\d+\.\d{3})\t *(\d+)\t(.+)$", re.M),
    "summary_header": re.compile(r"^\t +\[Node type\]\t +\[count\]\t +\[avg ms\]\t +\[avg %\]\t +\[cdf %\]\t +"
                                 r"\[mem KB\]\t\[times called\]$", re.M),
    "summary_row": re.compile(r"^\t *(\S+)\t *(\d+)\t *(\d+\.\d{3})\t *(\d+\.\d{3})%\t *(\d+\.\d{3})%\t *"
                              r"(\d+\.\d{3})\t *(\d+)$", re.M),
    "nodes_executed": re.compile(r"^Number of nodes executed: (\d+)$", re.M),
    "profile_timings": re.compile(r"^Timings \(microseconds\): " + STAT + "$", re.M),
    "node_name": re.compile(r"^\[.*\]:\d+$"),
}


def run(delegato_bin, *args, timeout=300):
    proc = subprocess.run([delegato_bin, "bench", *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    return proc


def quick_args(*args):
    """QUICK, minus the flags `args` sets itself (a flag given twice is an error)."""
    given = {a.split("=")[0] for a in args if a.startswith("--")}
    return [q for q in QUICK if q.split("=")[0] not in given] + list(args)


def bench_ok(delegato_bin, *args):
    proc = run(delegato_bin, *quick_args(*args))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def section(text, title):
    """The text of one profiling section (up to the next section title)."""
    start = text.index(title)
    following = [text.find(t, start + len(title)) for t in
                 ("Profiling Info for Benchmark Initialization:",
                  "Operator-wise Profiling Info for Regular Benchmark Runs:")]
    ends = [f for f in following if f > start]
    return text[start:min(ends) if ends else len(text)]


# ---------------------------------------------------------------- the patterns fit TFLite
@pytest.mark.parametrize("name", ["starting", "graph", "model_size", "init", "running", "stat", "timings",
                                  "memory", "applied", "replacing"])
def test_patterns_match_tflite_log(name):
    assert PATTERNS[name].search(TFLITE_LOG), name
    # Older benchmark_model (no "INFO: " prefix) matches too.
    unprefixed = re.sub(r"^(INFO|VERBOSE): ", "", TFLITE_LOG, flags=re.M)
    assert PATTERNS[name].search(unprefixed), name


def test_patterns_match_tflite_variants():
    m = PATTERNS["applied"].search(TFLITE_PARTIAL)
    assert m and m.group(2) == "4"
    assert PATTERNS["timings"].search(TFLITE_TIMINGS_SCIENTIFIC).group(3) == "1.59906e+06"
    assert PATTERNS["stat"].search(TFLITE_STAT_LONG).group(6) == "68201.1"
    assert PATTERNS["stat"].search("count=1 curr=637079")
    assert PATTERNS["peak"].search(TFLITE_PEAK)
    assert len(PATTERNS["running"].findall(TFLITE_LOG)) == 2
    assert len(PATTERNS["stat"].findall(TFLITE_LOG)) == 2


def test_patterns_match_tflite_profile():
    text = TFLITE_PROFILE
    assert [m for m in PATTERNS["table_title"].findall(text)][:3] == [
        "Run Order", "Top by Computation Time", "Summary by node type"]
    assert len(PATTERNS["node_header"].findall(text)) == 3
    rows = PATTERNS["node_row"].findall(text)
    assert len(rows) == 5
    assert rows[0][0] == "TfLiteNnapiDelegate" and rows[0][7] == "[Identity]:219"
    assert PATTERNS["node_name"].match(rows[1][7])
    assert PATTERNS["node_row"].search(TFLITE_INIT_ROW).group(8) == "ModifyGraphWithDelegate/0"
    assert PATTERNS["summary_header"].search(text)
    assert len(PATTERNS["summary_row"].findall(text)) == 2
    assert PATTERNS["nodes_executed"].search(text).group(1) == "2"
    assert PATTERNS["profile_timings"].search(text)
    assert "Delegate internal: \n" in text


# ---------------------------------------------------------------- delegato bench, demo model
def test_demo_model_log_has_benchmark_model_lines(delegato_bin):
    out = bench_ok(delegato_bin)
    for name in ["starting", "graph", "model_size", "init", "timings", "memory"]:
        assert PATTERNS[name].search(out), f"{name} missing from:\n{out}"
    running = PATTERNS["running"].findall(out)
    assert running == [("1", "0", "150"), ("3", "0", "150")]
    stats = [m.group(0) for m in PATTERNS["stat"].finditer(out)]
    assert len(stats) == 2, out
    counts = [int(PATTERNS["stat"].search(s).group(1)) for s in stats]
    assert counts[0] >= 1 and counts[1] >= 3
    init_us, first_us, warmup_avg, inference_avg = PATTERNS["timings"].search(out).groups()
    assert int(init_us) >= 0 and int(first_us) >= 0
    float(warmup_avg), float(inference_avg)
    assert "Peak memory footprint" not in out
    assert "Profiling Info" not in out


def test_stat_line_uses_integer_fields_and_default_float_format(delegato_bin):
    out = bench_ok(delegato_bin, "--num_runs=20")
    line = [m for m in PATTERNS["stat"].finditer(out)][-1]
    count = int(line.group(1))
    assert count >= 20
    if line.group(6) is not None:  # not "(all same)"
        avg = line.group(6)
        # At most 6 significant digits, as C++ streams print a double.
        assert len(re.sub(r"[^0-9]", "", avg.split("e")[0]).lstrip("0")) <= 6
        assert int(line.group(4)) <= float(avg) <= int(line.group(5))


def test_peak_memory_footprint(delegato_bin):
    out = bench_ok(delegato_bin, "--report_peak_memory_footprint")
    init_mb, overall_mb = PATTERNS["peak"].search(out).groups()
    assert float(overall_mb) >= float(init_mb) >= 0


def test_flags_in_both_spellings_and_logged(delegato_bin):
    out = bench_ok(delegato_bin, "--num_threads", "2", "--kernels=reference", "--seed", "7")
    assert re.search(P + r"Num threads: \[2\]$", out, re.M)
    assert re.search(P + r"Min num runs: \[3\]$", out, re.M)


def test_op_profiling_tables(delegato_bin, tmp_path):
    model = tmp_path / "demo.tflite"
    subprocess.run([delegato_bin, "generate", "-o", str(model)], check=True, capture_output=True)
    out = bench_ok(delegato_bin, f"--graph={model}", "--enable_op_profiling=true")
    assert PATTERNS["graph"].search(out).group(1) == str(model)
    init = section(out, "Profiling Info for Benchmark Initialization:")
    assert "AllocateTensors/0" in init
    runs = section(out, "Operator-wise Profiling Info for Regular Benchmark Runs:")
    assert PATTERNS["table_title"].findall(runs) == ["Run Order", "Top by Computation Time", "Summary by node type"]
    assert len(PATTERNS["node_header"].findall(runs)) == 2
    assert PATTERNS["summary_header"].search(runs)
    rows = PATTERNS["node_row"].findall(runs)
    executed = int(PATTERNS["nodes_executed"].search(runs).group(1))
    assert executed >= 5 and len(rows) == 2 * executed
    run_order = rows[:executed]
    # Run order is the execution order: node indices 0..N-1, names "[outputs]:index".
    assert [int(r[7].rsplit(":", 1)[1]) for r in run_order] == list(range(executed))
    assert all(PATTERNS["node_name"].match(r[7]) for r in run_order)
    assert {r[0] for r in run_order} >= {"CONV_2D", "SOFTMAX"}
    assert all(int(r[6]) == 1 for r in run_order)
    assert abs(float(run_order[-1][4]) - 100.0) < 0.01 or all(float(r[3]) == 0 for r in run_order)
    summary_types = {r[0] for r in PATTERNS["summary_row"].findall(runs)}
    assert summary_types == {r[0] for r in run_order}
    assert int(PATTERNS["profile_timings"].search(runs).group(1)) >= 3
    assert re.search(rf"^{executed} nodes observed$", runs, re.M)
    assert "Delegate internal" not in runs


def test_op_profiling_csv_file(delegato_bin, tmp_path):
    path = tmp_path / "profile.csv"
    out = bench_ok(delegato_bin, "--enable_op_profiling", "--op_profiling_output_mode=csv",
                   f"--op_profiling_output_file={path}")
    assert "Run Order" not in out
    text = path.read_text()
    assert "Operator-wise Profiling Info for Regular Benchmark Runs:" in text
    header = "node type, first, avg_ms, %, cdf%, mem KB, times called, name"
    lines = text.splitlines()
    start = lines.index(header, lines.index("Operator-wise Profiling Info for Regular Benchmark Runs:"))
    rows = []
    for line in lines[start + 1:]:
        if not line:
            break
        rows.append(next(csv.reader(io.StringIO(line), skipinitialspace=True)))
    assert len(rows) >= 5
    assert all(len(r) == 8 and r[3].endswith("%") and PATTERNS["node_name"].match(r[7]) for r in rows)
    assert "node type, count, avg_ms, avg %, cdf %, mem KB, times called" in text


def test_op_profiling_csv_on_stdout(delegato_bin):
    out = bench_ok(delegato_bin, "--enable_op_profiling", "--op_profiling_output_mode", "csv")
    assert "node type, first, avg_ms, %, cdf%, mem KB, times called, name" in out


def test_json_output(delegato_bin):
    out = bench_ok(delegato_bin, "--format=json", "--enable_op_profiling")
    result = json.loads(out)
    assert result["inference"]["count"] >= 3
    assert result["warmup"]["count"] >= 1
    assert result["init_us"] >= 0 and result["first_inference_us"] >= 0
    assert result["delegation"] is None
    nodes = result["profile"]["runs"]["nodes"]
    assert len(nodes) == result["profile"]["runs"]["nodes_executed"] >= 5
    assert {"name", "type", "avg_us", "first_us", "times_called"} <= set(nodes[0])
    assert "overall_mb" in result["memory"]


def test_input_layer_flags(delegato_bin, tmp_path):
    # The demo model's single input: uint8 [1,32,32,3].
    result = json.loads(bench_ok(delegato_bin, "--format=json"))
    data = tmp_path / "input.bin"
    data.write_bytes(bytes(range(256)) * 12)  # 3072 bytes = 1*32*32*3
    proc = run(delegato_bin, *QUICK, "--input_layer=input", "--input_layer_shape=1,32,32,3",
               "--input_layer_value_range=input,0,10", f"--input_layer_value_files=input:{data}")
    assert proc.returncode == 0, proc.stderr
    assert result["model"] == "<demo model>"


def test_wrong_input_layer_name(delegato_bin):
    proc = run(delegato_bin, *QUICK, "--input_layer=nope", "--input_layer_shape=1,32,32,3")
    assert proc.returncode == 1
    assert "'nope'" in proc.stderr and "'input'" in proc.stderr


def test_wrong_input_layer_rank(delegato_bin):
    proc = run(delegato_bin, *QUICK, "--input_layer=input", "--input_layer_shape=32,32,3")
    assert proc.returncode == 1
    assert "dimensions" in proc.stderr


def test_wrong_value_file_size(delegato_bin, tmp_path):
    data = tmp_path / "short.bin"
    data.write_bytes(b"\0" * 10)
    proc = run(delegato_bin, *QUICK, f"--input_layer_value_files=input:{data}")
    assert proc.returncode == 1
    assert "10 bytes" in proc.stderr and "3072 bytes" in proc.stderr


def test_missing_value_file(delegato_bin, tmp_path):
    proc = run(delegato_bin, *QUICK, f"--input_layer_value_files=input:{tmp_path / 'none.bin'}")
    assert proc.returncode == 1
    assert "none.bin" in proc.stderr


@pytest.mark.parametrize("args,needle", [
    (["--num_runz=3"], "unknown flag '--num_runz=3'"),
    (["--num_runs=many"], "--num_runs"),
    (["--op_profiling_output_mode=proto"], "--op_profiling_output_mode"),
    (["--format=xml"], "--format"),
    (["--kernels=fast"], "--kernels"),
    (["--input_layer=a,b", "--input_layer_shape=1,2"], "--input_layer_shape"),
    (["--input_layer=input", "--input_layer_shape=1,-1,32,3"], "-1"),
    (["--input_layer_value_range=input:0,10"], "--input_layer_value_range"),
    (["--input_layer_value_range=input,10,0"], "low <= high"),
    (["--input_layer_value_files=input"], "--input_layer_value_files"),
    (["--use_nnapi=true"], "--target"),
    (["--skip_nodes=1"], "needs --target"),
])
def test_bad_flags_are_usage_errors(delegato_bin, args, needle):
    proc = run(delegato_bin, *args)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert proc.stdout == ""


def test_unknown_flag_lists_valid_flags(delegato_bin):
    proc = run(delegato_bin, "--grpah=x.tflite")
    assert proc.returncode == 2
    for flag in ["--graph", "--num_runs", "--enable_op_profiling", "--target"]:
        assert flag in proc.stderr


def test_missing_model(delegato_bin, tmp_path):
    missing = tmp_path / "nope.tflite"
    proc = run(delegato_bin, *QUICK, f"--graph={missing}")
    assert proc.returncode == 1
    assert str(missing) in proc.stderr


def test_help(delegato_bin):
    proc = run(delegato_bin, "--help")
    assert proc.returncode == 0 and "--warmup_min_secs" in proc.stdout


# ---------------------------------------------------------------- shared models
def shared_model(shared_models, name):
    path = shared_models / name
    if not path.exists():
        pytest.skip(f"{name} not in {shared_models}")
    return str(path)


def test_shared_model_log(delegato_bin, shared_models):
    model = shared_model(shared_models, "mobilenet_v1_0.25_128_quant.tflite")
    out = bench_ok(delegato_bin, f"--graph={model}", "--enable_op_profiling")
    size = float(PATTERNS["model_size"].search(out).group(1))
    assert size > 0.1
    runs = section(out, "Operator-wise Profiling Info for Regular Benchmark Runs:")
    assert int(PATTERNS["nodes_executed"].search(runs).group(1)) == 31


DEEPLAB = "deeplabv3_mnv2_dm05_pascal_quant.tflite"


def test_partial_delegation_line(delegato_bin, shared_models):
    model = shared_model(shared_models, DEEPLAB)
    out = bench_ok(delegato_bin, f"--graph={model}", "--target=nnapi-1.2", "--enable_op_profiling")
    m = PATTERNS["applied"].search(out)
    assert m and m.group(1) == "nnapi-1.2" and m.group(2) == "3", out
    assert "w/ 3 delegate kernels." in out
    replaced, total, name, partitions = PATTERNS["replacing"].search(out).groups()
    assert name == "nnapi-1.2" and 0 < int(replaced) < int(total) and int(partitions) > 3
    assert re.search(P + r"nnapi-1\.2 delegate: \d+ nodes delegated out of \d+ nodes with \d+ partitions\.$",
                     out, re.M)
    init = section(out, "Profiling Info for Benchmark Initialization:")
    assert "ModifyGraphWithDelegate/0" in init
    runs = section(out, "Operator-wise Profiling Info for Regular Benchmark Runs:")
    graph_part, _, internal = runs.partition("Delegate internal: \n")
    rows = PATTERNS["node_row"].findall(graph_part)
    executed = int(PATTERNS["nodes_executed"].search(graph_part).group(1))
    delegate_rows = [r for r in rows[:executed] if r[0] == "nnapi-1.2"]
    assert len(delegate_rows) == 3
    # Delegate nodes are numbered after the model's nodes, as in TFLite.
    assert all(int(r[7].rsplit(":", 1)[1]) >= int(total) for r in delegate_rows)
    internal_rows = PATTERNS["node_row"].findall(internal)
    internal_executed = int(PATTERNS["nodes_executed"].search(internal).group(1))
    assert internal_executed == int(replaced)
    assert all(r[0] == "DelegateOpInvoke" and r[7].startswith("Delegate/") for r in internal_rows)


def test_require_full_delegation_fails_on_partial(delegato_bin, shared_models):
    model = shared_model(shared_models, DEEPLAB)
    proc = run(delegato_bin, *QUICK, f"--graph={model}", "--target=nnapi-1.2", "--require_full_delegation")
    assert proc.returncode == 1
    assert "Disallowed CPU fallback detected" in proc.stderr
    assert "w/ 3 delegate kernels" in proc.stderr


def test_json_delegation(delegato_bin, shared_models):
    model = shared_model(shared_models, DEEPLAB)
    result = json.loads(bench_ok(delegato_bin, f"--graph={model}", "--target=nnapi-1.2", "--format=json"))
    d = result["delegation"]
    assert d["delegate_kernels"] == 3 and not d["fully_delegated"]
    assert 0 < d["nodes_delegated"] < d["nodes_total"]


def test_full_delegation_line(delegato_bin, shared_models):
    model = shared_model(shared_models, "mobilenet_v1_0.25_128_quant.tflite")
    proc = run(delegato_bin, *QUICK, f"--graph={model}", "--target=nnapi-1.3", "--require_full_delegation")
    if proc.returncode != 0:
        pytest.skip("nnapi-1.3 does not take the whole model: " + proc.stderr.strip().splitlines()[-1])
    m = PATTERNS["applied"].search(proc.stdout)
    assert m and m.group(2) is None and "completely executed by the delegate" in m.group(0)


def test_cache_flags_reach_the_hook(delegato_bin, tmp_path):
    # Without --target nothing is compiled: the hook says so.
    out = bench_ok(delegato_bin, f"--delegate_serialize_dir={tmp_path}", "--delegate_serialize_token=abc")
    assert re.search(P + r"cache: ", out, re.M)
    # With an emulated target: a first run fills the cache, a second one hits it.
    first = bench_ok(delegato_bin, "--target=nnapi-1.3", f"--delegate_serialize_dir={tmp_path}")
    second = bench_ok(delegato_bin, "--target=nnapi-1.3", f"--delegate_serialize_dir={tmp_path}")
    assert re.search(P + r"cache: \S+", first, re.M)
    assert re.search(P + r"cache: hit", second, re.M)
    assert json.loads(bench_ok(delegato_bin, "--target=nnapi-1.3", f"--delegate_serialize_dir={tmp_path}",
                               "--format=json"))["cache"].startswith("cache: hit")


def test_serialize_token_needs_dir(delegato_bin):
    proc = run(delegato_bin, "--delegate_serialize_token=abc")
    assert proc.returncode == 2 and "--delegate_serialize_dir" in proc.stderr


def test_progress_only_on_a_terminal(delegato_bin):
    proc = run(delegato_bin, *QUICK)
    assert proc.returncode == 0
    assert "runs," not in proc.stderr  # stderr is a pipe here: no progress line


def test_sigint_stops_with_an_error_and_writes_no_results(delegato_bin, tmp_path):
    # SIGINT ends the loop after the invocation in flight: a clear error, a
    # non-zero exit, and no profile file under its final (or temporary) name.
    import signal
    import time
    profile = tmp_path / "profile.csv"
    proc = subprocess.Popen([delegato_bin, "bench", "--min_secs=60", "--max_secs=120",
                             "--warmup_min_secs=0", "--enable_op_profiling",
                             f"--op_profiling_output_file={profile}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The model loads and the one warm-up run ends well within this on any
    # machine; the benchmark phase then runs for a minute.
    time.sleep(3)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, (proc.returncode, err)
    assert "interrupted (SIGINT) during the benchmark phase" in err + out
    assert not profile.exists()
    assert list(tmp_path.iterdir()) == []
