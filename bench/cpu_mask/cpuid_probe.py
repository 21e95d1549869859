"""CPUID as this process sees it, executed through ctypes (x86-64 only).

    python3 bench/cpu_mask/cpuid_probe.py      # prints the AVX-512 / AVX-VNNI bits as JSON

Used by bench/compare_litert.py and tests/python/test_cpu_mask.py to check
that libdelegato_cpumask.so hides the features: the instruction runs in this
process, so CPUID faulting and the mask's handler apply to it.
"""
import ctypes
import json
import mmap
import platform

# push rbx; mov eax, edi; mov ecx, esi; cpuid;
# mov [rdx], eax; mov [rdx+4], ebx; mov [rdx+8], ecx; mov [rdx+12], edx; pop rbx; ret
_CODE = bytes([
    0x53,
    0x89, 0xF8,
    0x89, 0xF1,
    0x49, 0x89, 0xD0,        # mov r8, rdx (cpuid overwrites edx)
    0x0F, 0xA2,
    0x41, 0x89, 0x00,        # mov [r8], eax
    0x41, 0x89, 0x58, 0x04,  # mov [r8+4], ebx
    0x41, 0x89, 0x48, 0x08,  # mov [r8+8], ecx
    0x41, 0x89, 0x50, 0x0C,  # mov [r8+12], edx
    0x5B,
    0xC3,
])

_function = None


def cpuid(leaf, subleaf=0):
    """(eax, ebx, ecx, edx) of CPUID(leaf, subleaf)."""
    global _function  # noqa: PLW0603 (one executable page per process)
    if platform.machine() not in ("x86_64", "AMD64"):
        raise RuntimeError("CPUID exists only on x86")
    if _function is None:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(_CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32,
                                     ctypes.POINTER(ctypes.c_uint32 * 4))
        _function = (prototype(address), page)
    out = (ctypes.c_uint32 * 4)()
    _function[0](leaf, subleaf, ctypes.byref(out))
    return tuple(out)


def features():
    """The x86 features the mask hides, as this process's CPUID reports them."""
    if cpuid(0)[0] < 7:
        return {"avx512f": False, "avx512bw": False, "avx512_vnni": False, "amx_int8": False,
                "avx_vnni": False, "avx2": False}
    _, ebx, ecx, edx = cpuid(7, 0)
    eax1 = cpuid(7, 1)[0]
    return {
        "avx2": bool(ebx & (1 << 5)),
        "avx512f": bool(ebx & (1 << 16)),
        "avx512bw": bool(ebx & (1 << 30)),
        "avx512_vnni": bool(ecx & (1 << 11)),
        "amx_int8": bool(edx & (1 << 25)),
        "avx_vnni": bool(eax1 & (1 << 4)),
    }


if __name__ == "__main__":
    print(json.dumps(features()))
