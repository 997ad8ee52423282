# Shared helpers for the CLI suites: $1 = build/bin, $2 = source root,
# $3 (optional) = the directory of the shared fixtures (fixture.sh).
set -euo pipefail
BIN="$1"
SRC="$2"
FIXTURES="${3:-}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/zp_cli.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3
failures=0

# use_fixture NAME: sets ST (and PROF, where fixture.sh profiles it) to the zoo
# NAME stitched (and profiled), the copy ctest made once for every suite, or, when the suite
# runs on its own, one made here. Suites only read them (stitch.json names the
# zoo by a path relative to itself, so they are not copied), and snapshot()
# covers them too, so a tool that writes into its inputs is still caught.
use_fixture() {
  local name="$1" dir
  if [ -n "$FIXTURES" ] && [ -d "$FIXTURES/$name" ]; then
    dir="$FIXTURES/$name"
  else
    dir="$WORK/fixture.$name"
    bash "$(dirname "${BASH_SOURCE[0]}")/fixture.sh" "$BIN" "$SRC" "$name" "$dir"
  fi
  ST="$dir/st"
  PROF="$dir/prof"
  SNAPSHOT_EXTRA+=("$dir")
}

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
  echo "all checks passed"
}

# expect_error NAME EXPECTED_SUBSTRING OUTDIR -- command...
# The command must exit non-zero, print exactly one line on stderr containing
# the substring, and leave OUTDIR absent and no staging directory beside it.
expect_error() {
  local name="$1" want="$2" out="$3"; shift 4
  local err rc=0
  err="$("$@" 2>&1 >/dev/null)" || rc=$?
  if [ "$rc" -eq 0 ]; then fail "$name: exit code 0"; return; fi
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then fail "$name: expected one line on stderr, got: $err"; return; fi
  case "$err" in *"$want"*) ;; *) fail "$name: stderr '$err' lacks '$want'"; return ;; esac
  if [ -e "$out" ]; then fail "$name: output $out was left behind"; return; fi
  if ls -a "$(dirname "$out")" | grep -q "staging"; then fail "$name: a staging directory was left behind"; return; fi
  pass "$name: $err"
}

# What a rejected command must leave as it was: $WORK unless a suite points
# this at a narrower tree (one that leaves its own logs outside it).
SNAPSHOT_ROOT="$WORK"
SNAPSHOT_EXTRA=()

# Every file under $SNAPSHOT_ROOT and the fixtures in use with its hash, every
# other entry (directories, symlinks) by name.
snapshot() {
  local root
  for root in "$SNAPSHOT_ROOT" "${SNAPSHOT_EXTRA[@]}"; do
    echo "== $root"
    (cd "$root" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum && find . ! -type f | sort)
  done
}

# rejected NAME RC SUBSTRING -- command...: exit code RC, one line on stderr
# containing SUBSTRING, and $SNAPSHOT_ROOT exactly as before.
rejected() {
  local name="$1" want_rc="$2" want="$3"; shift 4
  local before after err rc=0
  before="$(snapshot)"
  err="$("$@" 2>&1 >/dev/null)" || rc=$?
  after="$(snapshot)"
  if [ "$rc" -ne "$want_rc" ]; then fail "$name: exit code $rc, expected $want_rc: $err"; return; fi
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then fail "$name: expected one line on stderr, got: $err"; return; fi
  case "$err" in *"$want"*) ;; *) fail "$name: stderr '$err' lacks '$want'"; return ;; esac
  if [ "$before" != "$after" ]; then
    fail "$name: files changed: $(diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -5 | tr '\n' ' ')"
    return
  fi
  pass "$name: $err"
}
