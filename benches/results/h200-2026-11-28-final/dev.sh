#!/bin/bash
R=$PWD; O0=$OUT; O=$O0/all; mkdir -p $O
mkdir -p /work && ln -sfn $R /work/main
tar -C .device-lead -xJf .device-lead/bins.tar.xz
B=$R/.device-lead/bin
mkdir -p target/release && cp $B/ptap target/release/ptap
nvidia-smi > $O/nvidia-smi.txt 2>&1
while read exe dir; do
  ( cd $R/$dir && timeout 200 $B/$exe --include-ignored ) > $O/t-$exe.txt 2>&1
  echo "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)" >> $O/tests.txt
done < $B/MAP
P=target/release/ptap
for i in 1 2; do timeout 100 $P run --k 16 --steps 4 --device cuda --json $O/run-$i.json > $O/run-$i.txt 2>&1; echo "run-$i rc=$?" >> $O/tests.txt; done
C=/tmp/ptap-cache; rm -rf $C
timeout 100 $P run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/cache-write.json > $O/cache-write.txt 2>&1; echo "cache-write rc=$?" >> $O/tests.txt
for i in 1 2 3; do timeout 100 $P run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/cache-$i.json > $O/cache-$i.txt 2>&1; echo "cache-$i rc=$?" >> $O/tests.txt; done
cp $O/tests.txt $O0/
tar -C $O0 -czf $O0/all.tgz all && rm -rf $O
cat $O0/tests.txt
