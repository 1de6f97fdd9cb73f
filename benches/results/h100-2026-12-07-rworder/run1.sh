#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-m36 = main 2f43094; ptap-m37, cuda_only-m37, conformance-m37 =
# main with the symmetric pair's P^T W' units in windows of 32 sorted longest first (RW_ORDER_WINDOW). Run from the
# repository root with carry [".device"]: bash benches/results/h100-2026-12-07-rworder/run1.sh
. benches/results/device-session.sh r1
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
timeout 90 $B/cuda_only-m37 --test-threads 2 symmetric > $T/tests-sym.txt 2>&1; ts "tests sym rc=$? $(grep -c '\.\.\. ok' $T/tests-sym.txt) ok, $(grep -c 'FAILED' $T/tests-sym.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b m36-$pass ptap-m36; b m37-$pass ptap-m37; pack; done
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
run m36 ptap-m36; run m37 ptap-m37; pack
timeout 90 $B/conformance-m37 --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
timeout 120 $B/cuda_only-m37 --test-threads 2 > $T/tests-all.txt 2>&1; ts "tests all rc=$? $(grep -c '\.\.\. ok' $T/tests-all.txt) ok, $(grep -c 'FAILED' $T/tests-all.txt) failed"; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; timeout 40 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_mma2f|ptap_mma2_6x3" --launch-count 4 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; }
n m36 ptap-m36; n m37 ptap-m37; pack
cat $T/times.txt
