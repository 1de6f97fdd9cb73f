#!/bin/bash
# Lead's x2 check: the NCCL/MPI device tests on two H200s.
R=$PWD; O=$OUT
mkdir -p /work && ln -sfn $R /work/main
tar -C .device-x2 -xJf .device-x2/bins.tar.xz
B=$R/.device-x2/bin
mkdir -p target/release && cp $B/ptap target/release/ptap && cp $B/ptap-mpi-cuda target/release/ 2>/dev/null
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi -L > $O/gpu.txt 2>&1
while read exe dir; do
  ( cd $R/$dir && timeout 300 $B/$exe --include-ignored --test-threads=1 ) > $O/t-$exe.txt 2>&1
  echo "$exe rc=$? $(grep 'test result' $O/t-$exe.txt | tail -1)" >> $O/tests.txt
done < $B/MAP
cat $O/tests.txt
