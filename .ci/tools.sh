#!/usr/bin/env bash
# Install the outside clients the interop tests use, into a cache folder
# outside the clone (reused by later runs on the same machine):
#   - the official MCP Python SDK (`mcp`, PyPI) in a virtualenv,
#   - the official MCP conformance suite (`@modelcontextprotocol/conformance`, npm),
#   - Debian's Chromium and `playwright-core` (npm) for the web page test.
# Prints the environment variables the tests read.
set -euo pipefail
tools="${TOOLGATE_CI_TOOLS:-/var/tmp/toolgate-ci-tools}"
mkdir -p "$tools"

# mcp 2.x: the upstream tests' Python server uses `mcp.server.mcpserver`.
if [ ! -x "$tools/venv/bin/python" ] || ! "$tools/venv/bin/python" -c 'import mcp.server.mcpserver' 2>/dev/null; then
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check 'mcp>=2,<3' >&2
fi

# 0.1.13 is the newest release that runs on the machine's Node.js 20
# (0.1.14 and later import fs.globSync, which needs Node.js 22).
if [ ! -x "$tools/node/node_modules/.bin/conformance" ] || [ ! -d "$tools/node/node_modules/playwright-core" ]; then
  mkdir -p "$tools/node"
  (cd "$tools/node" && [ -f package.json ] || npm init -y >/dev/null)
  npm install --silent --no-fund --no-audit --prefix "$tools/node" \
    @modelcontextprotocol/conformance@0.1.13 playwright-core >&2
fi

if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi

echo "export TOOLGATE_PYTHON=$tools/venv/bin/python"
echo "export TOOLGATE_NODE_MODULES=$tools/node/node_modules"
echo "export TOOLGATE_CONFORMANCE=$tools/node/node_modules/.bin/conformance"
echo "export TOOLGATE_CHROMIUM=/usr/bin/chromium"
echo "export TOOLGATE_REQUIRE_INTEROP=1"
echo "export TOOLGATE_REQUIRE_BROWSER=1"
