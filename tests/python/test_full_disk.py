"""Every file the CLI writes, when the disk cannot take it: a clear error naming
the file, a non-zero exit, and nothing left under the final name or as a
stray temporary file; a compilation cache that could not be written stays
usable. "Full" is made with RLIMIT_FSIZE in the child (SIGXFSZ ignored, so a
write past the limit fails with EFBIG, as a full file system fails with
ENOSPC): the same failed write(2), without needing to mount a small file
system."""
import resource
import signal
import subprocess

import pytest


def run_with_file_limit(delegato_bin, *args, limit_bytes, cwd):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    proc = subprocess.run([delegato_bin, *args], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit, cwd=cwd)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    return proc


def files_under(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


@pytest.fixture
def demo(delegato_bin, tmp_path):
    subprocess.run([delegato_bin, "generate", "--output", str(tmp_path / "demo.tflite")], check=True,
                   capture_output=True)
    return tmp_path / "demo.tflite"


# (command line, the file it must fail to write), relative to the test's directory.
FULL_DISK_CASES = {
    "run outputs": (["run", "--graph", "demo.tflite", "--output_dir", "out"], "out/output_0.npy"),
    "run saved inputs": (["run", "--graph", "demo.tflite", "--output_dir", "in", "--save_inputs"],
                         "in/input_0.npy"),
    "convert": (["convert", "--graph", "demo.tflite", "--output", "converted.tflite"],
                "converted.tflite"),
    "generate": (["generate", "--output", "generated.tflite"], "generated.tflite"),
    "fix": (["fix", "--graph", "demo.tflite", "--target", "edgetpu", "--output", "fixed.tflite"],
            "fixed.tflite"),
    "plan html": (["plan", "--graph", "demo.tflite", "--target", "imx8mp-vx", "--html", "plan.html"],
                  "plan.html"),
    "plan dot": (["plan", "--graph", "demo.tflite", "--target", "imx8mp-vx", "--dot", "plan.dot"],
                 "plan.dot"),
    "bench op profile": (["bench", "--graph", "demo.tflite", "--num_runs", "2", "--warmup_runs", "1",
                          "--enable_op_profiling", "--op_profiling_output_file", "profile.txt"],
                         "profile.txt"),
}


@pytest.mark.parametrize("case", sorted(FULL_DISK_CASES))
def test_full_disk_leaves_no_partial_file(delegato_bin, demo, case):
    args, target = FULL_DISK_CASES[case]
    directory = demo.parent
    before = files_under(directory)
    # 64 bytes: less than any of these files (a .npy header alone is 128).
    proc = run_with_file_limit(delegato_bin, *args, limit_bytes=64, cwd=directory)
    assert proc.returncode == 1, proc.stderr
    assert f"{target}: write failed: File too large" in proc.stderr
    after = files_under(directory)
    assert not (directory / target).exists()
    assert [f for f in after if f not in before] == [], "stray files left behind"


def test_full_disk_cache_is_not_written_and_stays_usable(delegato_bin, demo):
    directory = demo.parent
    args = ["run", "--graph", "demo.tflite", "--target", "imx8mp-vx", "--delegate_serialize_dir", "cache",
            "--output_dir", "out"]
    (directory / "cache").mkdir()
    # Room for the outputs (138 bytes) but not for the cache entry.
    proc = run_with_file_limit(delegato_bin, *args, limit_bytes=1024, cwd=directory)
    assert proc.returncode == 0, proc.stderr
    assert "cache: miss" in proc.stderr and "not written: write failed" in proc.stderr
    assert files_under(directory / "cache") == []
    expected = (directory / "out" / "output_0.npy").read_bytes()

    # With room again: the miss is rebuilt and stored, then hit, same outputs.
    for expect in ("cache: miss", "cache: hit"):
        proc = subprocess.run([delegato_bin, *args], capture_output=True, text=True, cwd=directory, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert expect in proc.stderr
        assert (directory / "out" / "output_0.npy").read_bytes() == expected
    listing = subprocess.run([delegato_bin, "cache", "ls", "cache"], capture_output=True, text=True,
                             cwd=directory)
    assert listing.returncode == 0 and "corrupt" not in listing.stdout
