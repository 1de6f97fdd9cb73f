#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-m35 = main 580e59e's kernels (branch diaglast 12d650d's build);
# ptap-pd, cuda_only-pd, conformance-pd = branch pairdiag (the fine pair kernel ptap_mma2h_* takes a unit's last two
# entries, which hold both slots' diagonals, as a tail step between doubling and halving its accumulator, instead of a
# flag test and scale per entry). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-pairdiag/run1.sh
. benches/results/device-session.sh p1
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
timeout 60 $B/cuda_only-pd --test-threads 2 symmetric > $T/tests-pd.txt 2>&1; ts "tests pd rc=$? $(grep -c '\.\.\. ok' $T/tests-pd.txt) ok, $(grep -c 'FAILED' $T/tests-pd.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b m35-$pass ptap-m35; b pd-$pass ptap-pd; pack; done
timeout 60 $B/conformance-pd --test-threads 4 cuda > $T/conformance-pd.txt 2>&1; ts "conformance pd rc=$? $(grep -c '\.\.\. ok' $T/conformance-pd.txt) ok, $(grep -c 'FAILED' $T/conformance-pd.txt) failed"; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; timeout 40 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_mma2h" --launch-count 2 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; }
n m35 ptap-m35; n pd ptap-pd; pack
run() { tag=$1; bin=$2; shift 2; timeout 40 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
run m35-1 ptap-m35; run pd-1 ptap-pd; pack
timeout 60 $B/cuda_only-pd --test-threads 2 > $T/tests-pd-all.txt 2>&1; ts "tests pd all rc=$? $(grep -c '\.\.\. ok' $T/tests-pd-all.txt) ok, $(grep -c 'FAILED' $T/tests-pd-all.txt) failed"; pack
cat $T/times.txt
