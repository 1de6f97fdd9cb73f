#!/bin/bash
# kpack run 1: device tests of the K-packed kernels, the products A/B (main's binary, PTAP_KPACK=off|on|ap|rw), ncu off/on.
R=$PWD; O=$OUT
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-kpack/bins.tar.xz
B=/tmp/bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
nvidia-smi -L > $O/nvidia-smi.txt 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
echo "ncu=$NCU" >> $O/times.txt
while read exe dir; do
  ( cd $R/$dir && timeout 150 $B/$exe --include-ignored ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done < $B/MAP
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair,tensor-pair-sym --repeat 5 --json $O/bench-$tag.json > $O/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
bench main-1 main
bench off-1 kpack PTAP_KPACK=off
bench on-1 kpack PTAP_KPACK=on
bench ap-1 kpack PTAP_KPACK=ap
bench rw-1 kpack PTAP_KPACK=rw
bench main-2 main
bench on-2 kpack PTAP_KPACK=on
bench off-2 kpack PTAP_KPACK=off
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats"
if [ -n "$NCU" ]; then
  for kp in off on; do
    PTAP_KPACK=$kp timeout 110 $NCU $SEC -k regex:'ptap_mma' --launch-count 12 --csv --page details $B/ptap-kpack bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > /tmp/ncu-$kp.csv 2> $O/ncu-$kp.err
    ts "ncu $kp rc=$?"
    xz -c /tmp/ncu-$kp.csv > $O/ncu-$kp.csv.xz
  done
fi
cat $O/times.txt
