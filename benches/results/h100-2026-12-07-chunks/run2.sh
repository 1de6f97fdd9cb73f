#!/bin/bash
# Device binaries (git-ignored .device/): ptap-def = main a8136d4 (the product kernels of main), ptap-bd = branch chunks
# with only the halving A P kernel's per-warp run bounds kept, cuda_only = its device tests. Run from the repository
# root with carry [".device"]: bash benches/results/h100-2026-12-07-chunks/run2.sh
# Ledger step 29, second call: the run bounds alone against main, products and the hot step.
. benches/results/device-session.sh o2
timeout 200 $B/cuda_only --test-threads 1 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ')"; }
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2 3; do b def-$pass ptap-def; b bd-$pass ptap-bd; pack; done
for pass in 1 2; do run def-$pass ptap-def; run bd-$pass ptap-bd; pack; done
NCU=/usr/local/cuda/bin/ncu
timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum -k "regex:ptap_mmah_" --launch-count 4 --csv --page raw $B/ptap-bd bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-bd.csv 2> $T/ncu-bd.err; ts "ncu bd rc=$?"
timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum -k "regex:ptap_mmah_" --launch-count 4 --csv --page raw $B/ptap-def bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-def.csv 2> $T/ncu-def.err; ts "ncu def rc=$?"; pack
cat $T/times.txt
