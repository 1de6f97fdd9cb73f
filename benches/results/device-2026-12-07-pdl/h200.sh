#!/bin/bash
# One device call for an H200 (issue #12 states its goals there), about 4.5 minutes; on any other card it stops after
# nvidia-smi (about 10 s of device time beyond the start). Main 475841f's binaries from build.sh beside this
# (`ptap-39`; `ptap-m37` is not needed). It brings back what an H200 results file needs: the products per level
# with their floors (three passes), the counters of every product kernel, the hot step (three passes), the
# default's pf sweep (0.03 / 0.05 / 0.07 / 0.08, two interleaved passes, iterations per step), the unfiltered
# hierarchy's products and the schedule-cache start. From the repository root with carry [".device"]:
# bash benches/results/device-2026-12-07-pdl/h200.sh
. benches/results/device-session.sh h200
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
if ! grep -q 'H200' $T/nvidia-smi.txt; then ts "not an H200: nothing measured"; cat $T/times.txt; exit 0; fi
# H200_BIN names another binary of .device/ (device-2026-12-07-launch/run.sh passes its own).
N=${H200_BIN:-ptap-39}; mkdir -p /tmp/bin; gunzip -c $B/$N.gz > /tmp/bin/$N; chmod +x /tmp/bin/$N; P=/tmp/bin/$N
ts "binary $N"
for pass in 1 2 3; do timeout 90 $P bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$pass.json > $T/bench-$pass.txt 2>&1; ts "bench $pass rc=$? $(grep -E '^l[012] +dmma' $T/bench-$pass.txt | awk '{print $4, $6, $7}' | tr '\n' ' ') $(grep -E '^device solve' $T/bench-$pass.txt | cut -c1-150)"; done; pack
for pass in 1 2 3; do timeout 60 $P run --k 16 --steps 4 --device cuda --json $T/run-$pass.json > $T/run-$pass.txt 2>&1; ts "run $pass rc=$? $(grep -E '^hot mean +assembly' $T/run-$pass.txt | cut -c1-150)"; done; pack
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_issued.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum,launch__registers_per_thread
timeout 60 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:ptap_(mma|sym)" --launch-count 12 --csv --page raw $P bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu.csv 2> $T/ncu.err; ts "ncu rc=$?"; pack
for pass in 1 2; do for pf in 0.03 0.05 0.07 0.08; do timeout 60 $P run --k 16 --steps 4 --device cuda --pf $pf --json $T/sweep-pf$pf-$pass.json > $T/sweep-pf$pf-$pass.txt 2>&1; ts "sweep pf $pf pass $pass rc=$? $(grep -E '^hot mean +assembly' $T/sweep-pf$pf-$pass.txt | cut -c1-150) its $(awk '$1 ~ /^[0-9]+$/ {printf "%s ", $2}' $T/sweep-pf$pf-$pass.txt)"; done; pack; done
timeout 90 $P bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --pf 0 --json $T/bench-pf0.json > $T/bench-pf0.txt 2>&1; ts "bench pf0 rc=$? $(grep -E '^l[012] +dmma' $T/bench-pf0.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; pack
C=/tmp/ptap-cache; rm -rf $C
for i in 0 1 2; do timeout 100 $P run --k 16 --steps 2 --device cuda --schedule-cache $C --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$? $(grep -E '^cold' $T/cache-$i.txt | cut -c1-150)"; done; pack
cat $T/times.txt
