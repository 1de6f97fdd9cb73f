#!/bin/bash
# A/B of the hot assembly's host field: the same binary with rayon on 16 threads and on 1.
R=$PWD; O=$OUT
tar -C .device-lead -xJf .device-lead/bins.tar.xz
P=$R/.device-lead/bin/ptap
for i in 1 2; do
  timeout 150 $P run --k 16 --steps 4 --device cuda --json $O/asm-par-$i.json > /dev/null 2>&1; echo "par $i rc=$?"
  RAYON_NUM_THREADS=1 timeout 150 $P run --k 16 --steps 4 --device cuda --json $O/asm-one-$i.json > /dev/null 2>&1; echo "one $i rc=$?"
done
python3 - <<'PY'
import json,glob,os
for f in sorted(glob.glob(os.environ['OUT']+'/asm-*.json')):
    d=json.load(open(f)); h=d['hot_mean']
    print(os.path.basename(f), 'hot asm %.3f ms, matrix %.2f, solve %.2f, steps asm %s' % (h['assembly_s']*1e3, h['matrix_setup_s']*1e3, h['solve_s']*1e3, [round(s['assembly_s']*1e3,3) for s in d['steps']]))
PY
