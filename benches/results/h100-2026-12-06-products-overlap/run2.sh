#!/bin/bash
# overlap probe: level 0's P^T W' on a side stream beside its A P (measurement only), interleaved with main's order.
R=$PWD; T=/tmp/o2; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
bench() { tag=$1; shift; env "$@" timeout 90 $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
bench main-1 X=1
bench ideal PTAP_PROBE_OVERLAP=ideal
bench c8 PTAP_PROBE_OVERLAP=8
bench c8p PTAP_PROBE_OVERLAP=8p
bench main-2 X=1
cat $T/times.txt
