#!/bin/bash
# rowacc run 1: bitwise test, benches over PTAP_ROWACC settings, resource usage, ncu per kernel.
R=$PWD; T=/tmp/o1; mkdir -p $T; B=$R/.device
export PTAP_CACHE_DIR=/tmp/kc
ts() { echo "$(date +%s) $*" >> $T/times.txt; }
pack() { tar -C $T -czf $OUT/all.tgz . ; cp $T/times.txt $OUT/times.txt; }
trap pack EXIT
ts start
nvidia-smi > $T/nvidia-smi.txt 2>&1
( cd $R/tests && timeout 120 $B/cuda_only row_owned --nocapture ) > $T/t-rowacc.txt 2>&1
ts "cuda_only rowacc rc=$? $(grep 'test result' $T/t-rowacc.txt | tail -1)"
bench() { tag=$1; shift; env "$@" timeout 90 $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma2s' $T/bench-$tag.txt | awk '{print $4, $6, $7}' | tr '\n' ' ')"; }
bench main-1 X=1
bench ap16 PTAP_ROWACC=ap16
bench ap32 PTAP_ROWACC=ap32
bench ap8 PTAP_ROWACC=ap8
bench rw16 PTAP_ROWACC=rw16
bench rw32 PTAP_ROWACC=rw32
bench rw8 PTAP_ROWACC=rw8
bench ap16rw16 PTAP_ROWACC=ap16,rw16
bench ap32rw32 PTAP_ROWACC=ap32,rw32
bench ap16pf PTAP_ROWACC=ap16,pf
bench ap32pf PTAP_ROWACC=ap32,pf
bench rw16pf PTAP_ROWACC=rw16,pf
bench rw32pf PTAP_ROWACC=rw32,pf
bench ap32rw32pf PTAP_ROWACC=ap32,rw32,pf
bench main-2 X=1
pack
( cd $R/tests && timeout 200 $B/pair_rebuild_beam row_owned --include-ignored --nocapture ) > $T/t-prb.txt 2>&1
ts "pair_rebuild_beam rowacc rc=$? $(grep 'test result' $T/t-prb.txt | tail -1)"
pack
for f in /tmp/kc/ptap_rowacc_*.cubin; do /usr/local/cuda/bin/cuobjdump --dump-resource-usage $f; done > $T/resources.txt 2>&1
ts "resources rc=$?"
NCU=/usr/local/cuda/bin/ncu
MET=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,dram__bytes.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum
K='regex:ptap_mma2h_3x3x6|ptap_mma2_6x3x6t|ptap_mmah_6x6x6|ptap_mma2f_6x6x6t|ptap_mma2_6x6x6t|ptap_symmetrize|ptap_symsplit|ptap_rowacc[12]'
for tag in main ap32,rw32,pf; do
  env=X=1; [ $tag != main ] && env="PTAP_ROWACC=$tag"
  env $env timeout 120 $NCU --kill on --cache-control none --clock-control none --metrics $MET -k "$K" --launch-skip 0 --launch-count 24 --csv --page raw $B/ptap bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > "$T/ncu-$tag.csv" 2> "$T/ncu-$tag.err"
  ts "ncu $tag rc=$?"
done
pack
cat $T/times.txt
