#!/usr/bin/env bash
# Interop against the real binary with clients nobody here wrote:
#   1. the official MCP Python SDK over streamable HTTP and over stdio,
#   2. the official MCP conformance suite (server mode) with the expected
#      failures in .ci/conformance-expected-failures.yml.
# Needs the tools from .ci/tools.sh (its exports in the environment) and a
# built binary at $CARGO_TARGET_DIR/debug/toolgate.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${CARGO_TARGET_DIR:-$root/target}/debug/toolgate"
python="${TOOLGATE_PYTHON:?run .ci/tools.sh first}"
conformance="${TOOLGATE_CONFORMANCE:?run .ci/tools.sh first}"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A demo server on an ephemeral loopback port; sets demo_url to its base URL.
# Called directly, never inside $( ): a subshell's pids+=() would not reach
# the cleanup trap, and the server would outlive this script.
start_demo() {
  local name=$1; shift
  "$bin" --db "sqlite:$work/$name.db" serve --demo --listen 127.0.0.1:0 "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 1 100); do
    if grep -q 'serving MCP at' "$work/$name.out" 2>/dev/null; then
      demo_url=$(sed -n 's#.*serving MCP at \(http://[^/]*\)/mcp.*#\1#p' "$work/$name.out")
      return 0
    fi
    sleep 0.1
  done
  echo "the demo server did not start:" >&2; cat "$work/$name.err" >&2; return 1
}

# The visitor is a guest: query_weather is theirs, query_travel_order is not.
tool_args=(--ok-tool query_weather --ok-params '{"city": "Oslo"}'
           --invalid-params '{"city": "", "date": "2026-02-30"}'
           --denied-tool query_travel_order --denied-params '{}'
           --progress-tool '')

start_demo sdk
url=$demo_url
key=$(awk '$1 == "visitor" && $2 == "guest" {print $3}' "$work/sdk.out")
echo "--- Python SDK over streamable HTTP ($url)"
"$python" "$root/crates/toolgate-mcp/tests/python/client_check.py" "${tool_args[@]}" http "$url/mcp" "$key"
echo "--- Python SDK over stdio"
"$python" "$root/crates/toolgate-mcp/tests/python/client_check.py" "${tool_args[@]}" \
  stdio "$bin" --db "sqlite:$work/stdio.db" serve --stdio --user visitor --role guest

# The suite sends no Authorization header: this server lets header-less
# requests act as a guest (loopback only); a bad key is still refused.
start_demo conformance --allow-anonymous guest
url=$demo_url
echo "--- MCP conformance suite (server mode) against $url/mcp"
status=0
"$conformance" server --url "$url/mcp" --expected-failures "$root/.ci/conformance-expected-failures.yml" \
  >"$work/conformance.log" 2>&1 || status=$?
# One word per scenario (no "N passed, N failed" lines: the suite's counts
# include the expected failures listed in the baseline).
sed 's/\x1b\[[0-9;]*m//g' "$work/conformance.log" \
  | sed -n -e 's/^✓ \([^:]*\):.*/  pass      \1/p' -e 's/^✗ \([^:]*\):.*/  expected  \1 (not applicable, see the baseline)/p'
sed 's/\x1b\[[0-9;]*m//g' "$work/conformance.log" | grep -E 'Baseline|stale|regression|Unexpected' || true
if [ "$status" -ne 0 ]; then
  echo "conformance: unexpected results (exit $status); full log:" >&2
  sed 's/\x1b\[[0-9;]*m//g' "$work/conformance.log" | tail -n 80 >&2
  exit "$status"
fi
echo "conformance: every applicable scenario passed"

# The suite's own reference server (examples/servers/typescript/everything-server.ts of
# @modelcontextprotocol/conformance 0.1.13, kept in .ci/conformance with its licence;
# the package ships without it), run directly and then as toolgate's only upstream,
# mounted with prefix = false: every scenario that passes directly must pass through
# toolgate. TypeScript types are stripped with sucrase (.ci/tools.sh).
echo "--- MCP conformance suite: its reference server directly, then through toolgate"
ref="$work/reference"
mkdir -p "$ref"
ln -s "$TOOLGATE_NODE_MODULES" "$ref/node_modules"
"$TOOLGATE_NODE_MODULES/.bin/sucrase" "$root/.ci/conformance" -d "$ref/out" --transforms typescript >/dev/null
cp "$ref/out/everything-server.js" "$ref/everything-server.mjs"
ref_port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$ref_port node "$ref/everything-server.mjs" >"$work/reference.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  grep -q 'running on' "$work/reference.out" 2>/dev/null && break
  sleep 0.1
done
# One line per scenario: "name passed|failed".
scenarios() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | sed -n -e 's/^✓ \([^:]*\):.*/\1 passed/p' -e 's/^✗ \([^:]*\):.*/\1 failed/p' | sort
}
"$conformance" server --url "http://127.0.0.1:$ref_port/mcp" >"$work/direct.log" 2>&1 || true
cat >"$work/through.toml" <<TOML
[[upstreams]]
name = "everything"
url = "http://127.0.0.1:$ref_port/mcp"
prefix = false
required_role = "guest"
TOML
"$bin" --db "sqlite:$work/through.db" serve --config "$work/through.toml" --listen 127.0.0.1:0 \
  --expose direct --allow-anonymous guest >"$work/through.out" 2>"$work/through.err" &
pids+=($!)
through_url=""
for _ in $(seq 1 150); do
  through_url=$(sed -n 's#.*serving MCP at \(http://[^ ]*/mcp\).*#\1#p' "$work/through.out" 2>/dev/null | head -n 1)
  [ -n "$through_url" ] && break
  sleep 0.1
done
[ -n "$through_url" ] || { echo "toolgate in front of the reference server did not start:" >&2; cat "$work/through.err" >&2; exit 1; }
"$conformance" server --url "$through_url" >"$work/through.log" 2>&1 || true
scenarios "$work/direct.log" >"$work/direct.txt"
scenarios "$work/through.log" >"$work/through.txt"
echo "  directly: $(grep -c ' passed$' "$work/direct.txt") of $(wc -l <"$work/direct.txt") scenarios passed;" \
  "through toolgate: $(grep -c ' passed$' "$work/through.txt") of $(wc -l <"$work/through.txt")"
if ! grep -q ' passed$' "$work/direct.txt"; then
  echo "conformance: no scenario passed against the reference server itself; its log:" >&2
  cat "$work/reference.out" >&2; sed 's/\x1b\[[0-9;]*m//g' "$work/direct.log" | tail -n 40 >&2
  exit 1
fi
lost=$(join <(grep ' passed$' "$work/direct.txt" | cut -d' ' -f1) <(grep -v ' passed$' "$work/through.txt" | cut -d' ' -f1) | tr '\n' ' ' || true)
missing=$(comm -23 <(grep ' passed$' "$work/direct.txt" | cut -d' ' -f1) <(cut -d' ' -f1 "$work/through.txt") | tr '\n' ' ' || true)
if [ -n "$lost$missing" ]; then
  echo "conformance: scenarios that pass directly but not through toolgate: $lost $missing" >&2
  sed 's/\x1b\[[0-9;]*m//g' "$work/through.log" | tail -n 120 >&2
  exit 1
fi
echo "conformance: every scenario that passes against the reference server passes through toolgate"
