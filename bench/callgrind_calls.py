#!/usr/bin/env python3
"""Server instructions per `tools/call`, counted by valgrind's callgrind.

Wall-clock figures are noise on a shared machine; instruction counts are not.
This starts a server under callgrind (instrumentation on from the start),
warms it up, zeroes the counters, makes N calls over one keep-alive
connection, dumps, and prints the server's instructions per call (the
dump's total / N: everything the process did for those calls, every thread).

    bench/callgrind_calls.py toolgate target/release/toolgate [--sessions] [-n 2000]
    bench/callgrind_calls.py bare target/release/xtask [--sessions]

The dump is kept (callgrind.out.<label>) for callgrind_annotate --inclusive=yes.

Caveat: the total includes the server's timed background work during the
calls (toolgate polls for revoked keys every 0.5 s and re-checks a key in the
database once its 1 s cache entry expires). Under valgrind a call takes
milliseconds, so on a loaded machine that work adds a varying share per call:
compare binaries in one sitting, release builds, and look at the inclusive
cost of the request path (callgrind_annotate) rather than the total alone.
"""

import argparse
import glob
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time

PROTOCOL = "2025-06-18"


def call_body(kind, rid):
    if kind == "toolgate":
        params = {"name": "execute_tool",
                  "arguments": {"tool_name": "query_weather", "parameters": {"city": "Oslo"}}}
    else:
        params = {"name": "query_weather", "arguments": {"city": "Oslo"}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["toolgate", "bare"])
    ap.add_argument("program")
    ap.add_argument("--sessions", action="store_true")
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--label", default=None)
    args = ap.parse_args()
    label = args.label or f"{args.kind}-{'sessions' if args.sessions else 'stateless'}"
    work = tempfile.mkdtemp(prefix="cg-")
    env = dict(os.environ)
    for var in ["TOOLGATE_CONFIG", "TOOLGATE_DATABASE_URL", "TOOLGATE_WEATHER_URL"]:
        env.pop(var, None)
    env["TOOLGATE_LOG"] = "warn"
    bearer = None
    if args.kind == "toolgate":
        db = f"sqlite:{work}/tg.db"
        out = subprocess.run([args.program, "--db", db, "keys", "create", "--user", "alice", "--role", "member"],
                             env=env, capture_output=True, text=True, check=True).stdout
        bearer = out.split()[1]
        cmd = [args.program, "--db", db, "serve", "--listen", "127.0.0.1:0"]
        if not args.sessions:
            cmd.append("--stateless")
    else:
        cmd = [args.program, "bench", "serve-bare"] + (["--stateful"] if args.sessions else [])
    out_file = f"{work}/callgrind.out"
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *cmd],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = None
        for line in server.stdout:
            m = re.search(r"serving MCP at http://([0-9.]+):(\d+)(/mcp)", line)
            if m:
                url = m
                break
        if url is None:
            sys.exit("the server did not say where it serves")
        host, port, path = url.group(1), int(url.group(2)), url.group(3)
        conn = http.client.HTTPConnection(host, port, timeout=120)
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                   "mcp-protocol-version": PROTOCOL}
        if bearer:
            headers["authorization"] = f"Bearer {bearer}"

        def post(body):
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            if response.status >= 300:
                sys.exit(f"HTTP {response.status}: {data[:300]!r}")
            return response, data

        if args.sessions:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                               "clientInfo": {"name": "callgrind", "version": "1"}}}
            response, _ = post(json.dumps(init))
            headers["mcp-session-id"] = response.getheader("mcp-session-id")
            post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        rid = 1
        for _ in range(args.warmup):
            _, data = post(call_body(args.kind, rid))
            rid += 1
        if b'"isError":false' not in data:
            sys.exit(f"the call failed: {data[:300]!r}")
        subprocess.run(["callgrind_control", "-z", str(server.pid)], check=True, capture_output=True)
        for _ in range(args.n):
            post(call_body(args.kind, rid))
            rid += 1
        subprocess.run(["callgrind_control", "-d", label, str(server.pid)], check=True, capture_output=True)
        time.sleep(1)
    finally:
        server.terminate()
        server.wait()
    total = 0
    for dump in glob.glob(f"{out_file}*"):
        with open(dump) as f:
            text = f.read()
        if f"\ntrigger: Program termination" in text or label not in text:
            continue
        m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if m:
            total += int(m.group(1))
        os.replace(dump, f"callgrind.out.{label}.{os.path.basename(dump)}")
    print(f"{label}: {total / args.n:,.0f} instructions per call ({args.n} calls)")


if __name__ == "__main__":
    main()
