"""bench/cpu_mask: under LD_PRELOAD=libdelegato_cpumask.so a process's CPUID
reports no AVX-512, AMX or AVX-VNNI (the kernel's CPUID faulting traps the
instruction and the library answers it), so delegato selects its AVX2 kernels;
without it, delegato selects the CPU's own best ISA. Skipped where CPUID
faulting is unavailable (non-x86, other kernels, CPUs without cpuid_fault)."""
import json
import os
import pathlib
import platform
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PROBE = REPO / "bench" / "cpu_mask" / "cpuid_probe.py"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@pytest.fixture(scope="module")
def build_dir(delegato_bin):
    if platform.machine() != "x86_64" or not sys.platform.startswith("linux"):
        pytest.skip("the CPU mask is x86-64 Linux only")
    if "cpuid_fault" not in cpu_flags():
        pytest.skip("this CPU or kernel has no CPUID faulting (cpuid_fault)")
    build = pathlib.Path(delegato_bin).parent
    for name in ("libdelegato_cpumask.so", "time_model"):
        if not (build / name).exists():
            pytest.skip(f"{name} not built in {build}")
    return build


def child_env(build, masked, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "DELEGATO_ISA")}
    if masked:
        env["LD_PRELOAD"] = str(build / "libdelegato_cpumask.so")
    env.update(extra)
    return env


def probe(build, masked, **extra):
    out = subprocess.run([sys.executable, str(PROBE)], env=child_env(build, masked, **extra),
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def selected_isa(build, delegato_bin, model, masked):
    out = subprocess.run([str(build / "time_model"), str(model)], input="quit\n",
                         env=child_env(build, masked), capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout.splitlines()[0])["isa"]


@pytest.fixture(scope="module")
def demo_model(delegato_bin, tmp_path_factory):
    path = tmp_path_factory.mktemp("cpu_mask") / "demo.tflite"
    subprocess.run([delegato_bin, "generate", "-o", str(path)], check=True, capture_output=True)
    return path


def test_cpuid_reports_the_cpu_without_the_mask(build_dir):
    flags = cpu_flags()
    native = probe(build_dir, masked=False)
    assert native["avx2"] == ("avx2" in flags)
    assert native["avx512f"] == ("avx512f" in flags)
    assert native["avx512_vnni"] == ("avx512_vnni" in flags)
    assert native["avx_vnni"] == ("avx_vnni" in flags)


def test_masked_cpuid_has_no_avx512_amx_or_avx_vnni(build_dir):
    masked = probe(build_dir, masked=True)
    assert masked["avx2"] == ("avx2" in cpu_flags())  # what is not masked stays
    assert not any(masked[k] for k in ("avx512f", "avx512bw", "avx512_vnni", "amx_int8",
                                       "avx_vnni")), masked


def test_keep_avx_vnni_hides_only_avx512_and_amx(build_dir):
    masked = probe(build_dir, masked=True, DELEGATO_CPUMASK_KEEP_AVX_VNNI="1")
    assert masked["avx_vnni"] == ("avx_vnni" in cpu_flags())
    assert not masked["avx512f"] and not masked["avx512_vnni"] and not masked["amx_int8"]


def test_delegato_selects_avx2_under_the_mask_and_its_best_isa_without(build_dir, delegato_bin,
                                                                      demo_model):
    flags = cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni"} <= flags:
        native = "avx512vnni"
    elif {"avx2", "fma", "bmi2"} <= flags:
        native = "avx2"
    else:
        native = "scalar"
    assert selected_isa(build_dir, delegato_bin, demo_model, masked=False) == native
    expected = "avx2" if {"avx2", "fma", "bmi2"} <= flags else "scalar"
    assert selected_isa(build_dir, delegato_bin, demo_model, masked=True) == expected


def test_other_faults_reach_the_program_handler(build_dir):
    # Python's faulthandler installs its SIGSEGV handler after the mask's: a
    # real fault must still reach it (and then end the process), while CPUID
    # keeps being masked.
    script = ("import ctypes, faulthandler, json, sys\n"
              f"sys.path.insert(0, {str(PROBE.parent)!r})\n"
              "import cpuid_probe\n"
              "faulthandler.enable()\n"
              "print(json.dumps(cpuid_probe.features()), flush=True)\n"
              "ctypes.string_at(0)\n")
    out = subprocess.run([sys.executable, "-c", script], env=child_env(build_dir, masked=True),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == -11, (out.returncode, out.stderr)
    assert "Fatal Python error: Segmentation fault" in out.stderr
    assert not json.loads(out.stdout.splitlines()[0])["avx512f"]
