#!/bin/bash
# Lead's device run 2: hot steps, the default's ranking, f32, the cache start.
R=$PWD; O=$OUT
mkdir -p /work && ln -sfn $R /work/main
tar -C .device-lead -xJf .device-lead/bins.tar.xz
B=$R/.device-lead/bin
mkdir -p target/release && cp $B/ptap target/release/ptap
P=target/release/ptap
run() { tag=$1; shift; timeout 120 $P run --k 16 --steps 4 --device cuda "$@" --json $O/run-$tag.json > $O/run-$tag.txt 2>&1; echo "$tag rc=$?" >> $O/runs.txt; }
run warm
for i in 1 2 3; do run default-$i; done
run tp --variant tensor-pair
run f32 --smoother-precision f32
run nat-pf0 --aggregation natural --pf 0
run petsc-pf003 --aggregation petsc --pf 0.03
run petsc-pf0 --aggregation petsc --pf 0
C=/tmp/ptap-cache; rm -rf $C
timeout 120 $P run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/cache-write.json > $O/cache-write.txt 2>&1; echo "cache-write rc=$?" >> $O/runs.txt
for i in 1 2 3; do timeout 120 $P run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/cache-$i.json > $O/cache-$i.txt 2>&1; echo "cache-$i rc=$?" >> $O/runs.txt; done
cat $O/runs.txt
