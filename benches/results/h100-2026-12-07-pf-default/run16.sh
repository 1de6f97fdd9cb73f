#!/bin/bash
# Device binaries (git-ignored .device/): ptap-main = main 42a5788 (default pf 0.03), ptap-def = main a8136d4 and on
# (default pf 0.07). Run from the repository root with carry [".device"]: bash benches/results/h100-2026-12-07-pf-default/run16.sh
# A short repeat of run13 for an H200 (asked for at the session's end): the hot step of the old and the new default,
# two interleaved passes, and the new default's bench.
. benches/results/device-session.sh o16
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2; do run old-$pass ptap-main; run def-$pass ptap-def; pack; done
timeout 90 $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-def.json > $T/bench-def.txt 2>&1; ts "bench def rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-def.txt | awk '{print $4, $6}' | tr '\n' ' ')"
cat $T/times.txt
