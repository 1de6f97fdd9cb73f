#!/bin/bash
# Builds run.sh's `ptap-ps` into the git-ignored .device/, from a checkout of branch `pstage` (or main 6b42fd6 with
# ../h100-2026-12-07-pstage.patch applied). From the repository root:
# bash benches/results/device-2026-12-07-pstage/build.sh
set -euo pipefail
mkdir -p .device
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-ps.gz
ls -la .device
