#!/bin/bash
# Device binary (git-ignored .device/): ptap-main = main 42a5788 (the product code of c725cf6 and 69ec9d6).
# Run from the repository root with carry [".device"]: bash benches/results/h100-2026-12-07-pf-default/run12.sh
# Issue #12's default-hierarchy rule at k = 16: the time-stepping hot step (`ptap run`) over pf 0.03-0.1
# (x0.5 per level), three interleaved passes; products, cycle and SpMV (`ptap bench`) at each; counters of
# every product kernel (ncu) and the schedule-cache start at the two leading candidates.
. benches/results/device-session.sh o12
run() { tag=$1; shift; timeout 60 $B/ptap-main run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
bench() { pf=$1; timeout 90 $B/ptap-main bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --pf $pf --json $T/bench-pf$pf.json > $T/bench-pf$pf.txt 2>&1; ts "bench pf$pf rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-pf$pf.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
PFS="0.03 0.05 0.06 0.07 0.08 0.1"
for pass in 1 2 3; do for pf in $PFS; do run pf$pf-$pass --pf $pf; done; pack; done
for pf in $PFS; do bench $pf; pack; done
for pf in 0.05 0.1; do rm -rf /tmp/sc$pf; for i in w 1 2 3; do timeout 60 $B/ptap-main run --k 16 --steps 2 --device cuda --pf $pf --schedule-cache /tmp/sc$pf --json $T/cache-pf$pf-$i.json > $T/cache-pf$pf-$i.txt 2>&1; ts "cache pf$pf $i rc=$?"; done; pack; done
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum
for pf in 0.05 0.1; do timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma|ptap_sym" --launch-count 16 --csv --page raw $B/ptap-main bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 --pf $pf > $T/ncu-pf$pf.csv 2> $T/ncu-pf$pf.err; ts "ncu pf$pf rc=$?"; pack; done
cat $T/times.txt
