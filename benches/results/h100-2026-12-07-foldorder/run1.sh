#!/bin/bash
# Device binaries (git-ignored .device/, gzipped): ptap-m36 = main 2f43094; ptap-fo = branch foldorder (main plus
# experiment knobs read at upload / module load: PTAP_FOLD_ORDER=W sorts each window of W folded P^T W' units
# longest first, PTAP_RW_ORDER=W the same for the unfolded single units, PTAP_LB=k1,k2 compiles those kernels under
# __launch_bounds__(128, 16), PTAP_AP_ORDER=W sorts each window of W slots of the coarse halving A P's order longest
# run first, PTAP_AP_ORDER_MIN=N only where the stage has fewer than N slots: level 2). Run from the repository root with carry [".device"]:
# bash benches/results/h100-2026-12-07-foldorder/run1.sh
. benches/results/device-session.sh f1
mkdir -p /tmp/bin; for f in $B/*.gz; do n=$(basename $f .gz); gunzip -c $f > /tmp/bin/$n; chmod +x /tmp/bin/$n; done; B=/tmp/bin
ts "card $(grep -o 'NVIDIA H[0-9]*[^|]*' $T/nvidia-smi.txt | head -1)"
b() { tag=$1; bin=$2; shift 2; env "$@" timeout 90 $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 5 --json $T/bench-$tag.json > $T/bench-$tag.txt 2>&1; ts "bench $tag rc=$? $(grep -E '^l[012] +dmma' $T/bench-$tag.txt | awk '{print $4, $6}' | tr '\n' ' ') $(grep -E "^order" $T/bench-$tag.txt | cut -c1-90 | tr '\n' ' ')"; }
for pass in 1 2; do
  b m36-$pass ptap-m36
  b fo-$pass ptap-fo
  b fold16-$pass ptap-fo PTAP_FOLD_ORDER=16
  b fold64-$pass ptap-fo PTAP_FOLD_ORDER=64
  b fold256-$pass ptap-fo PTAP_FOLD_ORDER=256
  b foldall-$pass ptap-fo PTAP_FOLD_ORDER=1000000000
  b lbfold-$pass ptap-fo PTAP_LB=ptap_mma2f_6x6x6t
  b lbfold64-$pass ptap-fo PTAP_LB=ptap_mma2f_6x6x6t PTAP_FOLD_ORDER=64
  b lbh-$pass ptap-fo PTAP_LB=ptap_mmah_6x6x6
  b lbs-$pass ptap-fo PTAP_LB=ptap_mma2_6x6x6t
  b rw64-$pass ptap-fo PTAP_RW_ORDER=64
  b rw256-$pass ptap-fo PTAP_RW_ORDER=256
  b apl2all-$pass ptap-fo PTAP_AP_ORDER=1000000000 PTAP_AP_ORDER_MIN=100000
  b apl2w64-$pass ptap-fo PTAP_AP_ORDER=64 PTAP_AP_ORDER_MIN=100000
  b apall-$pass ptap-fo PTAP_AP_ORDER=1000000000
  b ap16-$pass ptap-fo PTAP_AP_ORDER=16
  pack
done
NCU=/usr/local/cuda/bin/ncu
M=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sectors.sum,smsp__inst_executed.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
n() { tag=$1; re=$2; bin=$3; shift 3; env "$@" timeout 40 $NCU --kill on --cache-control none --clock-control none --metrics $M -k "regex:$re" --launch-count 4 --csv --page raw $B/$bin bench --device cuda --k 16 --variants tensor-pair-sym --repeat 1 > $T/ncu-$tag.csv 2> $T/ncu-$tag.err; ts "ncu $tag rc=$?"; }
n fold ptap_mma2f ptap-fo; n fold64 ptap_mma2f ptap-fo PTAP_FOLD_ORDER=64; n lbfold ptap_mma2f ptap-fo PTAP_LB=ptap_mma2f_6x6x6t; pack
n rw ptap_mma2_6x3 ptap-fo; n rw256 ptap_mma2_6x3 ptap-fo PTAP_RW_ORDER=256; pack
cat $T/times.txt
