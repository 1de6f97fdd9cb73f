#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-new = main 45154e8; cuda_only and conformance = its device
# tests. Run from the repository root with carry [".device"]. Ledger step 32, the kept change's tests, one bench,
# one hot step (run4.sh never got a machine that stayed).
. benches/results/device-session.sh o5
mkdir -p /tmp/bin; for f in $B/ptap-new.gz $B/cuda_only.gz $B/conformance.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
timeout 60 $B/cuda_only --test-threads 2 symmetric > $T/tests.txt 2>&1; ts "tests rc=$? $(grep -c '\.\.\. ok' $T/tests.txt) ok, $(grep -c 'FAILED' $T/tests.txt) failed"; pack
timeout 90 $B/conformance --test-threads 4 cuda > $T/conformance.txt 2>&1; ts "conformance rc=$? $(grep -c '\.\.\. ok' $T/conformance.txt) ok, $(grep -c 'FAILED' $T/conformance.txt) failed"; pack
timeout 40 $B/ptap-new bench --device cuda --k 16 --variants tensor-pair-sym,tensor-core --repeat 5 > $T/bench-new.txt 2>&1; ts "bench rc=$? $(grep -E '^l[012] +dmma' $T/bench-new.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; pack
timeout 30 $B/ptap-new run --k 16 --steps 4 --device cuda --json $T/run-new.json > $T/run-new.txt 2>&1; ts "run rc=$?"; pack
cat $T/times.txt
