#!/bin/bash
# locality run 1: the fine A P kernel's walk geometry (PTAP_SYM_AP_WALK) and unit order (PTAP_SYM_AP_ORDER), benches and ncu L1/L2 counters.
R=$PWD; T=/tmp/o1; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
bench() { tag=$1; shift; env "$@" timeout 90 $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
P=PTAP_SYM_AP_ORDER; W=PTAP_SYM_AP_WALK
bench main-1 X=1
bench w620-16 $W=i620,w16
bench w930-32 $W=i930,w32
bench p4 $P=pencil:33,33,4,4
bench p4-w620-16 $P=pencil:33,33,4,4 $W=i620,w16
bench p4-w930-32 $P=pencil:33,33,4,4 $W=i930,w32
bench p3-w930-32 $P=pencil:33,33,3,3 $W=i930,w32
bench p4-w620-24 $P=pencil:33,33,4,4 $W=i620,w24
bench i32 $W=i32
bench pcols $P=pcols
bench pcols-w930-32 $P=pcols $W=i930,w32
V=PTAP_SYM_RW_WALK
bench rw-i8-w16 $V=i8,w16
bench rw-i125-w16 $V=i125,w16
bench rw-i125-w32 $V=i125,w32
bench rw-i250-132-w32 $V=i250,132,w32
bench w930-32-rw250 $W=i930,w32 $V=i250,132,w32
bench p4-w930-32-rw125-16 $P=pencil:33,33,4,4 $W=i930,w32 $V=i125,w16
bench main-2 X=1
pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,dram__bytes.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed
nc() { tag=$1; shift; env "$@" timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma2h_3x3x6|ptap_mma2w?_6x3x6t" --launch-skip 0 --launch-count 2 --csv --page raw $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > "$T/ncu-$tag.csv" 2> "$T/ncu-$tag.err"; ts "ncu $tag rc=$?"; }
nc main X=1
nc p4-w930-32-rw125-16 $P=pencil:33,33,4,4 $W=i930,w32 $V=i125,w16
nc w930-32-rw250 $W=i930,w32 $V=i250,132,w32
nc rw-i125-w16 $V=i125,w16
pack
cat $T/times.txt
