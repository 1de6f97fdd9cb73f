#!/bin/bash
# Run 2: main b8bb689 against setup2 (early pool), interleaved: 5 cache starts and 3 cold runs each, the
# pool's size swept (0 = main pool, 2, 8), the hot step (k 16, 4 steps) of each, and the device tests.
R=$PWD; B=$R/.device-setup2; O=$OUT/r2; mkdir -p $O /tmp/tb
mkdir -p /work && ln -sfn $R /work/main
tar -C /tmp/tb -xJf $B/tests.tar.xz
mkdir -p target/release && cp $B/ptap-new target/release/ptap
nvidia-smi > $O/nvidia-smi.txt 2>&1
for v in main new; do C=/tmp/c-$v; rm -rf $C
  timeout 200 $B/ptap-$v run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/write-$v.json > $O/write-$v.txt 2>&1; done
for i in 1 2 3 4 5; do for v in main new; do
  timeout 60 $B/ptap-$v run --k 16 --steps 2 --device cuda --schedule-cache /tmp/c-$v --json $O/cache-$v-$i.json > /dev/null 2>&1
done; done
for i in 1 2; do for n in 0 2 8; do
  PTAP_EARLY_UPLOAD_THREADS=$n timeout 60 $B/ptap-new run --k 16 --steps 2 --device cuda --schedule-cache /tmp/c-new --json $O/cache-t$n-$i.json > /dev/null 2>&1
done; done
for i in 1 2 3; do for v in main new; do
  timeout 60 $B/ptap-$v run --k 16 --steps 2 --device cuda --json $O/cold-$v-$i.json > /dev/null 2>&1
done; done
for v in main new; do timeout 90 $B/ptap-$v run --k 16 --steps 4 --device cuda --json $O/hot-$v.json > $O/hot-$v.txt 2>&1; done
for t in "ptap_drivers drivers" "front_door ptap" "ptap_cuda cuda" "cuda_only tests"; do set -- $t
  ( cd $R/$2 && timeout 300 /tmp/tb/$1 --include-ignored ) > $O/t-$1.txt 2>&1
  echo "$1 rc=$? $(grep 'test result' $O/t-$1.txt | tail -1)" >> $O/tests.txt
done
grep -h "a_device_start\|staged_upload" $O/t-*.txt >> $O/tests.txt
tar czf $OUT/r2.tgz -C $OUT r2
python3 - > $OUT/summary.txt 2>&1 <<'PY'
import json,os,glob
O=os.environ['OUT']+'/r2'
print(open(O+'/tests.txt').read())
def row(f):
  d=json.load(open(f'{O}/{f}.json')); st=d['start']; L=st.get('lanes') or {}; s=d['setup']; fi=L.get('fine',{})
  return (f"{f}: start {st['start_s']:.3f} mesh {s['mesh_setup_s']:.3f} upload {s['upload_s']:.3f} asmup {st['assembly_upload_s']:.3f} lookup {L.get('lookup_s',-1):.3f} wait {L.get('wait_s',-1):.3f} thr {L.get('early_threads','-')} fine {L.get('fine_lane_s',-1):.3f} (pat {fi.get('pattern_s',-1):.3f} val {fi.get('values_s',-1):.3f}) asm {L.get('assembly_lane_s',-1):.3f} steps {[(x['iterations'], x['max_displacement']) for x in d['steps']]}")
for f in sorted(glob.glob(O+'/*.json')):
  n=os.path.basename(f)[:-5]
  try: print(row(n))
  except Exception as e: print(n,'ERR',e)
for v in ['main','new']:
  try:
    d=json.load(open(f'{O}/hot-{v}.json')); h=d['hot_mean']
    print('hot',v, 'total_ms %.2f'%(1e3*(h['assembly_s']+h['matrix_setup_s']+h['solve_s'])), 'asm %.2f ms setup %.2f prod %.2f solve %.2f'%(1e3*h['assembly_s'],1e3*h['matrix_setup_s'],1e3*h['galerkin_numeric_s'],1e3*h['solve_s']), [(x['iterations'], x['max_displacement']) for x in d['steps']])
  except Exception as e: print('hot',v,'ERR',e)
PY
