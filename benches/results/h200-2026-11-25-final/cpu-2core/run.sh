#!/bin/bash
cd OUTDIR
for i in $(seq 1 10); do
  for b in base new; do
    bin=BASE_PTAP; [ $b = new ] && bin=OUTDIR/ptap-new
    $bin run --k 8 --steps 3 --pf 0 --aggregation natural --json OUTDIR/$b-$i.json > OUTDIR/$b-$i.log 2>&1
  done
done
echo done > OUTDIR/DONE
