#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-bd = main c69340b; branch blockorder built with
# PTAP_EXP_MMAH_PTR=1 (ptap-p40), plus PTAP_EXP_MMAH_HF=1 (the halving flag a predicated multiply by 0.5, no
# scale register: ptap-p40h), plus PTAP_EXP_MMAH_LATE=1 (the slot read after the loop: ptap-p40hl), and the same at
# 32 registers (PTAP_EXP_MMAH_BOUNDS=128,16: ptap-p32hl). Run from the repository root with carry [".device"].
# Ledger step 32, third call.
. benches/results/device-session.sh o3
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2 3; do for v in bd p40 p40h p40hl p32hl; do b $v-$pass ptap-$v; done; pack; done
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 100 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_mmah_6x6x6" --launch-count 4 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; pack; }
for v in p40h p40hl p32hl; do n $v ptap-$v; done
cat $T/times.txt
