#!/bin/bash
# step 22 on the device: mirrored A fragments (ptap-mirror) against main (ptap = 068265e + probes), step 21's baseline (ptap-pre21), GPU tests, counters, hot step.
R=$PWD; T=/tmp/o7; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
bench() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
X=PTAP_PROBE_BOUNDS
bench main-1 ptap Y=1
bench mirror-1 ptap-mirror Y=1
bench pre21-1 ptap-pre21 Y=1
bench main-2 ptap Y=1
bench mirror-2 ptap-mirror Y=1
bench probe-mir ptap PTAP_PROBE_MIRROR=1
bench probe-mirap66 ptap PTAP_PROBE_MIRROR=1 "$X=ptap_mmah_6x6x6=256,6"
bench pre21-2 ptap-pre21 Y=1
bench mirror-3 ptap-mirror Y=1
pack
timeout 150 $B/cuda_only --test-threads 1 > $T/cuda_only.txt 2>&1; ts "cuda_only rc=$? $(grep 'test result' $T/cuda_only.txt)"
pack
for b in ptap ptap-mirror; do timeout 100 $B/$b run --k 16 --steps 4 --device cuda --json $T/run-$b.json > $T/run-$b.txt 2>&1; ts "run $b rc=$?"; done
pack
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,lts__t_sectors.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__throughput.avg.pct_of_peak_sustained_active
nc() { tag=$1; bin=$2; shift 2; env "$@" timeout 100 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "regex:ptap_mma|ptap_sym" --launch-skip 0 --launch-count 9 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > "$T/ncu-$tag.csv" 2> "$T/ncu-$tag.err"; ts "ncu $tag rc=$?"; }
nc main ptap Y=1
pack
nc mirror ptap-mirror Y=1
pack
cat $T/times.txt
