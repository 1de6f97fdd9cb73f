#!/bin/bash
# Device binaries (git-ignored .device/): ptap-rows = branch rows at 2bee6be (the first kernel; PTAP_SYM_ROWS, off by default),
# cuda_only = its device tests; ptap-main / ptap-def = main 42a5788 (pf 0.03) / a8136d4 (pf 0.07) for the H200 check.
# Run from the repository root with carry [".device"]: bash benches/results/h100-2026-12-07-rows/run2.sh
# Ledger step 28: the symmetric pair's coarse stages row-stationary (one warp per unit of a row's slots,
# accumulators in shared memory, contributions grouped by x block) against the slot runs, then counters.
. benches/results/device-session.sh o2
timeout 150 $B/cuda_only --test-threads 1 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok"; pack
b() { tag=$1; shift; env "$@" timeout 90 $B/ptap-rows bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2; do
  b off-$pass PTAP_SYM_ROWS=off
  b ap-$pass PTAP_SYM_ROWS=ap
  b rw-$pass PTAP_SYM_ROWS=rw
  b aprw-$pass PTAP_SYM_ROWS=ap,rw
  pack
done
for v in s8 s32,w1 s32,w2 s8,w8 s16,w2 s24,w2 s4,w8; do b v-$v PTAP_SYM_ROWS=ap,rw,$v; done; pack
b fine PTAP_SYM_ROWS=ap,rw,fine; pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
PTAP_SYM_ROWS=ap,rw timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma|ptap_sym" --launch-count 16 --csv --page raw $B/ptap-rows bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-rows.csv 2> $T/ncu-rows.err; ts "ncu rows rc=$?"; pack
# On an H200, the new default against the old (issue #12's rule), and the default's goals.
if grep -q H200 $T/nvidia-smi.txt; then
  run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
  for pass in 1 2 3; do run old-$pass ptap-main; run def-$pass ptap-def; pack; done
  timeout 90 $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-def.json > $T/bench-def.txt 2>&1; ts "bench def rc=$?"
  timeout 90 $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --pf 0 --json $T/bench-pf0.json > $T/bench-pf0.txt 2>&1; ts "bench pf0 rc=$?"; pack
  for i in 1 2; do timeout 60 $B/ptap-def run --k 16 --steps 2 --device cuda --json $T/cold-$i.json > $T/cold-$i.txt 2>&1; ts "cold $i rc=$?"; done
  rm -rf /tmp/scd; for i in w 1 2 3; do timeout 60 $B/ptap-def run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
fi
cat $T/times.txt
