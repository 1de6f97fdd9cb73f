#!/bin/bash
# Lead's device run 1: device tests + the product bench. Run from the repo root on the device.
R=$PWD; O=$OUT
mkdir -p /work && ln -sfn $R /work/main
tar -C .device-lead -xJf .device-lead/bins.tar.xz
B=$R/.device-lead/bin
mkdir -p target/release && cp $B/ptap target/release/ptap
nvidia-smi > $O/nvidia-smi.txt 2>&1
while read exe dir; do
  ( cd $R/$dir && timeout 400 $B/$exe --include-ignored ) > $O/t-$exe.txt 2>&1
  echo "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)" >> $O/tests.txt
done < $B/MAP
P=target/release/ptap
timeout 200 $P bench --device cuda --k 16 --variants column-split,tensor-pair,tensor-pair-sym --repeat 5 --json $O/bench.json > $O/bench.txt 2>&1
echo "bench rc=$?" >> $O/tests.txt
cat $O/tests.txt
