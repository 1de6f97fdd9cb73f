#!/bin/bash
# Device binaries (git-ignored .device/): ptap-main = main 42a5788 (default pf 0.03), ptap-def = main a8136d4 and on
# (default pf 0.07, the same product code). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-pf-default/run18.sh (run13.sh again, asked for an H200 on the seventeenth session; an H100 came)
# Issue #12: the new default (pf 0.07) against the old (0.03) in one call, hot step by `ptap run` over three
# interleaved passes (and pf-scale 0.75 / 1 beside the default 0.5); then every goal re-measured at the default:
# products, SpMV and CG iteration (`ptap bench`), the unfiltered hierarchy's products, cold setup, the
# schedule-cache start, the coarse levels' P^T W' fold / split re-probed, and the product kernels' counters (ncu).
. benches/results/device-session.sh o18
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2 3; do
  run old-$pass ptap-main
  run def-$pass ptap-def
  run def-s1-$pass ptap-def --pf-scale 1
  run def-s0.75-$pass ptap-def --pf-scale 0.75
  pack
done
timeout 90 $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-def.json > $T/bench-def.txt 2>&1; ts "bench def rc=$?"; pack
timeout 90 $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --pf 0 --json $T/bench-pf0.json > $T/bench-pf0.txt 2>&1; ts "bench pf0 rc=$?"; pack
for i in 1 2; do timeout 60 $B/ptap-def run --k 16 --steps 2 --device cuda --json $T/cold-$i.json > $T/cold-$i.txt 2>&1; ts "cold $i rc=$?"; done
rm -rf /tmp/scd; for i in w 1 2 3; do timeout 60 $B/ptap-def run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
# The coarse levels' P^T W' choices re-probed at the new default (fold on level 1, split on level 2).
for e in PTAP_SYM_FOLD=off PTAP_SYM_SPLIT=off PTAP_SYM_SPLIT=8 PTAP_SYM_SPLIT=32; do env $e timeout 90 $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/probe-$e.json > $T/probe-$e.txt 2>&1; ts "probe $e rc=$? $(grep -E '^l[012] +dmma2s' $T/probe-$e.txt | awk '{print $4, $6}' | tr '\n' ' ')"; done; pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum
timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma|ptap_sym" --launch-count 16 --csv --page raw $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-def.csv 2> $T/ncu-def.err; ts "ncu def rc=$?"
cat $T/times.txt
