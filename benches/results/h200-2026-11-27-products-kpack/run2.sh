#!/bin/bash
# kpack run 2: the products A/B lost in run 1 (PTAP_KPACK=on|rw against off and main), ncu off/on; all in one tar.
R=$PWD; O=/tmp/o; mkdir -p $O
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-kpack/bins.tar.xz
B=/tmp/bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair,tensor-pair-sym --repeat 5 --json $O/bench-$tag.json > $O/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
bench off-3 kpack PTAP_KPACK=off
bench on-3 kpack PTAP_KPACK=on
bench rw-3 kpack PTAP_KPACK=rw
bench main-3 main
bench on-4 kpack PTAP_KPACK=on
bench rw-4 kpack PTAP_KPACK=rw
bench off-4 kpack PTAP_KPACK=off
SEC="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats"
for kp in off on; do
  PTAP_KPACK=$kp timeout 110 $NCU $SEC -k regex:'ptap_mma' --launch-count 12 --csv --page details $B/ptap-kpack bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $O/ncu-sym-$kp.csv 2> $O/ncu-sym-$kp.err
  ts "ncu sym $kp rc=$?"
  PTAP_KPACK=$kp timeout 60 $NCU $SEC -k regex:'ptap_mma2_3x3x6' --launch-count 1 --csv --page details $B/ptap-kpack bench --device cuda --k 16 --variants tensor-pair --repeat 1 > $O/ncu-tp-$kp.csv 2> $O/ncu-tp-$kp.err
  ts "ncu tp $kp rc=$?"
done
cat $O/times.txt
tar -C /tmp -cJf $OUT/run2.tar.xz o
