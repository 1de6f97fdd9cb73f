#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-main = main f3cffc7 (branch carveout's binary, no env set);
# ptap-cw = the coarse walk (the symmetric pair's coarse halving A P, 32 slots per 4-warp block where the stage fills
# 4 waves of blocks); cuda_only and conformance = its device tests. Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-coarsewalk/run3.sh
# Ledger step 33, second call: the coarse walk's tests, products against main (three interleaved passes), forced
# chunks, level 2's split length, hot steps, counters; on an H200 also issue #12's default figures (pf sweep, starts).
. benches/results/device-session.sh o3
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
H200=0; grep -q H200 $T/nvidia-smi.txt && H200=1; ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1) h200=$H200"
timeout 100 $B/cuda_only --test-threads 2 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok, $(grep -c 'FAILED' $T/tests.txt) failed"; pack
timeout 120 $B/conformance --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2 3; do b main-$pass ptap-main; b cw-$pass ptap-cw; pack; done
for c in 8 16 64; do b cw-c$c ptap-cw PTAP_SYM_AP_COARSE_WALK=$c; done; pack
for pass in 1 2; do for sp in 16 24 32; do b cw-split$sp-$pass ptap-cw PTAP_SYM_SPLIT=$sp; done; b cw-d-$pass ptap-cw; done; pack
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2; do run main-$pass ptap-main; run cw-$pass ptap-cw; done; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 16 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; pack; }
n cw ptap-cw
if [ $H200 = 1 ]; then
  runp() { tag=$1; shift; run $tag ptap-cw "$@"; }
  for pass in 1 2; do for pf in 0.03 0.05 0.06 0.07 0.08 0.1; do runp pf$pf-$pass --pf $pf; done; runp petsc-pf0.07-$pass --aggregation petsc; runp petsc-pf0.03-$pass --aggregation petsc --pf 0.03; pack; done
  timeout 60 $B/ptap-cw run --k 16 --steps 2 --device cuda --json $T/cold-1.json > $T/cold-1.txt 2>&1; ts "cold rc=$?"
  rm -rf /tmp/scd; for i in w 1 2 3; do timeout 60 $B/ptap-cw run --k 16 --steps 2 --device cuda --schedule-cache /tmp/scd --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done; pack
  n main ptap-main
fi
cat $T/times.txt
