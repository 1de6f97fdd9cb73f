#!/bin/bash
# Device binaries (git-ignored .device/): ptap-def = main a8136d4 (the product kernels of main), ptap-ch = branch chunks
# (the pair kernels' entries a chunk per load, the next chunk's load issued ahead; the coarse halving A P kernel's run
# bounds per warp), cuda_only = its device tests. Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-chunks/run1.sh
# Ledger step 29: the index loads taken out of the chain each step of the product kernels waits on.
. benches/results/device-session.sh o1
timeout 200 $B/cuda_only --test-threads 1 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b def-$pass ptap-def; b ch-$pass ptap-ch; pack; done
for e in PTAP_SYM_FOLD=off PTAP_SYM_SPLIT=off; do b ch-$e ptap-ch $e; b def-$e ptap-def $e; done; pack
NCU=/usr/local/cuda/bin/ncu
timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum -k "regex:ptap_mma|ptap_sym" --launch-count 8 --csv --page raw $B/ptap-ch bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-ch.csv 2> $T/ncu-ch.err; ts "ncu ch rc=$?"; pack
for k in ptap_mma2h_3x3x6 ptap_mmah_6x6x6; do
  timeout 120 $NCU --kill on --section SourceCounters --page source --print-source sass --csv -k $k --launch-skip 1 --launch-count 1 $B/ptap-ch bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/src-$k.csv 2> $T/src-$k.err; ts "src $k rc=$?"; pack
done
cat $T/times.txt
