#!/bin/bash
# One device call: the mirrored SpMV (every level's operator read through its upper triangle,
# PTAP_SPMV_MIRROR=1) against the plain one (PTAP_SPMV_MIRROR=0, main's default), one binary (ptap-45). First
# the device tests (the two new mirrored-SpMV tests in cuda_only); then two interleaved passes of the k = 16 bench (its SpMV table times the
# mirrored SpMV of every square operator at several range lengths) and of the time-step driver's hot step.
# The binaries (ptap-45, t45-*) are main's of 2026-12-08's twenty-seventh session: besides the mirror they carry the
# backend's resolved common kernels and the new allocation test of a device hierarchy's refresh and solve.
# Binaries: build.sh beside this. From the repository root with carry [".device"]:
# bash benches/results/device-2026-12-08-mirror/run.sh
. benches/results/device-session.sh p45
[ -e /work/main ] || { mkdir -p /work && ln -sfn "$R" /work/main; }
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; X=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
b() { tag=$1; shift; timeout 120 env "$@" $X/ptap-45 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l0 +A ' $T/bench-$tag.txt | awk '{print $5}') $(grep -E '^device solve' $T/bench-$tag.txt | cut -c1-140)"; }
run() { tag=$1; shift; timeout 90 env "$@" $X/ptap-45 run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep -E '^hot mean +assembly' $T/run-$tag.txt | cut -c1-150)"; }
t() { name=$1; dir=$2; shift 2; ( cd /work/main/$dir && timeout 150 $X/t45-$name "$@" ) > $T/t-$name.txt 2>&1; ts "test $name rc=$? $(grep 'test result' $T/t-$name.txt | tail -1) skips $(grep -c 'skipping' $T/t-$name.txt)"; }
t cuda_only tests; pack
b plain-1 PTAP_SPMV_MIRROR=0; b mirror-1 PTAP_SPMV_MIRROR=1; pack
run plain-1 PTAP_SPMV_MIRROR=0; run mirror-1 PTAP_SPMV_MIRROR=1; pack
t conformance tests; t cycle_kernels tests --include-ignored; t device_refresh_alloc tests; pack
t user_shape_device tests/user-shape; t device_amg dist --nocapture; pack
b plain-2 PTAP_SPMV_MIRROR=0; b mirror-2 PTAP_SPMV_MIRROR=1; pack
run plain-2 PTAP_SPMV_MIRROR=0; run mirror-2 PTAP_SPMV_MIRROR=1; pack
cat $T/times.txt
