#!/bin/bash
# kpack run 3: the final binary (default: only the 6x6 A P stage packed): device tests, products against main, hot steps.
R=$PWD; O=/tmp/o3; mkdir -p $O
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-kpack/bins.tar.xz
B=/tmp/bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
nvidia-smi -L > $O/nvidia-smi.txt 2>&1
while read exe dir; do
  ( cd $R/$dir && timeout 150 $B/$exe --include-ignored ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done < $B/MAP
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair,tensor-pair-sym --repeat 5 --json $O/bench-$tag.json > $O/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
bench main-1 main
bench kpack-1 kpack
bench off-1 kpack PTAP_KPACK=off
bench main-2 main
bench kpack-2 kpack
bench off-2 kpack PTAP_KPACK=off
run() { tag=$1; bin=$2; timeout 90 $B/ptap-$bin run --k 16 --steps 4 --device cuda --json $O/run-$tag.json > $O/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
run warm kpack
for i in 1 2 3; do run main-$i main; run kpack-$i kpack; done
cat $O/times.txt
tar -C /tmp -cJf $OUT/run3.tar.xz o3
