#!/usr/bin/env python3
# Register and spill counts of every kernel of a generated CUDA source, compiled by NVRTC for sm_90 with
# ptxas -v, no GPU needed: python3 nvrtc-registers.py kernels-generated/cuda/ptap_3x3_3x6_6x6.cu [NAME-SUBSTRING].
# NVRTC is the pip package nvidia-cuda-nvrtc (cu13), as .ci/run installs it; set NVRTC to its libnvrtc.so.13.
# Step 33 checked it against ncu: ptap_mmah_6x6x6 40, ptap_mma2f_6x6x6t 40, ptap_mma2_6x6x6t 38 registers here
# and on the H100.
import ctypes, sys, re, os
lib = ctypes.CDLL(os.environ.get('NVRTC', 'libnvrtc.so.13'))
src = open(sys.argv[1]).read().encode()
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"m.cu", 0, None, None) == 0
opts = [b"--gpu-architecture=sm_90", b"--ptxas-options=-v", b"--fmad=true"]
arr = (ctypes.c_char_p * len(opts))(*opts)
rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
n = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
buf = ctypes.create_string_buffer(n.value)
lib.nvrtcGetProgramLog(prog, buf)
log = buf.value.decode()
if rc != 0: print(log); sys.exit(1)
pat = sys.argv[2] if len(sys.argv) > 2 else ''
cur = None
for line in log.splitlines():
    m = re.search(r"Compiling entry function '(\w+)'", line)
    if m: cur = m.group(1)
    if cur and pat in cur and ('registers' in line or 'spill' in line):
        print(cur, line.strip())
