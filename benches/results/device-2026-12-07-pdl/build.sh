#!/bin/bash
# Builds run.sh's binaries on the build machine from the working tree (step 39: programmatic dependent launch on
# main): the ptap binary and every test executable that touches the device, gzipped into the git-ignored .device/
# beside the previous main's ptap-m37.gz (device-2026-12-07-main/build.sh). From the repository root:
# bash benches/results/device-2026-12-07-pdl/build.sh
set -euo pipefail
mkdir -p .device
. benches/results/device-build.sh
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-39.gz
for t in conformance cuda_only cycle_kernels pair_rebuild_beam schedule_records bundle_pattern; do
  gzip -c "$(exe ptap-tests test $t)" > .device/t39-$t.gz
done
gzip -c "$(exe ptap-cuda lib ptap_cuda)" > .device/t39-ptap_cuda.gz
gzip -c "$(exe ptap-cuda test nvrtc)" > .device/t39-nvrtc.gz
gzip -c "$(exe ptap-fem test device_slab --features cuda)" > .device/t39-device_slab.gz
gzip -c "$(exe ptap-user-shape test device)" > .device/t39-user_shape_device.gz
gzip -c "$(exe ptap-dist test device_amg --features nccl)" > .device/t39-device_amg.gz
ls -la .device
