#!/bin/bash
# Main (2da0d97, kernels of 6e88f11) on whatever card the call gets: the schedule-cache start, the cold mesh setup
# and every product kernel's counters at k = 16. The per-level bench and hot step ride the pdl and symupper calls
# (ptap-m37). Run from the repository root with carry [".device"]:
# bash benches/results/device-2026-12-07-main/run1.sh
. benches/results/device-session.sh m1
mkdir -p /tmp/bin; for f in $B/ptap-m37.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
C=/tmp/ptap-cache; rm -rf $C
timeout 100 $B/ptap-m37 run --k 16 --steps 2 --device cuda --schedule-cache $C --json $T/cache-write.json > $T/cache-write.txt 2>&1; ts "cache write rc=$? $(grep -E '^cold' $T/cache-write.txt | cut -c1-150)"
for i in 1 2 3; do timeout 100 $B/ptap-m37 run --k 16 --steps 2 --device cuda --schedule-cache $C --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$? $(grep -E '^cold' $T/cache-$i.txt | cut -c1-150)"; done; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum,launch__registers_per_thread
timeout 90 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 24 --csv --page raw $B/ptap-m37 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-m37.csv 2> $T/ncu-m37.err; ts "ncu m37 rc=$?"; pack
cat $T/times.txt
