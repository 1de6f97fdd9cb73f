#!/bin/bash
# Level 1's folded P^T W' (ptap_mma2f_6x6x6t) and level 2's split P^T W' (ptap_mma2_6x6x6t) capped at 32 registers (__launch_bounds__(128, 16): 64 warps per SM instead of 48) against main.
R=$PWD; T=/tmp/o10; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
bench main-1 ptap-main Y=1
bench capf-1 ptap-pf PTAP_PROBE_BOUNDS=ptap_mma2f_6x6x6t=128,16
bench cap2-1 ptap-pf PTAP_PROBE_BOUNDS=ptap_mma2_6x6x6t=128,16
bench main-2 ptap-main Y=1
bench capf-2 ptap-pf PTAP_PROBE_BOUNDS=ptap_mma2f_6x6x6t=128,16
bench cap2-2 ptap-pf PTAP_PROBE_BOUNDS=ptap_mma2_6x6x6t=128,16
bench main-3 ptap-main Y=1
pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum
for c in "main Y=1" "pf PTAP_PROBE_BOUNDS=ptap_mma2f_6x6x6t=128,16"; do set -- $c; env $2 timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma2f_6x6|ptap_mma2_6x6" --launch-count 4 --csv --page raw $B/ptap-$1 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$1.csv 2> $T/ncu-$1.err; ts "ncu $1 rc=$?"; pack; done
cat $T/times.txt
