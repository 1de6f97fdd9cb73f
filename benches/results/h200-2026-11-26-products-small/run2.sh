#!/bin/bash
# small run 2: tests, products (main vs branch interleaved), the split's and the wide A P's sweep, ncu of levels 1-2, hot steps.
R=$PWD; O=$OUT; T=/tmp/out2; mkdir -p $T
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-small/bins.tar.xz
B=/tmp/small-bin
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $O/all.tgz . ; }
trap pack EXIT
ts start
NCU=/usr/local/cuda/bin/ncu
for exe in cuda_only conformance pair_rebuild_beam front_door; do
  dir=tests; [ $exe = front_door ] && dir=ptap
  ig=--include-ignored; [ $exe = cuda_only ] && ig=""
  ( cd $R/$dir && timeout 150 $B/$exe $ig --nocapture ) > $T/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $T/t-$exe.txt | tail -1)"
done
bench() { tag=$1; bin=$2; v=$3; shift 3; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants $v --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
TP=tensor-pair,tensor-pair-sym
bench main-1 main $TP
bench auto-1 small $TP
bench main-2 main $TP
bench auto-2 small $TP
S=tensor-pair-sym
bench off small $S PTAP_SYM_SPLIT=off
bench s8 small $S PTAP_SYM_SPLIT=8
bench s16 small $S PTAP_SYM_SPLIT=16
bench s32 small $S PTAP_SYM_SPLIT=32
bench s64 small $S PTAP_SYM_SPLIT=64
bench wide small $S PTAP_SYM_AP_WIDE=on
bench wide-off small $S PTAP_SYM_AP_WIDE=on PTAP_SYM_SPLIT=off
bench main-3 main $S
bench auto-3 small $S
pack
K='regex:ptap_mmah|ptap_mma2_6x6x6t|ptap_mma2f_6x6x6t|ptap_symsplit_6x6|ptap_symmetrize_6x6'
MET=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
for b in main small small-wide; do
  bin=${b%-wide}; env=""; [ $b = small-wide ] && env="PTAP_SYM_AP_WIDE=on"
  env $env timeout 90 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "$K" --launch-count 40 --csv --page raw $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-time-$b.csv 2> $T/ncu-time-$b.err
  ts "ncu time $b rc=$?"
done
pack
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis"
for b in main small; do
  timeout 120 $NCU --kill on --cache-control none $SEC -k "$K" --launch-count 40 --csv --page details $B/ptap-$b bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-sec-$b.csv 2> $T/ncu-sec-$b.err
  ts "ncu sections $b rc=$?"
done
pack
run() { tag=$1; bin=$2; timeout 100 $B/ptap-$bin run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
run warm main
for i in 1 2 3; do run main-$i main; run small-$i small; done
cat $T/times.txt
