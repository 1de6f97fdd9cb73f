# Shared preamble of the device scripts in benches/results (source it from the repository root:
# `. benches/results/device-session.sh NAME`). Output goes to /tmp/NAME and is packed into $OUT
# after every step and on exit, so a call cut short still brings back what it measured.
R=$PWD; T=/tmp/$1; mkdir -p "$T"; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> "$T/times.txt"; }
pack() { tar -C "$T" -czf "$OUT/all.tgz" . ; cp "$T/times.txt" "$OUT/times.txt"; }
trap pack EXIT
ts start
nvidia-smi > "$T/nvidia-smi.txt" 2>&1
