#!/bin/bash
# Lead's device run: tests + bench, then the runs; everything tarred into $OUT/all.tgz.
R=$PWD; O0=$OUT
export OUT=$O0/all; mkdir -p $OUT
bash .device-lead/dev-tests.sh > $OUT/dev-tests.log 2>&1
bash .device-lead/dev-runs.sh > $OUT/dev-runs.log 2>&1
cp $OUT/tests.txt $OUT/runs.txt $O0/ 2>/dev/null
tar -C $O0 -czf $O0/all.tgz all && rm -rf $OUT
cat $O0/tests.txt $O0/runs.txt
