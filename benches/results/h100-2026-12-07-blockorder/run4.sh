#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-bd = main c69340b; ptap-new = main 45154e8 (the predicated
# MMA kernels' later-step pointers as offsets of step 0's); cuda_only and conformance = its device tests; ptap-wC = branch
# blockorder built with PTAP_EXP_MMAH_WALK=C; ptap-fw = branch blockorder (the split pass's commit) built with PTAP_EXP_FOLD_WALK=1 PTAP_EXP_SPLIT_UNROLL=1
# (its fold needs PTAP_EXP_FOLD_WALK at run time; 1,w4 is main's geometry, so fw-1,w4 measures the unrolled split pass). Run from the repository root with carry [".device"].
# Ledger step 32, fourth call: the kept change (tests, products, hot step, counters) and walks of the coarse A P.
. benches/results/device-session.sh o4
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
timeout 100 $B/cuda_only --test-threads 2 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok, $(grep -c 'FAILED' $T/tests.txt) failed"; pack
timeout 120 $B/conformance --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for pass in 1 2; do for v in bd new; do b $v-$pass ptap-$v; done; pack; done
run() { tag=$1; bin=$2; shift 2; timeout 60 $B/$bin run --k 16 --steps 4 --device cuda "$@" --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$?"; }
for pass in 1 2; do run bd-$pass ptap-bd; run new-$pass ptap-new; done; pack
# Walks: a block's W warps walk C consecutive slots of the coarse halving A P, interleaved; window order or row-major.
b w32-4 ptap-w32 PTAP_EXP_MMAH_WALK=32 PTAP_SYM_AP_WARPS=4
b w64-8 ptap-w64 PTAP_EXP_MMAH_WALK=64 PTAP_SYM_AP_WARPS=8
b w64-8-rm ptap-w64 PTAP_EXP_MMAH_WALK=64 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
b w128-8-rm ptap-w128 PTAP_EXP_MMAH_WALK=128 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
b w32-8-rm ptap-w32 PTAP_EXP_MMAH_WALK=32 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
# Fold walks (ptap-fw, built with PTAP_EXP_FOLD_WALK): level 1's folded P^T W' units, [i]CHUNK per warp, W warps.
for fw in 1,w4 4,w4 i4,w4 i4,w8 i8,w8 i2,w16; do b fw-$fw ptap-fw PTAP_EXP_FOLD_WALK=$fw; done
b new-3 ptap-new; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 16 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; pack; }
n new ptap-new
n w64-8-rm ptap-w64 PTAP_EXP_MMAH_WALK=64 PTAP_SYM_AP_WARPS=8 PTAP_SYM_AP_ORDER=row-major
n fw-i4w8 ptap-fw PTAP_EXP_FOLD_WALK=i4,w8
cat $T/times.txt
