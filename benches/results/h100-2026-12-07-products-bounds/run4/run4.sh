#!/bin/bash
# bounds run: the product kernels compiled with __launch_bounds__ (PTAP_PROBE_BOUNDS) for fewer registers and more warps per SM.
R=$PWD; T=/tmp/o4; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
X=PTAP_PROBE_BOUNDS
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
bench() { tag=$1; shift; env "$@" timeout 90 $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
X=PTAP_PROBE_BOUNDS
pack
pack
cat $T/times.txt
bench main-1 Y=1
bench w4b "$X=ptap_mma2h_3x3x6=128,16" PTAP_SYM_AP_WALK=i8,w4
bench w4 Y=1 PTAP_SYM_AP_WALK=i8,w4
bench w4b-i4 "$X=ptap_mma2h_3x3x6=128,16" PTAP_SYM_AP_WALK=i4,w4
bench w4b-i16 "$X=ptap_mma2h_3x3x6=128,16" PTAP_SYM_AP_WALK=i16,w4
bench w8b "$X=ptap_mma2h_3x3x6=256,8" PTAP_SYM_AP_WALK=i8,w8
bench w4b-66 "$X=ptap_mma2h_3x3x6=128,16;ptap_mmah_6x6x6=256,6" PTAP_SYM_AP_WALK=i8,w4
bench main-2 Y=1
pack
cat $T/times.txt
