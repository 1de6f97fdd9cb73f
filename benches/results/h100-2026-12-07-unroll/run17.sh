#!/bin/bash
# Device binaries (git-ignored .device/): ptap-def = main (pf 0.07), ptap-u4 = branch unroll's first build (the
# halving 6x6 A P kernel ptap_mmah_6x6x6 at 4 contributions per step instead of 2, bounds kept at 40 registers),
# ptap-u4nb = the same without the bounds. Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-unroll/run17.sh
# Ledger step 27: more gathers in flight per warp in the coarse A P (a latency chain, step 26's counters).
. benches/results/device-session.sh o17
bench() { tag=$1; bin=$2; timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2; do for b in ptap-def ptap-u4 ptap-u4nb; do bench $b-$pass $b; done; pack; done
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum
for b in ptap-u4 ptap-u4nb; do timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mmah" --launch-count 4 --csv --page raw $B/$b bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$b.csv 2> $T/ncu-$b.err; ts "ncu $b rc=$?"; pack; done
cat $T/times.txt
