#!/bin/bash
# Device binary (git-ignored .device/): ptap-stage = main + the staged 6x6 A P stage with PTAP_SYM_AP_STAGE's `,n`
# (rows in natural order). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-staged/run15.sh
# Ledger step 26, second call: run14 ran the rows longest first, which lost the window order's L2 locality
# (DRAM 2.3x); here the rows run in their natural order, against the unstaged stage in the same call.
. benches/results/device-session.sh o15
bench() { tag=$1; shift; env "$@" timeout 90 $B/ptap-stage bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2; do bench base-$pass Y=1; for c in 8,n 16,n 32,n; do bench s$c-$pass PTAP_SYM_AP_STAGE=$c; done; pack; done
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum
PTAP_SYM_AP_STAGE=16,n timeout 100 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mmah" --launch-count 4 --csv --page raw $B/ptap-stage bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-s16n.csv 2> $T/ncu-s16n.err; ts "ncu s16n rc=$?"
timeout 100 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mmah" --launch-count 4 --csv --page raw $B/ptap-stage bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-base.csv 2> $T/ncu-base.err; ts "ncu base rc=$?"
cat $T/times.txt
