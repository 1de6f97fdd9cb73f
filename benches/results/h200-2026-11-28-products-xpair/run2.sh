#!/bin/bash
# xpair run 2: the final binary (16-row pairs off by default): device tests (k = 16 counts and matching), products and run against main.
R=$PWD; O=/tmp/o2; mkdir -p $O
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-xpair/bins.tar.xz
B=/tmp/bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
nvidia-smi -L > $O/nvidia-smi.txt 2>&1
while read exe dir; do
  ( cd $R/$dir && timeout 200 $B/$exe --include-ignored --nocapture --test-threads 1 ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done < $B/MAP
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $O/bench-$tag.json > $O/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
bench main-1 main
bench xpair-1 xpair
bench on-1 xpair PTAP_SYM_XPAIR=on
bench main-2 main
bench xpair-2 xpair
run() { tag=$1; bin=$2; timeout 90 $B/ptap-$bin run --k 16 --steps 4 --device cuda --json $O/run-$tag.json > $O/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
run warm xpair
for i in 1 2; do run main-$i main; run xpair-$i xpair; done
cat $O/times.txt
tar -C /tmp -cJf $OUT/run2.tar.xz o2
cp $O/times.txt $OUT/times.txt
