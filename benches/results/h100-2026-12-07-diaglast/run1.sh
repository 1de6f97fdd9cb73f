#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-main = main f3cffc7 (before step 33); ptap-fin = main 6ab2aa9;
# cuda_only, conformance = its device tests; ptap-diag, cuda_only-diag, conformance-diag = branch diaglast (the coarse
# halving A P takes a run's diagonal contribution last, its accumulator doubled before and halved after, instead of
# a scale per contribution). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-diaglast/run1.sh
# Ledger step 35.
. benches/results/device-session.sh g1
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
t() { tag=$1; bin=$2; f=$3; timeout 100 $B/$bin --test-threads 2 $f > $T/tests-$tag.txt 2>&1; ts "tests $tag rc=$? $(grep -c '\.\.\. ok' $T/tests-$tag.txt) ok, $(grep -c 'FAILED' $T/tests-$tag.txt) failed"; }
t diag cuda_only-diag symmetric; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b fin-$pass ptap-fin; b diag-$pass ptap-diag; pack; done
timeout 150 $B/conformance-diag --test-threads 4 cuda > $T/conformance-diag.txt 2>&1; ts "conformance diag rc=$? $(grep -c '\.\.\. ok' $T/conformance-diag.txt) ok, $(grep -c 'FAILED' $T/conformance-diag.txt) failed"; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 16 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; }
n fin ptap-fin; n diag ptap-diag; pack
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2; do run fin-$pass ptap-fin; run diag-$pass ptap-diag; done; pack
if grep -q H200 $T/nvidia-smi.txt; then
  for pass in 1 2; do b main-$pass ptap-main; b fin-h-$pass ptap-fin; done; pack
  for pass in 1 2; do for pf in 0.05 0.07 0.08; do run pf$pf-$pass ptap-diag --pf $pf; done; run petsc-$pass ptap-diag --aggregation petsc; pack; done
  timeout 60 $B/ptap-diag run --k 16 --steps 2 --device cuda --json $T/cold-1.json > $T/cold-1.txt 2>&1; ts "cold rc=$?"
  rm -rf /tmp/scd; for i in w 1 2; do timeout 60 $B/ptap-diag run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
fi
timeout 150 $B/cuda_only-diag --test-threads 2 > $T/tests-diag-all.txt 2>&1; ts "tests diag all rc=$? $(grep -c '\.\.\. ok' $T/tests-diag-all.txt) ok, $(grep -c 'FAILED' $T/tests-diag-all.txt) failed"; pack
cat $T/times.txt
