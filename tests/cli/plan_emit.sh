#!/usr/bin/env bash
# plan-emit and plan-run BUNDLE_DIR: byte-identical bundles, --check finds each
# kind of staleness, the bundle runs with its caches and matches the uncached
# reference (also with a corrupted cache), bad input is one line and leaves nothing.
source "$(dirname "$0")/lib.sh"
"$BIN/zoo-stitch" "$SRC/testdata/multitask/zoo.json" -o "$WORK/stitch" >/dev/null

# A SparseLoom plan over that stitch output (what plan-solve writes): placement
# cpu/gpu/npu, two SLO configurations, mixed valid combinations; C02 infeasible for the first task.
make_plan() {  # make_plan OUT [MEAN_LATENCY]
  $PY - "$WORK/stitch/stitch.json" "$1" "${2:-0.125}" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
order = ["cpu", "gpu", "npu"]
tasks, slos = [], [{"id": "C01", "tasks": {}}, {"id": "C02", "tasks": {}}]
units = {}
choices = []  # the plan's own: per task, per configuration
for ti, t in enumerate(m["tasks"]):
    slos[0]["tasks"][t["name"]] = {"accuracy": 0.75, "latency_ms": 2.5}
    slos[1]["tasks"][t["name"]] = {"accuracy": 0.99, "latency_ms": 0.001}
    vids = [v["id"] for v in t["variants"]]
    S = len(t["positions"])
    valid = t["combinations"]["valid"]  # the stitch's compatible combinations, mixed ones first
    mixed = [c.split("+") for c in valid if len(set(c.split("+"))) > 1] + [c.split("+") for c in valid]
    combo = lambda k: mixed[(k * 7) % len(mixed)]
    a, b = combo(ti + 1), combo(ti + 2)
    sels = [{"task": t["name"], "feasible": True, "combination": "+".join(a), "placement": order[:S], "accuracy": 0.875,
             "accuracy_source": "measured", "latency_ms": 0.5 + 0.25 * ti}]
    used = [a]
    if ti == 0:
        sels.append({"task": t["name"], "feasible": False, "combination": "", "placement": [], "accuracy": 0,
                     "accuracy_source": "estimated", "latency_ms": 0,
                     "miss": {"combination": "+".join(b), "accuracy_short": 0.0625, "latency_over_ms": 1.5}})
    else:
        sels.append({"task": t["name"], "feasible": True, "combination": "+".join(b), "placement": order[:S],
                     "accuracy": 0.9375, "accuracy_source": "estimated", "latency_ms": 0.75})
        used.append(b)
    subs = {}
    for vs in used:
        for p, v in enumerate(vs):
            g = next(s for s in t["positions"][p]["subgraphs"] if s["variant"] == v)
            subs[(p, v)] = {"position": p, "variant": v, "processor": order[p],
                            "memory_bytes": g["cost"]["weight_bytes"]}
            units[f"subgraph:{t['name']}/{p}/{v}"] = {"id": f"subgraph:{t['name']}/{p}/{v}", "file": g["file"],
                                                      "sha256": g["hash"], "residency": "preload-set"}
    choices.append(sels)
    tasks.append({"name": t["name"], "positions": S, "subgraphs": [subs[k] for k in sorted(subs)]})
plan = {"header": {"tool": "plan-solve", "version": "test", "inputs": {}},
        "processors": [{"name": "cpu", "kind": "cpu", "cores": [0], "source": "host", "policy": "default",
                        "threads": 1},
                       {"name": "gpu", "kind": "gpu", "cores": [1], "source": "host", "policy": "im2col",
                        "threads": 1},
                       {"name": "npu", "kind": "npu", "cores": [1], "source": "host", "policy": "sparse",
                        "threads": 1}],
        "units": [units[k] for k in sorted(units)],
        "stitch": {"stitch_dir": "stitch", "accuracy_source": "predicted", "processors": ["cpu", "gpu", "npu"],
                   "placement_order": order, "orders_evaluated": 6, "mean_latency_ms": float(sys.argv[3]),
                   "slo_configurations": slos, "tasks": tasks, "preload": [], "chosen_system": "zooplan",
                   "systems": [{"name": "zooplan", "description": "the plan", "selections": [
                       {"slo": c["id"], "tasks": [tc[k] for tc in choices]} for k, c in enumerate(slos)]}]}}
json.dump(plan, open(sys.argv[2], "w"), indent=1)
PYEOF
}
make_plan "$WORK/plan.json"

# --- emit twice: byte-identical ---
if out="$("$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/b1")"; then pass "emit: $out"; else fail "plan-emit exited non-zero"; fi
"$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/b2" >/dev/null
if diff -r "$WORK/b1" "$WORK/b2" >/dev/null; then pass "two runs give byte-identical bundles"; else fail "bundles differ"; fi
for f in plan.json plan.pb manifest.json; do [ -s "$WORK/b1/$f" ] || fail "bundle lacks $f"; done
n_sub=$(ls "$WORK/b1/subgraphs" | wc -l); n_cache=$(ls "$WORK/b1/caches" | wc -l)
[ "$n_sub" -gt 0 ] && [ "$n_cache" -ge "$n_sub" ] && pass "$n_sub subgraphs, $n_cache caches" || fail "subgraphs $n_sub caches $n_cache"
if $PY - "$WORK/b1" <<'PYEOF'
import json, hashlib, os, sys
b = sys.argv[1]
m = json.load(open(os.path.join(b, "manifest.json")))
files = sorted(os.path.relpath(os.path.join(d, f), b) for d, _, fs in os.walk(b) for f in fs)
assert [a["path"] for a in m["artifacts"]] == [f for f in files if f != "manifest.json"], "manifest lists every artifact"
for a in m["artifacts"]:
    data = open(os.path.join(b, a["path"]), "rb").read()
    assert len(data) == a["size"] and hashlib.sha256(data).hexdigest() == a["sha256"], a["path"]
roles = {i["role"] for i in m["inputs"]}
assert roles == {"plan", "stitch-manifest", "subgraph"}, roles
assert m["tool"].startswith("plan-emit ")
PYEOF
then pass "manifest: every artifact with size and sha256, the inputs"; else fail "manifest content"; fi

# --- --check ---
expect_check() {  # expect_check NAME RC FIRST_LINE_SUBSTRING OTHER_SUBSTRING -- args
  local name="$1" want_rc="$2" first="$3" other="$4"; shift 5
  local out rc=0
  out="$("$BIN/plan-emit" --check "$@" 2>&1)" || rc=$?
  if [ "$rc" -ne "$want_rc" ]; then fail "$name: exit $rc, expected $want_rc: $out"; return; fi
  case "$(printf '%s\n' "$out" | head -1)" in *"$first"*) ;; *) fail "$name: first line of '$out' lacks '$first'"; return ;; esac
  case "$out" in *"$other"*) ;; *) fail "$name: '$out' lacks '$other'"; return ;; esac
  pass "$name: $(printf '%s\n' "$out" | head -2 | tr '\n' '|')"
}
expect_check "fresh bundle" 0 "bundle is up to date" "" -- "$WORK/b1"
cp "$WORK/plan.json" "$WORK/plan.orig"
make_plan "$WORK/plan.json" 0.25
expect_check "plan changed" 1 "bundle is stale: 1 change" "plan changed: $WORK/plan.json" -- "$WORK/b1"
cp "$WORK/plan.orig" "$WORK/plan.json"
expect_check "plan given explicitly" 0 "bundle is up to date" "" -- "$WORK/b1" "$WORK/plan.json"
sub="$(ls "$WORK/b1/subgraphs" | head -1)"
cp "$WORK/stitch/subgraphs/$sub" "$WORK/sub.orig"
printf 'x' >> "$WORK/stitch/subgraphs/$sub"
expect_check "source subgraph changed" 1 "bundle is stale" "subgraph changed: $WORK/stitch/subgraphs/$sub" -- "$WORK/b1"
expect_error "emit from a changed subgraph" "$WORK/stitch/subgraphs/$sub: content hash" "$WORK/b3" -- \
  "$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/b3"
cp "$WORK/sub.orig" "$WORK/stitch/subgraphs/$sub"
cache="$(ls "$WORK/b1/caches" | head -1)"
cp "$WORK/b1/caches/$cache" "$WORK/cache.orig"
rm "$WORK/b1/caches/$cache"
expect_check "artifact deleted" 1 "bundle is stale: 1 change" "artifact missing: caches/$cache" -- "$WORK/b1"
$PY -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[100]^=1; open(sys.argv[2],'wb').write(b)" \
  "$WORK/cache.orig" "$WORK/b1/caches/$cache"
expect_check "artifact byte flipped" 1 "bundle is stale: 1 change" "artifact modified: caches/$cache" -- "$WORK/b1"
cp "$WORK/cache.orig" "$WORK/b1/caches/$cache"
expect_check "restored" 0 "bundle is up to date" "" -- "$WORK/b1"

# --- plan-run BUNDLE_DIR ---
if out="$("$BIN/plan-run" "$WORK/b1" --repeat 3 2>"$WORK/err")"; then
  if [ -s "$WORK/err" ]; then fail "plan-run warned on a clean bundle: $(cat "$WORK/err")"
  elif [ "$(printf '%s\n' "$out" | grep -c ' yes ')" -eq 4 ]; then pass "plan-run: 4 tasks match their reference"
  else fail "plan-run table: $out"; fi
else fail "plan-run exited non-zero: $out $(cat "$WORK/err")"; fi
if "$BIN/plan-run" "$WORK/b1" --repeat 2 --json --slo C02 | $PY -c "
import json, sys
r = json.load(sys.stdin)
assert r['ok'] and len(r['tasks']) == 4
assert not r['tasks'][0]['ran'] and 'infeasible' in r['tasks'][0]['skipped']
for t in r['tasks'][1:]:
    assert t['ran'] and t['match'] and t['inputs'] == 'dataset' and t['cache_fallbacks'] == 0, t
    assert t['measured_ms'] > 0 and 0 <= t['accuracy'] <= 1
"; then pass "plan-run --json --slo C02"; else fail "plan-run --json --slo C02"; fi
# Corrupt the first payload of every cache: the runtime warns, falls back, outputs still match.
for c in "$WORK/b1"/caches/*.zwc; do
  $PY -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[64:65]=bytes([b[64]^0x5a]) if len(b)>64 else b''; open(sys.argv[1],'wb').write(b)" "$c"
done
if out="$("$BIN/plan-run" "$WORK/b1" --repeat 1 --json 2>"$WORK/err")"; then
  if grep -q "raw ONNX weights" "$WORK/err" && printf '%s' "$out" | $PY -c "
import json, sys
r = json.load(sys.stdin)
assert r['ok'] and all(t['match'] for t in r['tasks'] if t['ran'])
assert sum(t['cache_fallbacks'] for t in r['tasks']) > 0
"; then pass "corrupted caches: warned ($(grep -c warning "$WORK/err") lines), fell back, outputs match"
  else fail "corrupted caches: $(head -3 "$WORK/err")"; fi
else fail "plan-run on corrupted caches exited non-zero: $(head -3 "$WORK/err")"; fi
expect_check "corrupted caches are stale artifacts" 1 "bundle is stale" "artifact modified: caches/" -- "$WORK/b1"

# --- concurrent-only plan ---
"$BIN/plan-solve" --mode concurrent "$SRC/testdata/concurrent/googlenet-table2-scenario1.json" -o "$WORK/conc.json" >/dev/null
"$BIN/plan-emit" "$WORK/conc.json" -o "$WORK/cb" >/dev/null
if [ "$(cd "$WORK/cb" && ls | tr '\n' ' ')" = "manifest.json plan.json plan.pb " ]; then pass "concurrent bundle: plan.json plan.pb manifest.json"
else fail "concurrent bundle holds: $(ls "$WORK/cb")"; fi
expect_check "concurrent bundle fresh" 0 "bundle is up to date" "" -- "$WORK/cb"

# --- bad input ---
expect_error "missing plan" "nope.json: cannot open" "$WORK/out" -- "$BIN/plan-emit" "$WORK/nope.json" -o "$WORK/out"
echo '{"header": {"tool": "x", "version": "1", "inputs": {}}, "processors": [], "units": []}' > "$WORK/empty.json"
expect_error "plan without sections" "has no 'stitch', 'concurrent', 'opplace' or 'mts' section" "$WORK/out" -- \
  "$BIN/plan-emit" "$WORK/empty.json" -o "$WORK/out"
echo '{' > "$WORK/broken.json"
expect_error "not JSON" "broken.json: not valid JSON" "$WORK/out" -- "$BIN/plan-emit" "$WORK/broken.json" -o "$WORK/out"
touch "$WORK/plainfile"
expect_error "unwritable output" "cannot create parent directory" "$WORK/plainfile/out" -- \
  "$BIN/plan-emit" "$WORK/plan.json" -o "$WORK/plainfile/out"
expect_error "plan-run unknown task" "--task nope: no such task" "$WORK/out" -- "$BIN/plan-run" "$WORK/b2" --task nope
expect_error "plan-run on a simulated-only concurrent bundle" "names no host processors" "$WORK/out" -- "$BIN/plan-run" "$WORK/cb"
expect_error "check without a bundle" "not a bundle directory" "$WORK/out" -- "$BIN/plan-emit" --check "$WORK/nothing"
before="$(cd "$WORK/b2" && find . -type f -exec sha256sum {} + | sort)"
"$BIN/plan-emit" "$WORK/empty.json" -o "$WORK/b2" 2>/dev/null && fail "failing emit exited 0"
after="$(cd "$WORK/b2" && find . -type f -exec sha256sum {} + | sort)"
[ "$before" = "$after" ] && pass "existing bundle untouched by a failed run" || fail "existing bundle changed by a failed run"
finish
