#!/bin/bash
# Ledger step 41 (issue #12): the coarse `A P` with its `P` blocks staged in shared memory per tile of one `W'`
# column (`PTAP_SYM_AP_STAGE=ROWS,WARPS,BLOCKS`, branch `pstage`), against the same binary unstaged, two
# interleaved bench passes per setting, then the counters of both coarse A P kernels. On an H200 it goes on with
# device-2026-12-07-pdl/h200.sh (main 475841f's measurements, into $OUT/h200). Binaries: `ptap-ps` from build.sh
# beside this, `ptap-39` from device-2026-12-07-pdl/build.sh. From the repository root with carry [".device"]:
# bash benches/results/device-2026-12-07-pstage/run.sh
. benches/results/device-session.sh pstage
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
mkdir -p /tmp/bin; gunzip -c $B/ptap-ps.gz > /tmp/bin/ptap-ps; chmod +x /tmp/bin/ptap-ps; P=/tmp/bin/ptap-ps
# name setting: one bench pass; the staging's tile counts go to stderr (in the .txt).
b() { if [ "$2" = off ]; then unset PTAP_SYM_AP_STAGE; else export PTAP_SYM_AP_STAGE=$2; fi
  timeout 90 $P bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$1.json > $T/bench-$1.txt 2>&1
  ts "bench $1 ($2) rc=$? $(grep -E '^l[012] +dmma' $T/bench-$1.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; unset PTAP_SYM_AP_STAGE; }
S="off 32,8,128 16,8,128 64,8,160 32,4,96 8,4,128 128,8,160"
for pass in 1 2; do for s in $S; do b "${s//,/-}-$pass" $s; done; pack; done
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum,launch__registers_per_thread,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__warp_issue_stalled_barrier_per_warp_active.pct
for s in off 32,8,128 16,8,128; do
  if [ "$s" = off ]; then unset PTAP_SYM_AP_STAGE; else export PTAP_SYM_AP_STAGE=$s; fi
  timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_mma[hs]_6x6x6" --launch-count 2 --csv --page raw $P bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-${s//,/-}.csv 2> $T/ncu-${s//,/-}.err; ts "ncu $s rc=$?"; unset PTAP_SYM_AP_STAGE; pack
done
if grep -q 'H200' $T/nvidia-smi.txt; then mkdir -p $OUT/h200; (OUT=$OUT/h200 bash benches/results/device-2026-12-07-pdl/h200.sh); ts "h200.sh rc=$?"; fi
cat $T/times.txt
