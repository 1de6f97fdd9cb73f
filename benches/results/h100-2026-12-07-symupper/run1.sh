#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-m37 = main 6e88f11's kernels; ptap-su, cuda_only-su = branch
# symupper (main plus PTAP_SYM_UPPER=1: level 0's symmetrize pass over the upper slots only, ptap_symup_6x6, the
# same sums). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-symupper/run1.sh
. benches/results/device-session.sh s1
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
PTAP_SYM_UPPER=1 timeout 90 $B/cuda_only-su --test-threads 2 symmetric > $T/tests-sym.txt 2>&1; ts "tests sym upper rc=$? $(grep -c '\.\.\. ok' $T/tests-sym.txt) ok, $(grep -c 'FAILED' $T/tests-sym.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b m37-$pass ptap-m37; b su-$pass ptap-su PTAP_SYM_UPPER=1; pack; done
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 40 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_sym" --launch-count 2 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; }
n m37 ptap-m37; n su ptap-su PTAP_SYM_UPPER=1; pack
cat $T/times.txt
