#!/bin/bash
# Ledger step 35, second call (same warm machine, same .device/ as run1.sh): the new kernel's walks forced on both 6x6
# levels, then both binaries at their defaults. Run from the repository root with carry [".device"].
. benches/results/device-session.sh g2; mkdir -p /tmp/bin; for f in ptap-diag ptap-fin; do gunzip -c $B/$f.gz > /tmp/bin/$f; chmod +x /tmp/bin/$f; done; B=/tmp/bin
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
for c in 8 32; do b diag-c$c ptap-diag PTAP_SYM_AP_COARSE_WALK=$c; done; b diag-c16 ptap-diag PTAP_SYM_AP_COARSE_WALK=16; b diag-4 ptap-diag; b fin-4 ptap-fin; pack; cat $T/times.txt
