#!/bin/bash
# H200 (or what the pool gives): main (42a5788: steps 21-22) against step 21's baseline (ptap-pre21, d2c6024); the prefetch probe (ptap-pf, branch prefetch) at D = 8, 16, 32; L1 no-allocate of one operand (PTAP_PROBE_NA) in the fine kernels; GPU tests; hot step; start from the cache; ncu of the fine pair kernels.
R=$PWD; T=/tmp/o9; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 60 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
bench main-1 ptap-main Y=1
bench pre21-1 ptap-pre21 Y=1
bench pf16-1 ptap-pf PTAP_PROBE_PREFETCH=16
bench pf8-1 ptap-pf PTAP_PROBE_PREFETCH=8
bench pf32-1 ptap-pf PTAP_PROBE_PREFETCH=32
bench na-apx ptap-pf PTAP_PROBE_NA=ptap_mma2h_3x3x6:x
bench na-apy ptap-pf PTAP_PROBE_NA=ptap_mma2h_3x3x6:y
bench na-rwx ptap-pf PTAP_PROBE_NA=ptap_mma2_6x3x6t:x
bench na-rwy ptap-pf PTAP_PROBE_NA=ptap_mma2_6x3x6t:y
bench main-2 ptap-main Y=1
bench pf16-2 ptap-pf PTAP_PROBE_PREFETCH=16
bench pre21-2 ptap-pre21 Y=1
pack
for i in 1 2; do timeout 60 $B/ptap-main run --k 16 --steps 4 --device cuda --json $T/run-$i.json > $T/run-$i.txt 2>&1; ts "run $i rc=$? $(grep -m1 '^hot mean' $T/run-$i.txt)"; done
pack
rm -rf /tmp/sc; timeout 60 $B/ptap-main run --k 16 --steps 2 --device cuda --schedule-cache /tmp/sc --json $T/cache-w.json > $T/cache-w.txt 2>&1; ts "cache write rc=$?"
for i in 1 2 3; do timeout 60 $B/ptap-main run --k 16 --steps 2 --device cuda --schedule-cache /tmp/sc --json $T/cache-$i.json > $T/cache-$i.txt 2>&1; ts "cache $i rc=$?"; done
pack
timeout 100 $B/cuda_only --test-threads 1 > $T/cuda_only.txt 2>&1; ts "cuda_only rc=$? $(grep 'test result' $T/cuda_only.txt)"
pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
for c in "main Y=1" "pf PTAP_PROBE_PREFETCH=16"; do set -- $c; env $2 timeout 80 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma2" --launch-count 4 --csv --page raw $B/ptap-$1 bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$1.csv 2> $T/ncu-$1.err; ts "ncu $1 rc=$?"; pack; done
cat $T/times.txt
