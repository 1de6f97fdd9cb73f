#!/bin/bash
# Run 1: the start's breakdown (3 cache starts, 3 cold runs), pageable vs pinned 1 GiB, in-place uploads, one nsys trace.
B=.device-setup2; O=$OUT/r1; mkdir -p $O
nvidia-smi > $O/nvidia-smi.txt 2>&1; nproc >> $O/nvidia-smi.txt; free -g >> $O/nvidia-smi.txt
for i in 1 2; do timeout 60 $B/h2d_paths > $O/h2d-$i.json 2>&1; done
C=/tmp/c; rm -rf $C
timeout 200 $B/ptap-m run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/write.json > $O/write.txt 2>&1
for i in 1 2 3; do
  timeout 60 $B/ptap-m run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/cache-$i.json > $O/cache-$i.txt 2>&1
  timeout 60 $B/ptap-m run --k 16 --steps 2 --device cuda --json $O/cold-$i.json > $O/cold-$i.txt 2>&1
done
for i in 1 2; do
  PTAP_UPLOAD=inplace timeout 60 $B/ptap-m run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/inplace-$i.json > /dev/null 2>&1
done
NSYS=$(ls /usr/local/cuda/bin/nsys /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS" >> $O/nvidia-smi.txt
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile -t cuda,osrt -o /tmp/cs --force-overwrite true $B/ptap-m run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/nsys-cache.json > $O/nsys.log 2>&1
  timeout 120 $NSYS stats -r cuda_api_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum -f csv -o /tmp/cs /tmp/cs.nsys-rep >> $O/nsys.log 2>&1
  timeout 120 $NSYS stats -r cuda_gpu_trace,cuda_api_trace -f csv -o /tmp/cs /tmp/cs.nsys-rep >> $O/nsys.log 2>&1
  cp /tmp/cs_*.csv $O/ 2>/dev/null
fi
tar czf $OUT/r1.tgz -C $OUT r1
python3 - > $OUT/summary.txt 2>&1 <<'PY'
import json,os,glob
O=os.environ['OUT']+'/r1'
for f in sorted(glob.glob(O+'/h2d-*.json')): print(os.path.basename(f), open(f).read().strip())
for f in ['write']+[f'{k}-{i}' for k in ('cache','cold') for i in (1,2,3)]+['inplace-1','inplace-2','nsys-cache']:
  try:
    d=json.load(open(f'{O}/{f}.json'))
  except Exception as e:
    print(f, 'ERR', e); continue
  st=d['start']; L=st.get('lanes') or {}; s=d['setup']; sc=d.get('schedule_cache') or {}
  fi=L.get('fine',{})
  print(f"{f}: start {st['start_s']:.3f} mesh {s['mesh_setup_s']:.3f} upload {s['upload_s']:.3f} lookup {L.get('lookup_s',0):.3f} wait {L.get('wait_s',0):.3f} | fine lane {L.get('fine_lane_s',0):.3f} = backend {L.get('backend_s',0):.3f} + pattern {fi.get('pattern_s',0):.3f} ({fi.get('pattern_bytes',0)/1e6:.0f} MB) + values {fi.get('values_s',0):.3f} ({fi.get('values_bytes',0)/1e6:.0f} MB) + spmv {fi.get('spmv_s',0):.3f} | asm lane {L.get('assembly_lane_s',0):.3f} ({L.get('assembly_bytes',0)/1e6:.0f} MB) | modules early {L.get('early_modules')} {L.get('early_module_load_s',0):.3f} s, upload {L.get('upload_modules')} {L.get('upload_module_load_s',0):.3f} s | cache open {sc.get('open_s') or 0:.3f} setup {sc.get('setup_s') or 0:.3f} load {sc.get('load_s') or 0:.3f}")
  print('   upload parts', json.dumps(s.get('upload')), 'paths', json.dumps(d['transfers']['upload_paths']))
  print('   levels', [ (round(m.get('load_s',0),3), round(m.get('inspection_s',0),3), round(m.get('coarse_product_s',0),3), round(m.get('aggregation_s',0),3)) for m in s['mesh_levels']], 'insp_wait', s.get('inspection_wait_s'), 'steps', [(x['iterations'], x['max_displacement']) for x in d['steps']])
PY
