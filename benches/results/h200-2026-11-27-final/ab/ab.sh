#!/bin/bash
# Cache start and cold setup, 35a4a9b (old) against main (new), interleaved, one host.
O=$OUT; B=.device-ab
for v in old new; do C=/tmp/c-$v; rm -rf $C; timeout 120 $B/ptap-$v run --k 16 --steps 2 --device cuda --schedule-cache $C --json $O/write-$v.json > /dev/null 2>&1; done
for i in 1 2 3; do for v in old new; do
  timeout 120 $B/ptap-$v run --k 16 --steps 2 --device cuda --schedule-cache /tmp/c-$v --json $O/cache-$v-$i.json > /dev/null 2>&1
  timeout 120 $B/ptap-$v run --k 16 --steps 2 --device cuda --json $O/cold-$v-$i.json > /dev/null 2>&1
done; done
tar -C $O -czf $O/ab.tgz . 2>/dev/null
python3 - <<'PY'
import json,os
O=os.environ['OUT']
for k in ['cache','cold']:
  for v in ['old','new']:
    r=[]
    for i in (1,2,3):
      d=json.load(open(f"{O}/{k}-{v}-{i}.json")); s=d['setup']
      r.append("load %.3f up %.3f start %.3f asmup %.3f mesh %.3f" % (s['mesh_setup_s'], s['upload_s'], d['start']['start_s'], d['start']['assembly_upload_s'], s['mesh_setup_s']))
    print(k, v, " | ".join(r))
PY
