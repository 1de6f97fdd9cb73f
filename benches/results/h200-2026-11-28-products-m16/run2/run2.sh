#!/bin/bash
# m16 run 2: the m16 kernel with absent sides not loaded, lane base pointers, 2/3/4 entries per step; walks; tests; ncu.
R=$PWD; T=/tmp/o2; mkdir -p $T; D=$R/.device-m16; B=$D/b
mkdir -p $B && tar -C $B -xJf $D/bins2.tar.xz
mkdir -p /work && ln -sfn $R /work/main
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
NCU=/usr/local/cuda/bin/ncu
for u in 2 3 4; do
  ( cd $R/tests && timeout 90 $B/cuda_only-u$u the_symmetric_pairs --nocapture ) > $T/t-cuda_only-sym-u$u.txt 2>&1
  ts "cuda_only sym u$u rc=$? $(grep 'test result' $T/t-cuda_only-sym-u$u.txt | tail -1)"
done
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4}' | tr '\n' ' ')"; }
bench main-1 main X=1
bench u2-1 u2 X=1
bench u3-1 u3 X=1
bench u4-1 u4 X=1
for w in 1,w4 1,w2 2 i2 i4 i2,w4 i4,w4; do bench "u2-w$w" u2 PTAP_SYM_AP_WALK=$w; done
bench u4-w1,w4 u4 PTAP_SYM_AP_WALK=1,w4
bench u3-w1,w4 u3 PTAP_SYM_AP_WALK=1,w4
bench main-2 main X=1
bench u2-2 u2 X=1
bench u2off u2 PTAP_SYM_AP_M16=off
pack
run() { tag=$1; bin=$2; timeout 90 $B/ptap-$bin run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep 'hot mean  matrix' $T/run-$tag.txt)"; }
run main-1 main; run u2-1 u2; run main-2 main; run u2-2 u2
pack
K='regex:ptap_mmah_6x6x6|ptap_m16h_6x6x6'
MET=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_sectors.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,dram__bytes.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.sum,smsp__inst_executed_op_global_ld.sum
for b in main u2 u4 u2w1; do
  bin=$b; env="X=1"; [ $b = u2w1 ] && { bin=u2; env="PTAP_SYM_AP_WALK=1,w4"; }
  env $env timeout 90 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "$K" --launch-count 4 --csv --page raw $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > "$T/ncu-time-$b.csv" 2> "$T/ncu-time-$b.err"
  ts "ncu time $b rc=$?"
done
pack
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section InstructionStats --section SchedulerStats"
timeout 100 $NCU --kill on --cache-control none $SEC -k "$K" --launch-count 2 --csv --page details $B/ptap-u2 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-sec-u2.csv 2> $T/ncu-sec-u2.err
ts "ncu sections u2 rc=$?"
pack
for exe in cuda_only conformance pair_rebuild_beam schedule_records cycle_kernels; do
  ( cd $R/tests && timeout 150 $B/$exe-u2 --include-ignored ) > $T/t-$exe.txt 2>&1
  ts "$exe u2 rc=$? $(grep 'test result' $T/t-$exe.txt | tail -1)"
done
cat $T/times.txt
