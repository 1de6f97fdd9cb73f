#!/bin/bash
# Device binaries (git-ignored .device/): ptap-bd = main c69340b; ptap-ch12 = branch chunks2 built with
# PTAP_PAIR_CHUNKS=1 PTAP_PAIR_BLOCKS=12 (only the walking fine A P kernel takes its entries a chunk per load, under
# __launch_bounds__(128, 12): 40 registers, 48 warps per SM, instead of 32 and 64). Run from the repository root with
# carry [".device"]: bash benches/results/h100-2026-12-07-chunks/run3.sh
# Ledger step 29, third call: whether the fine A P's chunked entries pay once they do not spill.
. benches/results/device-session.sh o3
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b bd-$pass ptap-bd; b ch12-$pass ptap-ch12; pack; done
NCU=/usr/local/cuda/bin/ncu
timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum -k "regex:ptap_mma2h_" --launch-count 2 --csv --page raw $B/ptap-ch12 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-ch12.csv 2> $T/ncu-ch12.err; ts "ncu ch12 rc=$?"; pack
cat $T/times.txt
