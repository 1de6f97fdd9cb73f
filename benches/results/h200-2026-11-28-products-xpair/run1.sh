#!/bin/bash
# xpair run 1: k = 16 sharing counts, device tests, products A/B (main, xpair on/off, all levels paired), hot step / cold setup, ncu.
R=$PWD; O=/tmp/o1; mkdir -p $O
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-xpair/bins.tar.xz
B=/tmp/bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
nvidia-smi -L > $O/nvidia-smi.txt 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
echo "ncu=$NCU" >> $O/times.txt
while read exe dir; do
  ( cd $R/$dir && timeout 200 $B/$exe --include-ignored --nocapture --test-threads 1 ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done < $B/MAP
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $O/bench-$tag.json > $O/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
bench main-1 main
bench on-1 xpair
bench off-1 xpair PTAP_SYM_XPAIR=off
bench main-2 main
bench on-2 xpair
bench off-2 xpair PTAP_SYM_XPAIR=off
bench all-1 xpair PTAP_SYM_FOLD=off PTAP_SYM_XPAIR=on
bench nofold-1 xpair PTAP_SYM_FOLD=off PTAP_SYM_XPAIR=off
bench main-3 main
bench on-3 xpair
run() { tag=$1; bin=$2; timeout 90 $B/ptap-$bin run --k 16 --steps 4 --device cuda --json $O/run-$tag.json > $O/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
run warm xpair
for i in 1 2; do run main-$i main; run xpair-$i xpair; done
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis"
if [ -n "$NCU" ]; then
  for x in on off; do
    PTAP_SYM_XPAIR=$x timeout 120 $NCU $SEC -k regex:'ptap_mma16_6x3x6t|ptap_mma2_6x3x6t|ptap_symmetrize_6x6' --launch-count 2 --csv --page details $B/ptap-xpair bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $O/ncu-$x.csv 2> $O/ncu-$x.err
    ts "ncu $x rc=$?"
  done
fi
cat $O/times.txt
tar -C /tmp -cJf $OUT/run1.tar.xz o1
cp $O/times.txt $OUT/times.txt
