"""The compilation cache through the CLI (--delegate_serialize_dir /
--delegate_serialize_token, `delegato cache ls|clear`): a visible line per
run, identical outputs whatever the cache directory holds, bad files
reported and rebuilt."""
import json
import re
import subprocess

import pytest

MOBILENET = "mobilenet_v1_0.25_128_quant.tflite"


def run(delegato_bin, *args, check=0):
    proc = subprocess.run([delegato_bin, *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def cache_line(stderr):
    lines = [l for l in stderr.splitlines() if l.startswith("cache: ")]
    assert len(lines) == 1, stderr
    match = re.match(r"cache: (hit|miss|stale|corrupt) (\S+)", lines[0])
    assert match, lines[0]
    return match.group(1), match.group(2), lines[0]


@pytest.fixture
def model(shared_models):
    return shared_models / MOBILENET


def run_cached(delegato_bin, model, cache_dir, out_dir, *extra):
    proc = run(delegato_bin, "run", f"--graph={model}", "--target=nnapi-1.2", "--skip_nodes=10", "--seed=3",
               f"--delegate_serialize_dir={cache_dir}", f"--output_dir={out_dir}", *extra)
    status, path, line = cache_line(proc.stderr)
    return status, path, line, (out_dir / "output_0.npy").read_bytes()


def test_miss_hit_and_bad_files(delegato_bin, model, tmp_path):
    expected_dir = tmp_path / "cpu"
    run(delegato_bin, "run", f"--graph={model}", "--seed=3", f"--output_dir={expected_dir}")
    expected = (expected_dir / "output_0.npy").read_bytes()
    cache = tmp_path / "cache"

    status, path, line, out = run_cached(delegato_bin, model, cache, tmp_path / "o1")
    assert status == "miss" and "written" in line
    assert out == expected
    assert re.search(r"/mobilenet_v1_0\.25_128_quant_[0-9a-f]{16}\.bin$", path), path
    status, path2, _, out = run_cached(delegato_bin, model, cache, tmp_path / "o2")
    assert (status, path2, out) == ("hit", path, expected)

    entry = open(path, "rb").read()
    damaged = bytearray(entry)
    damaged[len(damaged) // 2] ^= 0x10
    for name, content in [("byte", bytes(damaged)), ("truncated", entry[:100]), ("empty", b""),
                          ("garbage", b"\x00garbage" * 300), ("foreign", b"\x89PNG\r\n\x1a\n" + entry[8:])]:
        open(path, "wb").write(content)
        status, _, line, out = run_cached(delegato_bin, model, cache, tmp_path / f"o_{name}")
        assert status == "corrupt", f"{name}: {line}"
        assert "rewritten" in line
        assert out == expected, name
        status, _, _, out = run_cached(delegato_bin, model, cache, tmp_path / f"o_{name}_again")
        assert status == "hit", name
        assert out == expected


def test_other_options_and_tokens_are_other_entries(delegato_bin, model, tmp_path):
    cache = tmp_path / "cache"
    _, first, _, _ = run_cached(delegato_bin, model, cache, tmp_path / "a")
    status, other, _, _ = run_cached(delegato_bin, model, cache, tmp_path / "b", "--max_delegated_partitions=1")
    assert status == "miss" and other != first
    status, tok, _, _ = run_cached(delegato_bin, model, cache, tmp_path / "c", "--delegate_serialize_token=abc/def")
    assert status == "miss" and "/abc_def_" in tok
    # Swapping two entries: each is stale for the other key.
    a, b = open(first, "rb").read(), open(other, "rb").read()
    open(first, "wb").write(b)
    status, _, line, _ = run_cached(delegato_bin, model, cache, tmp_path / "d")
    assert status == "stale" and "another model" in line, line
    assert run_cached(delegato_bin, model, cache, tmp_path / "e")[0] == "hit"

    listing = json.loads(run(delegato_bin, "cache", "ls", str(cache), "--format=json").stdout)
    assert len(listing["entries"]) == 3
    for entry in listing["entries"]:
        assert entry["status"] == "ok", entry
        assert {s["type"] for s in entry["sections"]} >= {"placement", "partitions", "device_compile"}
        assert entry["nodes"] == 31
        assert all("device_arena_bytes" in p for p in entry["partitions"])
    text = run(delegato_bin, "cache", "ls", str(cache)).stdout
    assert "3 entries" in text and "token=abc/def" in text and "partition 0:" in text

    (cache / "keep.txt").write_text("not ours")
    out = run(delegato_bin, "cache", "clear", str(cache), "--token=abc/def").stdout
    assert "removed 1 file" in out
    out = run(delegato_bin, "cache", "clear", str(cache)).stdout
    assert "removed 2 files" in out
    assert [p.name for p in cache.iterdir()] == ["keep.txt"]


def test_cache_ls_reports_a_damaged_entry(delegato_bin, model, tmp_path):
    cache = tmp_path / "cache"
    _, path, _, _ = run_cached(delegato_bin, model, cache, tmp_path / "a")
    open(path, "ab").write(b"xx")
    entry = json.loads(run(delegato_bin, "cache", "ls", str(cache), "--format=json").stdout)["entries"][0]
    assert entry["status"] == "corrupt" and "trailing" in entry["detail"]


def test_flag_errors(delegato_bin, model, tmp_path):
    proc = run(delegato_bin, "run", f"--graph={model}", "--target=nnapi-1.2", "--delegate_serialize_token=x", check=2)
    assert "--delegate_serialize_token needs --delegate_serialize_dir" in proc.stderr
    proc = run(delegato_bin, "run", f"--graph={model}", "--delegate_serialize_token=x", check=2)
    assert "--delegate_serialize_token needs --delegate_serialize_dir" in proc.stderr
    assert "ls or clear" in run(delegato_bin, "cache", "list", str(tmp_path), check=2).stderr
    assert "not a directory" in run(delegato_bin, "cache", "ls", str(tmp_path / "nope"), check=1).stderr


def test_cpu_only_entry_holds_packed_weights(delegato_bin, model, tmp_path):
    """Without --target the entry holds the optimized kernels' packed weights:
    a hit loads every one of them, a damaged entry is rebuilt, and outputs
    never change."""
    expected_dir = tmp_path / "plain"
    run(delegato_bin, "run", f"--graph={model}", "--seed=3", f"--output_dir={expected_dir}")
    expected = (expected_dir / "output_0.npy").read_bytes()
    cache = tmp_path / "cache"

    def cpu_run(out):
        proc = run(delegato_bin, "run", f"--graph={model}", "--seed=3", f"--delegate_serialize_dir={cache}",
                   f"--output_dir={tmp_path / out}")
        status, path, line = cache_line(proc.stderr)
        return status, path, line, (tmp_path / out / "output_0.npy").read_bytes()

    status, path, line, out = cpu_run("o1")
    packed = re.search(r"packed weights: 0 loaded, (\d+) packed", line)
    assert status == "miss" and packed and int(packed.group(1)) > 0, line
    assert out == expected
    status, path2, line, out = cpu_run("o2")
    assert (status, path2, out) == ("hit", path, expected)
    assert f"packed weights: {packed.group(1)} loaded, 0 packed" in line, line

    entry = open(path, "rb").read()
    damaged = bytearray(entry)
    damaged[len(damaged) * 3 // 4] ^= 0x01  # inside the packed weights
    open(path, "wb").write(bytes(damaged))
    status, _, line, out = cpu_run("o3")
    assert status == "corrupt" and out == expected, line
    status, _, _, out = cpu_run("o4")
    assert status == "hit" and out == expected

    proc = run(delegato_bin, "run", f"--graph={model}", "--kernels=reference", f"--delegate_serialize_dir={cache}")
    assert "cache: not used" in proc.stderr


def test_bench_reports_the_cache(delegato_bin, model, tmp_path):
    help_text = run(delegato_bin, "bench", "--help", check=None)
    if help_text.returncode != 0 or "delegate_serialize_dir" not in help_text.stdout:
        pytest.skip("delegato bench without cache flags")
    cache = tmp_path / "cache"
    args = ["bench", f"--graph={model}", "--target=nnapi-1.2", "--num_runs=1", "--min_secs=0", "--warmup_runs=1",
            "--warmup_min_secs=0", f"--delegate_serialize_dir={cache}"]
    first = run(delegato_bin, *args).stdout + run(delegato_bin, *args).stdout
    statuses = re.findall(r"cache: (hit|miss|stale|corrupt) ", first)
    assert statuses == ["miss", "hit"], first


def test_bench_json_breaks_the_start_down(delegato_bin, model, tmp_path):
    """`bench --format=json` says where Init went (bench/cache_cold_warm.py
    reads it): a miss packs every GEMM kernel's weights, a hit loads them
    all and packs none. Only the phases' presence and the counts are checked,
    never a duration."""
    cache = tmp_path / "cache"
    args = ["bench", f"--graph={model}", "--num_runs=1", "--min_secs=0", "--warmup_runs=1",
            "--warmup_min_secs=0", f"--delegate_serialize_dir={cache}", "--format=json"]
    results = [json.loads(run(delegato_bin, *args).stdout) for _ in range(2)]
    for result, status in zip(results, ["miss", "hit"]):
        assert result["cache"].startswith(f"cache: {status} "), result["cache"]
        phases = result["init_phases"]
        for key in ("load_us", "create_us", "cache_lookup_us", "allocate_us", "prepare_us", "arena_us",
                    "cache_commit_us", "weights_loaded_us", "weights_packed_us"):
            assert isinstance(phases[key], int) and phases[key] >= 0, (key, phases)
    packed = re.search(r"(\d+) loaded, (\d+) packed", results[0]["cache"])
    loaded = re.search(r"(\d+) loaded, (\d+) packed", results[1]["cache"])
    assert packed and int(packed.group(1)) == 0 and int(packed.group(2)) > 0, results[0]["cache"]
    assert loaded and int(loaded.group(1)) == int(packed.group(2)) and int(loaded.group(2)) == 0, results[1]["cache"]
    assert results[1]["init_phases"]["weights_packed_us"] == 0


def test_concurrent_writers_leave_one_whole_entry(delegato_bin, model, tmp_path):
    """Several processes miss on the same cache directory at once and all
    write the entry: each rename replaces a whole file, so every later run
    hits, nothing is corrupt and no temporary file is left behind."""
    cache_dir = tmp_path / "cache"
    args = [delegato_bin, "run", f"--graph={model}", "--target=nnapi-1.2", "--seed=3",
            f"--delegate_serialize_dir={cache_dir}"]
    procs = [subprocess.Popen(args + [f"--output_dir={tmp_path / f'o{i}'}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    outputs = []
    for i, proc in enumerate(procs):
        _, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr
        assert cache_line(stderr)[0] in ("miss", "hit"), stderr
        outputs.append((tmp_path / f"o{i}" / "output_0.npy").read_bytes())
    assert all(o == outputs[0] for o in outputs)
    files = sorted(p.name for p in cache_dir.iterdir())
    assert len(files) == 1 and files[0].endswith(".bin"), files
    listing = json.loads(run(delegato_bin, "cache", "ls", str(cache_dir), "--format=json").stdout)
    assert "corrupt" not in json.dumps(listing)
    proc = run(delegato_bin, *args[1:], f"--output_dir={tmp_path / 'again'}")
    assert cache_line(proc.stderr)[0] == "hit"
    assert (tmp_path / "again" / "output_0.npy").read_bytes() == outputs[0]
