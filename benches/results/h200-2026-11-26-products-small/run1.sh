#!/bin/bash
# small run 1: where level 2's 0.142 ms goes (nsys trace, ncu), and the split P^T W' candidate swept.
R=$PWD; O=$OUT
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-small/bins.tar.xz
B=/tmp/small-bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
nvidia-smi -L > $O/nvidia-smi.txt 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "ncu=$NCU nsys=$NSYS" >> $O/times.txt
# Correctness of the candidate first (fast).
for exe in cuda_only conformance; do
  ( cd $R/tests && timeout 90 $B/$exe --nocapture ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $O/bench-$tag.json > $O/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
bench main-1 main
bench auto-1 small
bench off small PTAP_SYM_SPLIT=off
bench s8 small PTAP_SYM_SPLIT=8
bench s16 small PTAP_SYM_SPLIT=16
bench s32 small PTAP_SYM_SPLIT=32
bench main-2 main
bench auto-2 small
if [ -n "$NSYS" ]; then
  for b in main small; do
    timeout 120 $NSYS profile --trace=cuda --sample=none --cpuctxsw=none -o /tmp/ns-$b $B/ptap-$b bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 > $O/nsys-$b.log 2>&1
    ts "nsys $b rc=$?"
    timeout 90 $NSYS stats --report cuda_gpu_trace --format csv --output /tmp/tr-$b /tmp/ns-$b.nsys-rep > /dev/null 2>> $O/nsys-$b.log
    ts "nsys stats $b rc=$?"
    ls /tmp/tr-$b* >> $O/times.txt
    xz -c /tmp/tr-$b*.csv > $O/trace-$b.csv.xz
  done
fi
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis"
if [ -n "$NCU" ]; then
  for b in main small; do
    timeout 120 $NCU --kill on $SEC -k regex:'ptap_mmah_6x6x6|ptap_mma2_6x6x6t|ptap_symsplit_6x6' --launch-count 14 --csv --page details $B/ptap-$b bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > /tmp/ncu-$b.csv 2> $O/ncu-$b.err
    ts "ncu $b rc=$?"
    xz -c /tmp/ncu-$b.csv > $O/ncu-$b.csv.xz
  done
fi
cat $O/times.txt
