#!/usr/bin/env python3
"""Compiles every emitted .cu with NVRTC for sm_90 and fails on an error or any
warning in the program log. Runs on the GPU machine (CUDA 13, libnvrtc.so.13):

    python3 kernels-generated/cuda/nvrtc_check.py [files...]
"""
import ctypes
import glob
import os
import sys


def load_nvrtc():
    for name in ("libnvrtc.so.13", "libnvrtc.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"):
        for f in sorted(glob.glob(os.path.join(d, "libnvrtc.so*"))):
            try:
                return ctypes.CDLL(f)
            except OSError:
                pass
    sys.exit("no libnvrtc found")


def compile_one(nvrtc, path, opts):
    src = open(path, "rb").read()
    prog = ctypes.c_void_p()
    rc = nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(path).encode(), 0, None, None)
    assert rc == 0, f"nvrtcCreateProgram: {rc}"
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), argv)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors="replace").strip()


def main():
    nvrtc = load_nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.cu")))
    print(f"NVRTC {major.value}.{minor.value}")
    bad = 0
    for opts in (["--gpu-architecture=sm_90"], ["--gpu-architecture=sm_90", "--fmad=false"]):
        for f in files:
            rc, log = compile_one(nvrtc, f, opts)
            ok = rc == 0 and "warning" not in log.lower() and "error" not in log.lower()
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(f)} {' '.join(opts)} rc={rc} log={log!r}")
    print("all clean" if bad == 0 else f"{bad} failures")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
