#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-main = main f3cffc7 (branch carveout's binary, no env set);
# ptap-fin = main 6ab2aa9 (the coarse walk at 16 slots per 4-warp block, split chunks of at least 32); cuda_only and
# conformance = its device tests; ptap-fold and cuda_only-fold = branch foldwalk (level 1's fold walking
# PTAP_SYM_FOLD_WALK units per block, 40 registers as without). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-coarsewalk/run4.sh
# Ledger step 33, third call: the kept settings against main, three interleaved passes, hot steps, counters; on an
# H200 also the default's hot step against its neighbours and the cold and cache starts.
. benches/results/device-session.sh o4
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
timeout 100 $B/cuda_only --test-threads 2 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok, $(grep -c 'FAILED' $T/tests.txt) failed"; pack
timeout 120 $B/conformance --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b main-$pass ptap-main; b fin-$pass ptap-fin; pack; done
# The fold walk (branch foldwalk): its tests, then 4 (one unit per warp, main's geometry) to 32 units per block.
timeout 100 $B/cuda_only-fold --test-threads 2 coarse_walks > $T/tests-fold.txt 2>&1; ts "tests fold rc=$? $(grep -c '\.\.\. ok' $T/tests-fold.txt) ok, $(grep -c 'FAILED' $T/tests-fold.txt) failed"
for c in 4 8 16 32; do b fold-c$c ptap-fold PTAP_SYM_FOLD_WALK=$c; done; b fold-d ptap-fold; pack
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2; do run main-$pass ptap-main; run fin-$pass ptap-fin; done; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 16 --csv --page raw $B/ptap-fin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-fin.csv 2> $T/ncu-fin.err; ts "ncu fin rc=$?"; pack
if grep -q H200 $T/nvidia-smi.txt; then
  # On an H200: issue #12's default against its neighbours (hot step), and the starts.
  for pass in 1 2; do for pf in 0.05 0.07 0.08; do run pf$pf-$pass ptap-fin --pf $pf; done; run petsc-$pass ptap-fin --aggregation petsc; pack; done
  timeout 60 $B/ptap-fin run --k 16 --steps 2 --device cuda --json $T/cold-1.json > $T/cold-1.txt 2>&1; ts "cold rc=$?"
  rm -rf /tmp/scd; for i in w 1 2; do timeout 60 $B/ptap-fin run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
fi
cat $T/times.txt
