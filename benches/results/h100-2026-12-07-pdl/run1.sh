#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-m37 = main 6e88f11; ptap-pdl, cuda_only-pdl, conformance-pdl =
# branch pdl (main plus PTAP_PDL=1: every kernel opens on griddepcontrol.launch_dependents + griddepcontrol.wait,
# and every launch goes through cuLaunchKernelEx with programmatic stream serialization allowed). Run from the
# repository root with carry [".device"]: bash benches/results/h100-2026-12-07-pdl/run1.sh
. benches/results/device-session.sh p1
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
PTAP_PDL=1 timeout 90 $B/cuda_only-pdl --test-threads 2 symmetric > $T/tests-sym.txt 2>&1; ts "tests sym pdl rc=$? $(grep -c '\.\.\. ok' $T/tests-sym.txt) ok, $(grep -c 'FAILED' $T/tests-sym.txt) failed"; pack
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ') $(grep -E '^device solve' $T/bench-$tag.txt | cut -c1-60)"; }
for pass in 1 2 3; do b m37-$pass ptap-m37; b off-$pass ptap-pdl; b pdl-$pass ptap-pdl PTAP_PDL=1; pack; done
run() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/$bin run --k 16 --steps 4 --device cuda --json $T/run-$tag.json > $T/run-$tag.txt 2>&1; ts "run $tag rc=$? $(grep -E '^hot mean' $T/run-$tag.txt | cut -c1-150)"; }
run m37 ptap-m37; run pdl ptap-pdl PTAP_PDL=1; pack
PTAP_PDL=1 timeout 90 $B/conformance-pdl --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance pdl rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
PTAP_PDL=1 timeout 120 $B/cuda_only-pdl --test-threads 2 > $T/tests-all.txt 2>&1; ts "tests all pdl rc=$? $(grep -c '\.\.\. ok' $T/tests-all.txt) ok, $(grep -c 'FAILED' $T/tests-all.txt) failed"; pack
cat $T/times.txt
