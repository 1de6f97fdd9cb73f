#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-main = main f3cffc7 (before step 33); ptap-fin = main 6ab2aa9
# (step 33 kept: level 1's coarse A P walked 16 slots per 4-warp block, split chunks of at least 32); cuda_only and
# conformance = its device tests; ptap-fold, cuda_only-fold = branch foldwalk (level 1's fold walking
# PTAP_SYM_FOLD_WALK units per block); ptap-dyn, cuda_only-dyn = branch dynwalk (the coarse halving A P's warps take
# the next slot of their block's chunk from a shared counter instead of every 4th; PTAP_SYM_AP_ORDER=row-major|pairs
# orders the slots by W' row). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-dynwalk/run1.sh
# Ledger step 34: step 33's third call (run4.sh: the kept settings against main, fold walks) and the dynamic walks.
. benches/results/device-session.sh d1
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
t() { tag=$1; bin=$2; f=$3; timeout 100 $B/$bin --test-threads 2 $f > $T/tests-$tag.txt 2>&1; ts "tests $tag rc=$? $(grep -c '\.\.\. ok' $T/tests-$tag.txt) ok, $(grep -c 'FAILED' $T/tests-$tag.txt) failed"; }
t fin cuda_only symmetric; t dyn cuda_only-dyn symmetric; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
# The kept settings against main, and the dynamic walk at its default (16 slots per block on level 1), interleaved.
for pass in 1 2 3; do b main-$pass ptap-main; b fin-$pass ptap-fin; b dyn-$pass ptap-dyn; pack; done
# Dynamic walks: chunk sizes in the window order, then by W' row.
for c in 8 16 32; do b dyn-c$c ptap-dyn PTAP_SYM_AP_COARSE_WALK=$c; done; pack
for c in 8 16 32 64; do b dyn-rm-c$c ptap-dyn PTAP_SYM_AP_ORDER=row-major PTAP_SYM_AP_COARSE_WALK=$c; done; pack
for c in 16 32; do b dyn-pr-c$c ptap-dyn PTAP_SYM_AP_ORDER=pairs PTAP_SYM_AP_COARSE_WALK=$c; done
b fin-rm-c16 ptap-fin PTAP_SYM_AP_ORDER=row-major PTAP_SYM_AP_COARSE_WALK=16; pack
timeout 120 $B/conformance --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
# The fold walk (branch foldwalk).
t fold cuda_only-fold coarse_walks
for c in 4 8 16 32; do b fold-c$c ptap-fold PTAP_SYM_FOLD_WALK=$c; done; b fold-d ptap-fold; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 16 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; }
n fin ptap-fin; n dyn ptap-dyn; n dyn-rm16 ptap-dyn PTAP_SYM_AP_ORDER=row-major PTAP_SYM_AP_COARSE_WALK=16; pack
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2; do run main-$pass ptap-main; run fin-$pass ptap-fin; done; pack
if grep -q H200 $T/nvidia-smi.txt; then
  for pass in 1 2; do for pf in 0.05 0.07 0.08; do run pf$pf-$pass ptap-fin --pf $pf; done; run petsc-$pass ptap-fin --aggregation petsc; pack; done
  timeout 60 $B/ptap-fin run --k 16 --steps 2 --device cuda --json $T/cold-1.json > $T/cold-1.txt 2>&1; ts "cold rc=$?"
  rm -rf /tmp/scd; for i in w 1 2; do timeout 60 $B/ptap-fin run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
fi
cat $T/times.txt
