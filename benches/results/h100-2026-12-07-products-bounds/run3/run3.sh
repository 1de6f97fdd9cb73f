#!/bin/bash
# bounds run: the product kernels compiled with __launch_bounds__ (PTAP_PROBE_BOUNDS) for fewer registers and more warps per SM.
R=$PWD; T=/tmp/o3; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
bench() { tag=$1; shift; env "$@" timeout 90 $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
X=PTAP_PROBE_BOUNDS
bench main-1 Y=1
bench ap64-32 "$X=ptap_mma2h_3x3x6=64,32"
bench ap128-16-w4 "$X=ptap_mma2h_3x3x6=128,16" PTAP_SYM_AP_WALK=i8,w4
bench ap66-256-6 "$X=ptap_mmah_6x6x6=256,6"
bench rw66-128-16 "$X=ptap_mma2f_6x6x6t=128,16;ptap_mma2_6x6x6t=128,16"
bench all "$X=ptap_mma2h_3x3x6=64,32;ptap_mmah_6x6x6=256,6;ptap_mma2f_6x6x6t=128,16;ptap_mma2_6x6x6t=128,16"
bench main-2 Y=1
pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,lts__t_sectors.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum
nc() { tag=$1; shift; env "$@" timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma|ptap_sym" --launch-skip 0 --launch-count 9 --csv --page raw $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > "$T/ncu-$tag.csv" 2> "$T/ncu-$tag.err"; ts "ncu $tag rc=$?"; }
nc main Y=1
nc all "$X=ptap_mma2h_3x3x6=64,32;ptap_mmah_6x6x6=256,6;ptap_mma2f_6x6x6t=128,16;ptap_mma2_6x6x6t=128,16"
pack
cat $T/times.txt
