#!/bin/bash
# Device binaries (git-ignored .device/): ptap-main = main 42a5788 (default pf 0.03), ptap-bd = main c69340b (default
# pf 0.07, the kernels of ledger step 29). Run from the repository root with carry [".device"]:
# bash benches/results/h200-check/run1.sh
# Issue #12 on an H200: the default against the old (hot step) and the default's products and goals. Exits at once
# on any other card, so that an H100 costs no device time beyond its start.
. benches/results/device-session.sh h200
grep -q H200 $T/nvidia-smi.txt || { ts "not an H200: $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"; cat $T/times.txt; exit 0; }
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2; do run old-$pass ptap-main; run def-$pass ptap-bd; pack; done
timeout 90 $B/ptap-bd bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-def.json > $T/bench-def.txt 2>&1; ts "bench def rc=$?"; pack
timeout 60 $B/ptap-bd run --k 16 --steps 2 --device cuda --json $T/cold-1.json > $T/cold-1.txt 2>&1; ts "cold rc=$?"
rm -rf /tmp/scd; for i in w 1 2; do timeout 60 $B/ptap-bd run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
cat $T/times.txt
