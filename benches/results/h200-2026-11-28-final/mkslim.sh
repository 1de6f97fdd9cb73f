set -e
cd /work/main
nice cargo build --release -p ptap-cli 2>&1 | tail -1
rm -rf /tmp/payload && mkdir -p /tmp/payload/bin
cp target/release/ptap /tmp/payload/bin/ptap
: > /tmp/payload/bin/MAP
nice cargo test --release -p ptap-drivers -p ptap-cuda -p ptap-tests -p ptap --no-run --message-format=json 2>/dev/null | python3 -c "
import sys,json,os
want={'ptap_drivers','ptap_cuda','front_door','cuda_only'}
for l in sys.stdin:
    d=json.loads(l)
    if d.get('reason')=='compiler-artifact' and d.get('executable') and d['profile']['test'] and d['target']['name'] in want:
        crate=d['package_id'].split('#')[0].replace('path+file://','')
        print(d['target']['name'], d['executable'], os.path.relpath(crate,'/work/main'))
" | while read name exe dir; do cp "$exe" /tmp/payload/bin/$name; echo "$name $dir" >> /tmp/payload/bin/MAP; done
strip /tmp/payload/bin/* 2>/dev/null || true
cat /tmp/payload/bin/MAP
rm -rf .device-lead && mkdir -p .device-lead
tar -C /tmp/payload -cJf .device-lead/bins.tar.xz bin
ls -la .device-lead
