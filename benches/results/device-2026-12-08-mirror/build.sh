#!/bin/bash
# Builds run.sh's binaries from the working tree (the mirrored SpMV: symmetric operators read through their upper
# triangle): `ptap-45` and the device test executables, gzipped into the git-ignored .device/ (older ones removed).
# From the repository root: bash benches/results/device-2026-12-08-mirror/build.sh
set -euo pipefail
mkdir -p .device
rm -f .device/*.gz
. benches/results/device-build.sh
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-45.gz
for t in conformance cuda_only cycle_kernels device_refresh_alloc; do
  gzip -c "$(exe ptap-tests test $t)" > .device/t45-$t.gz
done
gzip -c "$(exe ptap-user-shape test device)" > .device/t45-user_shape_device.gz
gzip -c "$(exe ptap-dist test device_amg --features nccl)" > .device/t45-device_amg.gz
ls -la .device
