#!/bin/bash
# Device binaries (git-ignored .device/), all branch rows at 5ed9da7 built with: ptap-rows = four contributions per
# step, no register bound; ptap-r2 = ROW_UNROLL 2; ptap-r4b8 / ptap-r4b12 = four per step, __launch_bounds__(128, 8 / 12).
# Run from the repository root with carry [".device"]: bash benches/results/h100-2026-12-07-rows/run4.sh
# Ledger step 28, third call: whether fewer registers per warp let the row-stationary A P stage overtake the slot runs.
. benches/results/device-session.sh o4
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2; do
  b off-$pass ptap-rows PTAP_SYM_ROWS=off
  for bin in ptap-rows ptap-r2 ptap-r4b8 ptap-r4b12; do
    for v in s32 s16; do b $bin-$v-$pass $bin PTAP_SYM_ROWS=ap,$v; done
  done
  pack
done
for bin in ptap-r2 ptap-r4b8; do b $bin-s16w8 $bin PTAP_SYM_ROWS=ap,s16,w8; b $bin-s8w8 $bin PTAP_SYM_ROWS=ap,s8,w8; done; pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
for bin in ptap-r2 ptap-r4b8 ptap-r4b12; do
  PTAP_SYM_ROWS=ap,s16 timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mmaw" --launch-count 4 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$bin.csv 2> $T/ncu-$bin.err; ts "ncu $bin rc=$?"; pack
done
cat $T/times.txt
