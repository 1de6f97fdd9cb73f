#!/bin/bash
# Builds run.sh's binaries from the working tree (main with every launch marshalled on the stack and the products'
# kernels resolved at construction): the ptap binary and every test executable that touches the device, the new
# host-allocation count among them, gzipped into the git-ignored .device/ beside ptap-39.gz
# (device-2026-12-07-pdl/build.sh). From the repository root:
# bash benches/results/device-2026-12-07-launch/build.sh
set -euo pipefail
mkdir -p .device
. benches/results/device-build.sh
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-42.gz
for t in conformance cuda_only cycle_kernels pair_rebuild_beam schedule_records bundle_pattern device_refresh_alloc; do
  gzip -c "$(exe ptap-tests test $t)" > .device/t42-$t.gz
done
gzip -c "$(exe ptap-cuda lib ptap_cuda)" > .device/t42-ptap_cuda.gz
gzip -c "$(exe ptap-cuda test nvrtc)" > .device/t42-nvrtc.gz
gzip -c "$(exe ptap-fem test device_slab --features cuda)" > .device/t42-device_slab.gz
gzip -c "$(exe ptap-user-shape test device)" > .device/t42-user_shape_device.gz
gzip -c "$(exe ptap-dist test device_amg --features nccl)" > .device/t42-device_amg.gz
ls -la .device
