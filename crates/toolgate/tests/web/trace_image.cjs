// The web page shows a chart from the trace, in headless Chromium (playwright-core).
//
// usage: node trace_image.cjs BASE_URL KEY
//
// It opens the page of `toolgate serve --demo`, connects with KEY, waits for the live trace,
// calls render_weight_chart over MCP (fetch, streamable HTTP) as that key's user, and waits for
// the call's trace row to show an <img> that Chromium decoded (naturalWidth > 0) and that is
// not blank (more than one colour when drawn on a canvas).
// Chromium: $CHROMIUM or /usr/bin/chromium. Prints PASS and exits 0, or FAIL and exits 1.
"use strict";

const { chromium } = require("playwright-core");

function expect(condition, what, got) {
  if (!condition) throw new Error(what + (got === undefined ? "" : ": got " + JSON.stringify(got)));
  console.log("  ok  " + what);
}

async function mcp(base, key, session, body) {
  const headers = {
    "Authorization": "Bearer " + key,
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
  };
  if (session) {
    headers["Mcp-Session-Id"] = session;
    headers["Mcp-Protocol-Version"] = "2025-06-18";
  }
  const res = await fetch(base + "/mcp", { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error("MCP " + body.method + " answered " + res.status + ": " + text);
  return { session: res.headers.get("mcp-session-id"), text };
}

async function drawChart(base, key) {
  const init = await mcp(base, key, null, {
    jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "trace-image", version: "0" } },
  });
  await mcp(base, key, init.session, { jsonrpc: "2.0", method: "notifications/initialized" });
  const day = (n) => new Date(Date.now() - n * 86400000).toISOString().slice(0, 10);
  const call = await mcp(base, key, init.session, {
    jsonrpc: "2.0", id: 2, method: "tools/call",
    params: { name: "execute_tool", arguments: { tool_name: "render_weight_chart", parameters: { from: day(30), to: day(0) } } },
  });
  expect(call.text.includes("\"success\":true") && call.text.includes("image/png"), "render_weight_chart answers a PNG over MCP");
}

(async () => {
  const [base, key] = process.argv.slice(2);
  if (!key) throw new Error("usage: node trace_image.cjs BASE_URL KEY");
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    // Chromium asks for /favicon.ico on its own; the page has none (401 without a key): not the page's error.
    page.on("console", (m) => {
      if (m.type() === "error" && !m.location().url.endsWith("/favicon.ico")) pageErrors.push(m.text() + " " + m.location().url);
    });
    page.on("response", (r) => { if (r.status() >= 400) pageErrors.push(r.status() + " " + r.request().method() + " " + r.url()); });

    await page.goto(base + "/");
    await page.fill("#key", key);
    await page.click("#connect");
    await page.waitForFunction(() => document.querySelector("#status").textContent === "connected");
    await page.waitForFunction(() => document.querySelector("#trace-state").textContent === "(live)");
    expect(true, "the page follows the live trace");

    await drawChart(base, key);
    const selector = '#trace tbody tr.event.done[data-tool="render_weight_chart"] img.trace-image';
    await page.waitForSelector(selector, { timeout: 15000 });
    await page.waitForFunction((s) => { const img = document.querySelector(s); return img.complete && img.naturalWidth > 0; },
      selector, { timeout: 10000 });
    const seen = await page.$eval(selector, (img) => {
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const ctx = canvas.getContext("2d");
      ctx.drawImage(img, 0, 0);
      const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      const colours = new Set();
      for (let i = 0; i < pixels.length && colours.size < 16; i += 4) colours.add(pixels[i] << 16 | pixels[i + 1] << 8 | pixels[i + 2]);
      const box = img.getBoundingClientRect();
      return { width: img.naturalWidth, height: img.naturalHeight, colours: colours.size,
               shown: box.width > 0 && box.height > 0, src: img.src.slice(0, 22) };
    });
    expect(seen.src === "data:image/png;base64,", "the trace row has the chart as a PNG <img>", seen);
    expect(seen.width === 640 && seen.height === 320, "Chromium decoded it: naturalWidth 640, naturalHeight 320", seen);
    expect(seen.shown, "it is laid out on the page", seen);
    expect(seen.colours > 1, "and it is not blank", seen);
    expect(pageErrors.length === 0, "no script errors", pageErrors);
    console.log("PASS trace image");
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.log("FAIL " + (e && e.stack ? e.stack : e));
  process.exit(1);
});
