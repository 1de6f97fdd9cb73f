#!/bin/bash
# Distributed mesh setup on CPU ranks, k = 16, before/after interleaved (issue #14).
cd "$(dirname "$0")"; D=$PWD
echo "host: $(nproc) cores; THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"; which mpirun perf python3
mkdir -p $OUT/json $OUT/logs /tmp/caches
export PTAP_KEY_FILE=/tmp/caches/key
M="mpirun --allow-run-as-root --oversubscribe --bind-to none"
run() { # name np bin [cache]
  local name=$1 np=$2 bin=$3 cache=$4 t=$((16/$2)) s=$(date +%s%N)
  local extra=(); [ -n "$cache" ] && extra=(--schedule-cache /tmp/caches/$cache)
  timeout 120 $M -np $np -x RAYON_NUM_THREADS=$t -x PTAP_KEY_FILE $D/$bin run --k 16 --steps 2 --threads $t --quiet --json $OUT/json/$name.json "${extra[@]}" > $OUT/logs/$name.txt 2>&1
  echo "$name rc=$? wall $(( ($(date +%s%N)-s)/1000000 )) ms"
}
s=$(date +%s%N); timeout 120 $D/ptap-after run --k 16 --steps 2 --threads 16 --quiet --json $OUT/json/single.json > $OUT/logs/single.txt 2>&1; echo "single rc=$? wall $(( ($(date +%s%N)-s)/1000000 )) ms"
run np1-before-nocache 1 ptap-before
run np1-after-nocache 1 ptap-after
for np in 1 2 4; do
  run np$np-before-write $np ptap-before b$np
  run np$np-after-write $np ptap-after a$np
  run np$np-before-load $np ptap-before b$np
  run np$np-after-load $np ptap-after a$np
done
du -sh /tmp/caches/*
python3 $D/summary.py $OUT/json > $OUT/summary.txt 2>&1; cat $OUT/summary.txt
cd $D/../dist
for t in cache_plans natural amg; do timeout 120 $D/test-$t --include-ignored 2>&1 | grep -E "^test |test result|np [0-9]|k [0-9]|level|panicked" | head -40; done
if which perf >/dev/null 2>&1; then
  timeout 60 $M -np 1 -x RAYON_NUM_THREADS=16 perf record -F 499 -g -o /tmp/perf.data $D/ptap-after run --k 16 --steps 1 --threads 16 --quiet > /dev/null 2>&1
  perf report -i /tmp/perf.data --stdio --no-children --percent-limit 0.7 2>/dev/null | grep -v "^$" | head -250 > $OUT/perf.txt
fi
tar czf $OUT/all.tar.gz -C $OUT json logs
rm -rf $OUT/json $OUT/logs
