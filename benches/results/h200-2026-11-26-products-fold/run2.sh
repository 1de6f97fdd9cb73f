#!/bin/bash
# fold run 2: the hybrid (fold on square stages with >= 4 waves of units) against main: bench, hot steps, tests.
R=$PWD; O=$OUT
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp -xJf .device-fold/bins.tar.xz
B=/tmp/fold-bin
ts() { echo "$(date +%s) $*" >> $O/times.txt; }
ts start
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 120 $B/ptap-$bin bench --device cuda --k 16 --variants tensor-pair,tensor-pair-sym --repeat 5 --json $O/bench-$tag.json > $O/bench-$tag.txt 2>&1; ts "bench $tag rc=$?"; }
bench main-1 main
bench auto-1 fold
bench main-2 main
bench auto-2 fold
bench on fold PTAP_SYM_FOLD=on
bench off fold PTAP_SYM_FOLD=off
run() { tag=$1; bin=$2; timeout 100 $B/ptap-$bin run --k 16 --steps 4 --device cuda --json $O/run-$tag.json > $O/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
run warm main
for i in 1 2 3; do run main-$i main; run auto-$i fold; done
for exe in conformance cuda_only pair_rebuild_beam nvrtc ptap_cuda cycle_kernels schedule_records bundle_pattern; do
  dir=tests; case $exe in nvrtc|ptap_cuda) dir=cuda;; esac
  ig=--include-ignored; [ $exe = cuda_only ] && ig=""
  ( cd $R/$dir && timeout 120 $B/$exe $ig --nocapture ) > $O/t-$exe.txt 2>&1
  ts "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)"
done
cat $O/times.txt
cd $O && tar czf /tmp/all.tgz . && rm -f * && mv /tmp/all.tgz $O/all.tgz
