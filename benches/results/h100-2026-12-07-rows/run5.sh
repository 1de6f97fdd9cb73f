#!/bin/bash
# Device binaries (git-ignored .device/): ptap-rows, ptap-r2 as in run4.sh. Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-rows/run5.sh
# The product kernels' SASS (cuobjdump of the NVRTC CUBINs the bench caches) and ncu's per-instruction counts, to see
# where the ~56 warp instructions per contribution of the coarse A P kernels go. The SASS dumps (60 MB) are not kept;
# o5/ holds the source-counter pages (src-*.csv).
. benches/results/device-session.sh o5
CU=/usr/local/cuda/bin
PTAP_SYM_ROWS=ap,s16 timeout 90 $B/ptap-r2 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/bench.txt 2>&1; ts "bench rc=$?"
ls -la /tmp/kc > $T/kc.txt
for f in /tmp/kc/*.cubin; do $CU/cuobjdump -sass $f > $T/sass-$(basename $f .cubin).txt 2>&1; done; ts "sass rc=$?"; pack
for k in ptap_mmah_6x6x6 ptap_mma2h_3x3x6; do
  timeout 120 $CU/ncu --kill on --section SourceCounters --page source --print-source sass --csv -k $k --launch-skip 1 --launch-count 1 $B/ptap-rows bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/src-$k.csv 2> $T/src-$k.err; ts "src $k rc=$?"; pack
done
PTAP_SYM_ROWS=ap,s16 timeout 120 $CU/ncu --kill on --section SourceCounters --page source --print-source sass --csv -k ptap_mmawh_6x6x6 --launch-skip 1 --launch-count 1 $B/ptap-r2 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/src-rows.csv 2> $T/src-rows.err; ts "src rows rc=$?"
cat $T/times.txt
