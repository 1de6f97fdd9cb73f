#!/bin/bash
cd /tmp/cpu3
for i in $(seq 1 10); do
  for b in base new; do
    bin=/tmp/ptap-base; [ $b = new ] && bin=/tmp/cpu3/ptap-new
    $bin run --k 8 --steps 3 --pf 0 --aggregation natural --json /tmp/cpu3/$b-$i.json > /tmp/cpu3/$b-$i.log 2>&1
  done
done
echo done > /tmp/cpu3/DONE
