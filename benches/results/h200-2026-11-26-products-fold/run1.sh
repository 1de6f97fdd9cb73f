#!/bin/bash
# fold run 1: product bench main vs fold, ncu of the P^T W' side, device tests.
R=$PWD; O=$OUT
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-fold/bins.tar.xz
B=/tmp/fold-bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
nvidia-smi -L > $O/nvidia-smi.txt 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
echo "ncu=$NCU" >> $O/times.txt
for b in main fold; do
  timeout 150 $B/ptap-$b bench --device cuda --k 16 --variants tensor-pair,tensor-pair-sym --repeat 5 --json $O/bench-$b.json > $O/bench-$b.txt 2>&1
  ts "bench $b rc=$?"
done
for exe in conformance pair_rebuild_beam nvrtc ptap_cuda; do
  dir=tests; case $exe in nvrtc|ptap_cuda) dir=cuda;; esac
  ( cd $R/$dir && timeout 120 $B/$exe --include-ignored ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis"
if [ -n "$NCU" ]; then
  timeout 100 $NCU --kill on $SEC -k regex:'ptap_mma2_6x3x6t|ptap_mma2_6x6x6t|ptap_symmetrize_6x6' --launch-count 8 --csv --page details $B/ptap-main bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $O/ncu-main.csv 2> $O/ncu-main.err
  ts "ncu main rc=$?"
  timeout 100 $NCU --kill on $SEC -k regex:'ptap_mma2f_' --launch-count 4 --csv --page details $B/ptap-fold bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $O/ncu-fold.csv 2> $O/ncu-fold.err
  ts "ncu fold rc=$?"
fi
for exe in cuda_only cycle_kernels schedule_records bundle_pattern; do
  ( cd $R/tests && timeout 60 $B/$exe ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done
cat $O/times.txt
