#!/bin/bash
# One device call (about 4 minutes; 6.5 on an H200): the pdl and symupper experiments against main, most important first, then
# main's schedule-cache start and counters. Binaries (git-ignored .device/, gzipped; build.sh beside this makes them):
# ptap-m37 = main 2da0d97 (kernels of 6e88f11); ptap-pdl, cuda_only-pdl, conformance-pdl = main plus
# h100-2026-12-07-pdl/pdl-experiment.patch; ptap-su, cuda_only-su = main plus
# h100-2026-12-07-symupper/symupper-experiment.patch. Run from the repository root with carry [".device"]:
# bash benches/results/device-2026-12-07-main/run2.sh
. benches/results/device-session.sh c2
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ') $(grep -E '^device solve' $T/bench-$tag.txt | cut -c1-60)"; }
t() { tag=$1; bin=$2; filt=$3; shift 3; env "$@" timeout 90 $B/$bin --test-threads 2 $filt > $T/tests-$tag.txt 2>&1; ts "tests $tag rc=$? $(grep -c '\.\.\. ok' $T/tests-$tag.txt) ok, $(grep -c 'FAILED' $T/tests-$tag.txt) failed"; }
run() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/$bin run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep -E '^hot mean +assembly' $T/run-$tag.txt | cut -c1-150)"; }
for pass in 1 2; do b m37-$pass ptap-m37; b pdl-$pass ptap-pdl PTAP_PDL=1; b su-$pass ptap-su PTAP_SYM_UPPER=1; pack; done
t pdl-sym cuda_only-pdl symmetric PTAP_PDL=1; pack
PTAP_PDL=1 timeout 90 $B/conformance-pdl --test-threads 4 cuda > $T/conformance-pdl.txt 2>&1; ts "conformance pdl rc=$? $(grep -c '\.\.\. ok' $T/conformance-pdl.txt) ok, $(grep -c 'FAILED' $T/conformance-pdl.txt) failed"; pack
run m37 ptap-m37; run pdl ptap-pdl PTAP_PDL=1; pack
b m37-3 ptap-m37; b pdl-3 ptap-pdl PTAP_PDL=1; b su-3 ptap-su PTAP_SYM_UPPER=1; pack
t su-sym cuda_only-su symmetric PTAP_SYM_UPPER=1; t pdl-all cuda_only-pdl "" PTAP_PDL=1; pack
C=/tmp/ptap-cache; rm -rf $C
timeout 100 $B/ptap-m37 run --k 16 --steps 2 --device cuda --schedule-cache $C --json $T/cache-write.json > $T/cache-write.txt 2>&1; ts "cache write rc=$? $(grep -E '^cold' $T/cache-write.txt | cut -c1-150)"
for i in 1 2; do timeout 100 $B/ptap-m37 run --k 16 --steps 2 --device cuda --schedule-cache $C --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$? $(grep -E '^cold' $T/cache-$i.txt | cut -c1-150)"; done; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum,launch__registers_per_thread
n() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 12 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; }
n m37 ptap-m37; n su ptap-su PTAP_SYM_UPPER=1; pack
# On an H200 only (issue #12 states its goals there): the default's choice re-measured (hot step at pf 0.03 / 0.05 /
# 0.07 / 0.08, two interleaved passes) and the unfiltered hierarchy's products (pf 0), about 2.5 minutes.
if grep -q 'H200' $T/nvidia-smi.txt; then
  for pass in 1 2; do for pf in 0.03 0.05 0.07 0.08; do timeout 60 $B/ptap-m37 run --k 16 --steps 4 --device cuda --pf $pf --json $T/sweep-pf$pf-$pass.json > $T/sweep-pf$pf-$pass.txt 2>&1; ts "sweep pf $pf pass $pass rc=$? $(grep -E '^hot mean +assembly' $T/sweep-pf$pf-$pass.txt | cut -c1-150) its $(awk '$1 ~ /^[0-9]+$/ {printf "%s ", $2}' $T/sweep-pf$pf-$pass.txt)"; done; pack; done
  timeout 90 $B/ptap-m37 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --pf 0 --json $T/bench-pf0.json > $T/bench-pf0.txt 2>&1; ts "bench pf0 rc=$? $(grep -E '^l[012] +dmma' $T/bench-pf0.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; pack
fi
cat $T/times.txt
