#!/bin/bash
# Device binaries (git-ignored .device/): ptap-main = main 42a5788 (the product code of c725cf6), ptap-pf = branch prefetch (PTAP_PROBE_BOUNDS). Run from the repository root with carry [".device"]: bash benches/results/cpu-2core-2026-12-07-pf-sweep/run11.sh
# Issue #12: the default hierarchy's pf re-measured with today's kernels (hot step by `ptap run`, products by `ptap bench`),
# then step 23's ready probe (level 1's folded / level 2's split P^T W' capped at 32 registers).
. benches/results/device-session.sh o11
run() { tag=$1; shift; timeout 60 $B/ptap-main run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep -E 'hot mean' $T/run-$tag.txt | head -1) its=$(grep -oE '[0-9]+ iterations' $T/run-$tag.txt | tr '\n' ' ')"; }
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 $PFARGS --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ') $(grep -E 'hot step  ' $T/bench-$tag.txt)"; }
CF="0.03:0.5 0.05:0.5 0.08:0.5 0.09:0.5 0.1:0.5 0.15:0.5 0.08:1"
for pass in 1; do for c in $CF; do pf=${c%:*}; s=${c#*:}; run pf$pf-s$s-$pass --pf $pf --pf-scale $s; done; pack; done
for c in 0.03:0.5 0.08:0.5 0.09:0.5 0.1:0.5; do pf=${c%:*}; s=${c#*:}; PFARGS="--pf $pf --pf-scale $s" bench pf$pf-s$s ptap-main Y=1; pack; done
for pass in 2; do for c in $CF; do pf=${c%:*}; s=${c#*:}; run pf$pf-s$s-$pass --pf $pf --pf-scale $s; done; pack; done
for pf in 0.08; do rm -rf /tmp/sc$pf; for i in w 1 2 3; do timeout 60 $B/ptap-main run --k 16 --steps 2 --device cuda --pf $pf --schedule-cache /tmp/sc$pf --json $T/cache-pf$pf-$i.json > $T/cache-pf$pf-$i.txt 2>&1; ts "cache pf$pf $i rc=$? $(python3 -c "import json;d=json.load(open('$T/cache-pf$pf-$i.json'));print(d.get('start',{}).get('start_s'), d.get('cold',{}))" 2>&1 | head -c 600)"; done; done
pack
PFARGS="--pf 0.08"
bench capf-1 ptap-pf PTAP_PROBE_BOUNDS=ptap_mma2f_6x6x6t=128,16
bench cap2-1 ptap-pf PTAP_PROBE_BOUNDS=ptap_mma2_6x6x6t=128,16
bench main-1 ptap-main Y=1
pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum
for pf in 0.08; do timeout 90 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma2|ptap_sym" --launch-count 12 --csv --page raw $B/ptap-main bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 --pf $pf > $T/ncu-pf$pf.csv 2> $T/ncu-pf$pf.err; ts "ncu pf$pf rc=$?"; pack; done
cat $T/times.txt
