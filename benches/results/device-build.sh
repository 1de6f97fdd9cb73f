# Shared helper of the build scripts in benches/results (source it from the repository root:
# `. benches/results/device-build.sh`), which build here the binaries a device call carries in .device/.
# exe PACKAGE KIND NAME [CARGO ARGS]: the path of one test executable (built if needed).
exe() { cargo test --release -p "$1" --no-run --message-format=json "${@:4}" 2>/dev/null \
    | python3 -c 'import sys,json
kind,name=sys.argv[1:3]
for l in sys.stdin:
    d=json.loads(l)
    t=d.get("target") or {}
    if d.get("executable") and t.get("name")==name and kind in t.get("kind",[]): print(d["executable"])' "$2" "$3"; }
