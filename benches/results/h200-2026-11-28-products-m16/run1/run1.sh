#!/bin/bash
# m16 run 1: the fragment probe, benches (main vs branch, m16 on/off, walks), hot steps, ncu, device tests.
R=$PWD; T=/tmp/o1; mkdir -p $T; D=$R/.device-m16; B=$D/b
mkdir -p $B && tar -C $B -xJf $D/bins.tar.xz
mkdir -p /work && ln -sfn $R /work/main
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
NCU=/usr/local/cuda/bin/ncu
( cd $R/cuda && timeout 60 $B/ptap_cuda --nocapture ) > $T/t-ptap_cuda.txt 2>&1
ts "ptap_cuda rc=$? $(grep 'test result' $T/t-ptap_cuda.txt | tail -1)"
( cd $R/tests && timeout 120 $B/cuda_only the_symmetric_pairs --nocapture ) > $T/t-cuda_only-sym.txt 2>&1
ts "cuda_only sym rc=$? $(grep 'test result' $T/t-cuda_only-sym.txt | tail -1)"
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4}' | tr '\n' ' ')"; }
bench main-1 main X=1
bench m16-1 m16 X=1
bench off-1 m16 PTAP_SYM_AP_M16=off
bench w1 m16 PTAP_SYM_AP_WALK=1,w4
bench wi4 m16 PTAP_SYM_AP_WALK=i4
bench wi16 m16 PTAP_SYM_AP_WALK=i16
bench wi8w4 m16 PTAP_SYM_AP_WALK=i8,w4
bench wi4w4 m16 PTAP_SYM_AP_WALK=i4,w4
bench main-2 main X=1
bench m16-2 m16 X=1
bench off-2 m16 PTAP_SYM_AP_M16=off
bench main-3 main X=1
bench m16-3 m16 X=1
pack
run() { tag=$1; bin=$2; timeout 90 $B/ptap-$bin run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep 'hot mean  matrix' $T/run-$tag.txt)"; }
run main-1 main; run m16-1 m16; run main-2 main; run m16-2 m16
pack
K='regex:ptap_mmah_6x6x6|ptap_m16h_6x6x6'
MET=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_sectors.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,dram__bytes.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active
for b in main m16 m16off; do
  bin=$b; env="X=1"; [ $b = m16off ] && { bin=m16; env="PTAP_SYM_AP_M16=off"; }
  env $env timeout 90 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "$K" --launch-count 8 --csv --page raw $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > "$T/ncu-time-$b.csv" 2> "$T/ncu-time-$b.err"
  ts "ncu time $b rc=$?"
done
pack
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section InstructionStats --section SchedulerStats"
for b in main m16; do
  timeout 100 $NCU --kill on --cache-control none $SEC -k "$K" --launch-count 2 --csv --page details $B/ptap-$b bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-sec-$b.csv 2> $T/ncu-sec-$b.err
  ts "ncu sections $b rc=$?"
done
pack
( cd $R/cuda && timeout 120 $B/nvrtc --include-ignored ) > $T/t-nvrtc.txt 2>&1
ts "nvrtc rc=$? $(grep 'test result' $T/t-nvrtc.txt | tail -1)"
for exe in cuda_only conformance pair_rebuild_beam schedule_records cycle_kernels; do
  ( cd $R/tests && timeout 150 $B/$exe --include-ignored ) > $T/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $T/t-$exe.txt | tail -1)"
done
cat $T/times.txt
