#!/bin/bash
# One device call (about 2.5 minutes; 7 on an H200): every device test executable of main with every launch's
# arguments marshalled on the stack and the products' kernels resolved when a product is built (ptap-42), the new
# host-allocation count among them; then two interleaved passes of the k = 16 products bench and of the time-step
# driver's hot step against main 475841f (ptap-39). On an H200 it goes on with
# device-2026-12-07-pdl/h200.sh on ptap-42 (into $OUT/h200). Binaries: build.sh beside this, and
# device-2026-12-07-pdl/build.sh for ptap-39. From the repository root with carry [".device"]:
# bash benches/results/device-2026-12-07-launch/run.sh
. benches/results/device-session.sh p42
# The test executables find their data under the build machine's checkout path.
[ -e /work/main ] || { mkdir -p /work && ln -sfn "$R" /work/main; }
mkdir -p /tmp/bin; for f in $B/ptap-39.gz $B/ptap-42.gz $B/t42-*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; X=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
b() { tag=$1; bin=$2; shift 2; timeout 90 $X/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json "$@" > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ') $(grep -E '^device solve' $T/bench-$tag.txt | cut -c1-60)"; }
run() { tag=$1; bin=$2; shift 2; timeout 60 $X/$bin run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep -E '^hot mean +assembly' $T/run-$tag.txt | cut -c1-150)"; }
# t NAME DIR [ARGS]: one test executable, run from its crate's directory.
t() { name=$1; dir=$2; shift 2; ( cd /work/main/$dir && timeout 150 $X/t42-$name "$@" ) > $T/t-$name.txt 2>&1; ts "test $name rc=$? $(grep 'test result' $T/t-$name.txt | tail -1) skips $(grep -c 'skipping' $T/t-$name.txt)"; }
t device_refresh_alloc tests; t cuda_only tests --include-ignored; t conformance tests; t cycle_kernels tests --include-ignored; pack
t pair_rebuild_beam tests; t schedule_records tests; t bundle_pattern tests; t ptap_cuda cuda; t nvrtc cuda; t device_slab fem --nocapture
t user_shape_device tests/user-shape; t device_amg dist --nocapture; pack
for pass in 1 2; do b m39-$pass ptap-39; b m42-$pass ptap-42; pack; done
for pass in 1 2; do run m39-$pass ptap-39; run m42-$pass ptap-42; done; pack
if grep -q 'H200' $T/nvidia-smi.txt; then mkdir -p $OUT/h200; (OUT=$OUT/h200 H200_BIN=ptap-42 bash benches/results/device-2026-12-07-pdl/h200.sh); ts "h200.sh rc=$?"; pack; fi
cat $T/times.txt
