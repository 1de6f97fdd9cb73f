#!/bin/bash
# One device call (about 5 minutes; 7.5 on an H200), step 39: main with programmatic dependent launch (ptap-39, on by
# default) against the previous main (ptap-m37, kernels of 6e88f11) and against itself with it off (--no-pdl /
# PTAP_PDL=0), three interleaved passes of the k = 16 products bench and of the time-step driver's hot step; then
# every device test executable of ptap-39 with it on. On an H200 also the default's pf sweep and the unfiltered
# products. Binaries: build.sh beside this (and device-2026-12-07-main/build.sh for ptap-m37). From the repository
# root with carry [".device"]: bash benches/results/device-2026-12-07-pdl/run.sh
. benches/results/device-session.sh p39
# The test executables find their data under the build machine's checkout path.
[ -e /work/main ] || { mkdir -p /work && ln -sfn "$R" /work/main; }
mkdir -p /tmp/bin; for f in $B/ptap-m37.gz $B/ptap-39.gz $B/t39-*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
b() { tag=$1; bin=$2; shift 2; timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json "$@" > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ') $(grep -E '^device solve' $T/bench-$tag.txt | cut -c1-60)"; }
run() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/$bin run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep -E '^hot mean +assembly' $T/run-$tag.txt | cut -c1-150)"; }
for pass in 1 2 3; do b m37-$pass ptap-m37; b on-$pass ptap-39; b off-$pass ptap-39 --no-pdl; pack; done
for pass in 1 2 3; do run m37-$pass ptap-m37; run on-$pass ptap-39; run off-$pass ptap-39 PTAP_PDL=0; done; pack
# t NAME DIR [ARGS]: one test executable, run from its crate's directory.
t() { name=$1; dir=$2; shift 2; ( cd /work/main/$dir && timeout 150 $B/t39-$name "$@" ) > $T/t-$name.txt 2>&1; ts "test $name rc=$? $(grep 'test result' $T/t-$name.txt | tail -1) skips $(grep -c 'skipping' $T/t-$name.txt)"; }
t cuda_only tests --include-ignored; t conformance tests; t cycle_kernels tests --include-ignored; t pair_rebuild_beam tests; pack
t schedule_records tests; t bundle_pattern tests; t ptap_cuda cuda; t nvrtc cuda; t device_slab fem --nocapture
t user_shape_device tests/user-shape; t device_amg dist --nocapture; pack
if grep -q 'H200' $T/nvidia-smi.txt; then
  for pass in 1 2; do for pf in 0.03 0.05 0.07 0.08; do timeout 60 $B/ptap-39 run --k 16 --steps 4 --device cuda --pf $pf --json $T/sweep-pf$pf-$pass.json > $T/sweep-pf$pf-$pass.txt 2>&1; ts "sweep pf $pf pass $pass rc=$? $(grep -E '^hot mean +assembly' $T/sweep-pf$pf-$pass.txt | cut -c1-150) its $(awk '$1 ~ /^[0-9]+$/ {printf "%s ", $2}' $T/sweep-pf$pf-$pass.txt)"; done; pack; done
  timeout 90 $B/ptap-39 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --pf 0 --json $T/bench-pf0.json > $T/bench-pf0.txt 2>&1; ts "bench pf0 rc=$? $(grep -E '^l[012] +dmma' $T/bench-pf0.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; pack
  C=/tmp/ptap-cache; rm -rf $C
  for i in 0 1 2; do timeout 100 $B/ptap-39 run --k 16 --steps 2 --device cuda --schedule-cache $C --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$? $(grep -E '^cold' $T/cache-$i.txt | cut -c1-150)"; done; pack
fi
cat $T/times.txt
