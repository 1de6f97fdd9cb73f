#!/bin/bash
# Device binaries (git-ignored .device/): ptap-bd = main c69340b; branch blockorder built with
# PTAP_EXP_MMAH_PTR=1 (a predicated 6x6 kernel's second-step lane pointers as step 0's plus a constant):
# ptap-p40 (bounds as main), ptap-p32 (and the halving A P kernel bounded to 128 threads x 16 blocks, 32 registers);
# ptap-m32: main's kernels with only that bound. Run from the repository root with carry [".device"].
# Ledger step 32, second call.
. benches/results/device-session.sh o2
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2 3; do for v in bd p40 p32 m32; do b $v-$pass ptap-$v; done; pack; done
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,local_load_store:=l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 100 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_mma(h|2f|2)_6x6x6" --launch-count 8 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; pack; }
for v in bd p40 p32 m32; do n $v ptap-$v; done
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for v in bd p32 bd p32; do run $v-$RANDOM ptap-$v; done; pack
cat $T/times.txt
