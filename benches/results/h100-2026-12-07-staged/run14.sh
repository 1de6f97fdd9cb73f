#!/bin/bash
# Device binaries (git-ignored .device/): ptap-stage = main + the staged 6x6 A P stage (PTAP_SYM_AP_STAGE,
# off unless set), cuda_only = its tests/tests/cuda_only.rs. Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-staged/run14.sh
# Issue #12, ledger step 26: the coarse levels' A P with each row's A blocks staged in shared memory, at caps of
# 16-170 blocks per row and 2 / 4 warps per block, against the unstaged stage in the same call; then the device
# tests (bitwise against the unstaged stage), and the counters of both kernels.
. benches/results/device-session.sh o14
bench() { tag=$1; shift; env "$@" timeout 90 $B/ptap-stage bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
for pass in 1 2; do
  bench base-$pass Y=1
  for c in 16 32 64 170 32,w2 64,w2; do bench s$c-$pass PTAP_SYM_AP_STAGE=$c; done
  pack
done
timeout 240 $B/cuda_only --test-threads 1 symmetric_pair > $T/cuda_only-sym.txt 2>&1; ts "cuda_only symmetric_pair rc=$? $(grep 'test result' $T/cuda_only-sym.txt)"; pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,launch__occupancy_limit_shared_mem,sm__maximum_warps_per_active_cycle_pct
for c in 32 64; do PTAP_SYM_AP_STAGE=$c timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mmah" --launch-count 8 --csv --page raw $B/ptap-stage bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-s$c.csv 2> $T/ncu-s$c.err; ts "ncu s$c rc=$?"; pack; done
cat $T/times.txt
