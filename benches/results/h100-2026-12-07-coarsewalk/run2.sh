#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-new = main 45154e8 (the kernels of main f3cffc7); cuda_only and
# conformance = its device tests; ptap-bd = main c69340b; ptap-co = main + the carveout experiment (branch carveout); ptap-w32/w64/w128 and ptap-fw = branch blockorder's walk
# experiments (see h100-2026-12-07-blockorder/run4.sh). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-coarsewalk/run2.sh (ran on an H100: output o2/)
# 1. main's kept change on the device (symmetric tests, CUDA conformance); 2. on an H200 only: issue #12's figures
# for main's default (products, hot step over the pf sweep and both aggregations, cold and cache starts);
# 3. the prepared walks of the coarse A P and of level 1's fold (any card); 4. counters.
. benches/results/device-session.sh o2
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
H200=0; grep -q H200 $T/nvidia-smi.txt && H200=1; ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1) h200=$H200"
timeout 100 $B/cuda_only --test-threads 2 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok, $(grep -c 'FAILED' $T/tests.txt) failed"; pack
timeout 120 $B/conformance --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
b new-1 ptap-new; b bd-1 ptap-bd; pack
# The preferred shared-memory carveout (ptap-co = main f3cffc7 + PTAP_EXP_CARVEOUT=PCT[,PREFIX] on every kernel named PREFIX*).
for co in 0 0,ptap_mma 100 50; do b co$co ptap-co PTAP_EXP_CARVEOUT=$co; done; b co-none ptap-co; pack
# Level 2's split length and the fold decision at the default pf (run-time overrides of main's binary).
for sp in 8 16 32 64; do b split$sp ptap-new PTAP_SYM_SPLIT=$sp; done; b fold-on ptap-new PTAP_SYM_FOLD=on; b fold-off ptap-new PTAP_SYM_FOLD=off; pack
run() { tag=$1; shift; timeout 60 $B/ptap-new run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
if [ $H200 = 1 ]; then
  for pass in 1 2; do for pf in 0.03 0.05 0.06 0.07 0.08 0.1; do run pf$pf-$pass --pf $pf; done; run petsc-pf0.07-$pass --aggregation petsc; run petsc-pf0.03-$pass --aggregation petsc --pf 0.03; pack; done
  timeout 60 $B/ptap-new run --k 16 --steps 2 --device cuda --json $T/cold-1.json > $T/cold-1.txt 2>&1; ts "cold rc=$?"
  rm -rf /tmp/scd; for i in w 1 2 3; do timeout 60 $B/ptap-new run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
  b new-2 ptap-new; b bd-2 ptap-bd; pack
fi
b w32-4 ptap-w32 PTAP_EXP_MMAH_WALK=32 PTAP_SYM_AP_WARPS=4
b w64-8 ptap-w64 PTAP_EXP_MMAH_WALK=64 PTAP_SYM_AP_WARPS=8
b w64-8-rm ptap-w64 PTAP_EXP_MMAH_WALK=64 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
b w128-8-rm ptap-w128 PTAP_EXP_MMAH_WALK=128 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
b w32-8-rm ptap-w32 PTAP_EXP_MMAH_WALK=32 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
for fw in 1,w4 4,w4 i4,w4 i4,w8 i8,w8 i2,w16; do b fw-$fw ptap-fw PTAP_EXP_FOLD_WALK=$fw; done
b new-3 ptap-new; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 16 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; pack; }
n new ptap-new
n co0 ptap-co PTAP_EXP_CARVEOUT=0
n w64-8-rm ptap-w64 PTAP_EXP_MMAH_WALK=64 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
n fw-i4w8 ptap-fw PTAP_EXP_FOLD_WALK=i4,w8
cat $T/times.txt
