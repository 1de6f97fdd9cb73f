#!/bin/bash
# The session's last device call. On an H200: device-2026-12-07-pdl/h200.sh on `ptap-43` (into $OUT/h200; it packs
# after every step, so a call cut short by the budget still brings back its first benches). On any other card: the
# device tests that run the smoothers, built by build2.sh (the Jacobi and Lanczos kernels resolved when a smoother
# is built). From the repository root with carry [".device"]: bash benches/results/device-2026-12-07-launch/last.sh
. benches/results/device-session.sh p43
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
if grep -q 'H200' $T/nvidia-smi.txt; then mkdir -p $OUT/h200; (OUT=$OUT/h200 H200_BIN=ptap-43 bash benches/results/device-2026-12-07-pdl/h200.sh); ts "h200.sh rc=$?"; pack; exit 0; fi
[ -e /work/main ] || { mkdir -p /work && ln -sfn "$R" /work/main; }
mkdir -p /tmp/bin; for f in $B/t43-*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; X=/tmp/bin
t() { name=$1; dir=$2; shift 2; ( cd /work/main/$dir && timeout 150 $X/t43-$name "$@" ) > $T/t-$name.txt 2>&1; ts "test $name rc=$? $(grep 'test result' $T/t-$name.txt | tail -1) skips $(grep -c 'skipping' $T/t-$name.txt)"; }
t device_refresh_alloc tests; t cycle_kernels tests --include-ignored; t conformance tests; pack
t cuda_only tests; t user_shape_device tests/user-shape; t device_amg dist --nocapture; pack
cat $T/times.txt
