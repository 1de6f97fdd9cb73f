#!/bin/bash
# ap6 run 2: tests, the row-chunk sweep (widths x steps x order) against main, ncu of levels 1-2.
R=$PWD; T=/tmp/o2; mkdir -p $T; B=$R/.device-ap6
mkdir -p /work && ln -sfn $R /work/main
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; }
trap pack EXIT
ts start
NCU=/usr/local/cuda/bin/ncu
for exe in cuda_only conformance pair_rebuild_beam front_door; do
  dir=tests; [ $exe = front_door ] && dir=ptap
  ig=--include-ignored; [ $exe = cuda_only ] && ig=""
  ( cd $R/$dir && timeout 150 $B/$exe $ig --nocapture ) > $T/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $T/t-$exe.txt | tail -1)"
done
bench() { tag=$1; bin=$2; v=$3; shift 3; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants $v --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4}' | tr '\n' ' ')"; }
S=tensor-pair-sym
bench main-1 main $S
for w in off 2 2,u8 4 4,u8 8 8,u8 2,u8,s 4,u8,s; do bench "w$w" ap6 $S PTAP_SYM_AP_ROWS=$w; done
bench main-2 main $S
bench def-1 ap6 $S
pack
K='regex:ptap_mmah|ptap_mmarh|ptap_mma2_6x6x6t|ptap_mma2f_6x6x6t|ptap_symsplit_6x6|ptap_symmetrize_6x6'
MET=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_sectors.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
for b in main ap6=off ap6=2,u8 ap6=4,u8 ap6=8,u8; do
  bin=${b%%=*}; w=${b#*=}; env="PTAP_SYM_AP_ROWS=$w"; [ $b = main ] && env="X=1"
  env $env timeout 90 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "$K" --launch-count 40 --csv --page raw $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > "$T/ncu-time-$b.csv" 2> "$T/ncu-time-$b.err"
  ts "ncu time $b rc=$?"
done
pack
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section InstructionStats --section SchedulerStats"
K2='regex:ptap_mmah|ptap_mmarh'
for b in main ap6; do
  timeout 120 $NCU --kill on --cache-control none $SEC -k "$K2" --launch-count 4 --csv --page details $B/ptap-$b bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-sec-$b.csv 2> $T/ncu-sec-$b.err
  ts "ncu sections $b rc=$?"
done
cat $T/times.txt
