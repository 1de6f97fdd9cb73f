#!/bin/bash
# Follow-up of run1.sh (same binaries): windows around the best ones, and the two knobs together.
# bash benches/results/h100-2026-12-07-foldorder/run2.sh
. benches/results/device-session.sh f2
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ') $(grep -E "^order" $T/bench-$tag.txt | head -1 | cut -c1-90)"; }
for pass in 1 2 3; do
  b m36-$pass ptap-m36
  b fold8-$pass ptap-fo PTAP_FOLD_ORDER=8
  b fold16-$pass ptap-fo PTAP_FOLD_ORDER=16
  b fold32-$pass ptap-fo PTAP_FOLD_ORDER=32
  b lbfold16-$pass ptap-fo PTAP_LB=ptap_mma2f_6x6x6t PTAP_FOLD_ORDER=16
  b rw16-$pass ptap-fo PTAP_RW_ORDER=16
  b rw32-$pass ptap-fo PTAP_RW_ORDER=32
  b rw64-$pass ptap-fo PTAP_RW_ORDER=64
  b both-$pass ptap-fo PTAP_FOLD_ORDER=16 PTAP_RW_ORDER=64
  pack
done
cat $T/times.txt
