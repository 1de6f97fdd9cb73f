#!/bin/bash
# Builds run2.sh's binaries on the build machine (a clean main checkout; the working tree is restored after each
# patch): main's ptap, then main plus each experiment patch. From the repository root:
# bash benches/results/device-2026-12-07-main/build.sh
set -euo pipefail
R=benches/results
mkdir -p .device
exe() { cargo test --release -p ptap-tests --no-run --message-format=json "$@" 2>/dev/null \
    | python3 -c 'import sys,json
for l in sys.stdin:
    d=json.loads(l)
    if d.get("executable") and d["target"]["name"]==sys.argv[1]: print(d["executable"])' "${@: -1}"; }
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-m37.gz
git apply $R/h100-2026-12-07-pdl/pdl-experiment.patch
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-pdl.gz
gzip -c "$(exe --test cuda_only)" > .device/cuda_only-pdl.gz
gzip -c "$(exe --test conformance)" > .device/conformance-pdl.gz
git checkout -- cuda codegen
git apply $R/h100-2026-12-07-symupper/symupper-experiment.patch
cargo build --release --bin ptap && gzip -c target/release/ptap > .device/ptap-su.gz
gzip -c "$(exe --test cuda_only)" > .device/cuda_only-su.gz
git checkout -- cuda codegen
git status --short
ls -la .device
