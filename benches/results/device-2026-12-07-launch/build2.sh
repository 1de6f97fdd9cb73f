#!/bin/bash
# Builds last.sh's binaries from the working tree (the smoothers' kernels resolved at construction as well):
# `ptap-43` and the device test executables that run the smoothers, gzipped into the git-ignored .device/.
# From the repository root: bash benches/results/device-2026-12-07-launch/build2.sh
set -euo pipefail
mkdir -p .device
. benches/results/device-build.sh
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-43.gz
for t in conformance cuda_only cycle_kernels device_refresh_alloc; do
  gzip -c "$(exe ptap-tests test $t)" > .device/t43-$t.gz
done
gzip -c "$(exe ptap-user-shape test device)" > .device/t43-user_shape_device.gz
gzip -c "$(exe ptap-dist test device_amg --features nccl)" > .device/t43-device_amg.gz
ls -la .device
