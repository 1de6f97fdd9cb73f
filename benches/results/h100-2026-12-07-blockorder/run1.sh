#!/bin/bash
# Device binaries (git-ignored .device/): ptap-bd = main c69340b, ptap-bo = branch blockorder (the coarse halving
# A P's slot order and block size from PTAP_SYM_AP_ORDER / PTAP_SYM_AP_WARPS). Run from the repository root with
# carry [".device"]: bash benches/results/h100-2026-12-07-blockorder/run1.sh
# Ledger step 32, first call: slot orders and block sizes of the coarse A P, products only, then counters.
. benches/results/device-session.sh o1
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2; do
  b main-$pass ptap-bd
  for o in window row-major pairs quads; do
    for w in 4 8 16; do
      if [ $o = window ]; then b $o-$w-$pass ptap-bo PTAP_SYM_AP_WARPS=$w; else b $o-$w-$pass ptap-bo PTAP_SYM_AP_ORDER=$o PTAP_SYM_AP_WARPS=$w; fi
    done
  done
  pack
done
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 100 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_mmah_" --launch-count 4 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; pack; }
n main ptap-bd
n window-8 ptap-bo PTAP_SYM_AP_WARPS=8
n row-major-8 ptap-bo PTAP_SYM_AP_ORDER=row-major PTAP_SYM_AP_WARPS=8
n pairs-8 ptap-bo PTAP_SYM_AP_ORDER=pairs PTAP_SYM_AP_WARPS=8
n quads-16 ptap-bo PTAP_SYM_AP_ORDER=quads PTAP_SYM_AP_WARPS=16
n pairs-16 ptap-bo PTAP_SYM_AP_ORDER=pairs PTAP_SYM_AP_WARPS=16
cat $T/times.txt
