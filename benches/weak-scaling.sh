#!/usr/bin/env bash
# Weak scaling of the GPU ranks (issue #14): `ptap run --device cuda` under
# mpirun on 1, 2 and 4 GPUs (as many as there are), about 1M unknowns per GPU
# (k = 16, the beam `--length` times longer on `--length` GPUs: the dof count
# doubles with the GPUs), the paper's 8-GPU case (k = 32) on all the GPUs,
# and single-process `ptap run --device cuda` at k = 16 as the one-GPU
# reference; then one markdown table (benches/weak_scaling_table.py).
#
#   benches/weak-scaling.sh [--gpus N] [--ptap PATH] [--out DIR] [--k K]
#                           [--big-k K] [--steps S] [--timeout SECONDS]
#                           [--extra "FLAGS"]
#
# --gpus: GPUs to use (default: every GPU `nvidia-smi -L` lists); runs on 1,
# 2, 4, ... up to it. --ptap: the binary built with `--features mpi`
# (default target/release/ptap). --big-k 0 skips the k = 32 run. Each run
# writes OUT/<name>.json and OUT/<name>.txt; the table is OUT/weak-scaling.md.
# A run that fails or passes --timeout (default 300 s) is left out of the
# table and named under it. --extra: flags added to every run (e.g.
# "--smoother-precision f32"). PTAP_RANKS_RECORD is passed to the ranks.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
gpus=""
ptap="target/release/ptap"
out="weak-scaling-out"
k=16
big_k=32
steps=4
limit=300
extra=""
while [ $# -gt 0 ]; do
    case "$1" in
        --gpus) gpus=$2; shift 2 ;;
        --ptap) ptap=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --k) k=$2; shift 2 ;;
        --big-k) big_k=$2; shift 2 ;;
        --steps) steps=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --extra) extra=$2; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "weak-scaling.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$gpus" ]; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
if ! [ "$gpus" -ge 1 ] 2>/dev/null; then
    echo "weak-scaling.sh: no GPU found (nvidia-smi -L); give --gpus N" >&2
    exit 2
fi
if [ ! -x "$ptap" ]; then
    echo "weak-scaling.sh: $ptap is not an executable; build it with cargo build --release -p ptap-cli --features mpi" >&2
    exit 2
fi
mkdir -p "$out"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
mpi=(mpirun "${root[@]}" --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0)
[ -n "${PTAP_RANKS_RECORD:-}" ] && mpi+=(-x PTAP_RANKS_RECORD)
failed=()

# name, command...: the run's JSON to OUT/name.json, its output to OUT/name.txt.
run() {
    local name=$1
    shift
    echo "== $name: $*" | tee "$out/$name.txt"
    local t0=$SECONDS
    # shellcheck disable=SC2086 # --extra is a list of flags
    timeout "$limit" "$@" $extra --json "$out/$name.json" >>"$out/$name.txt" 2>&1
    local rc=$?
    echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$out/$name.txt"
    if [ $rc -ne 0 ]; then
        tail -5 "$out/$name.txt"
        rm -f "$out/$name.json"
        failed+=("$name (exit $rc)")
    fi
}

run single-k$k "$ptap" run --device cuda --k "$k" --steps "$steps"
n=1
while [ "$n" -le "$gpus" ]; do
    run "ranks-np$n-k$k" "${mpi[@]}" -np "$n" "$ptap" run --device cuda --k "$k" --length "$n" --steps "$steps"
    n=$((n * 2))
done
if [ "$big_k" -gt 0 ]; then
    run "ranks-np$gpus-k$big_k" "${mpi[@]}" -np "$gpus" "$ptap" run --device cuda --k "$big_k" --steps "$steps"
fi
python3 "$here/weak_scaling_table.py" --k "$k" --big-k "$big_k" --gpus "$gpus" \
    --failed "${failed[*]:-}" "$out" >"$out/weak-scaling.md"
echo "table: $out/weak-scaling.md"
cat "$out/weak-scaling.md"
