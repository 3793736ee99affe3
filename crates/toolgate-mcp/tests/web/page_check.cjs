// End-to-end check of the web page at `/` in headless Chromium (playwright-core).
//
// usage: node page_check.cjs BASE_URL ADMIN_KEY MEMBER_KEY SCREENSHOT.png
//
// It opens the page, is refused with a wrong key, connects with the admin key, waits for the
// tools, the skills and the live trace, makes a member call a tool over MCP (fetch, streamable
// HTTP), waits for that call to appear in the trace, opens its details (parameters and result),
// opens a tool's page (schema, examples, guides) and runs it from the form, chats with the agent
// (the server's model is scripted: one tool call, then "Sunny in Oslo.") and keeps a screenshot.
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

async function memberCallsATool(base, key) {
  const init = await mcp(base, key, null, {
    jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page-check", version: "0" } },
  });
  await mcp(base, key, init.session, { jsonrpc: "2.0", method: "notifications/initialized" });
  const call = await mcp(base, key, init.session, {
    jsonrpc: "2.0", id: 2, method: "tools/call",
    params: { name: "execute_tool", arguments: { tool_name: "query_weather", parameters: { city: "Oslo" } } },
  });
  expect(call.text.includes("\"success\":true"), "the member's MCP call succeeds");
}

(async () => {
  const [base, adminKey, memberKey, screenshot] = process.argv.slice(2);
  if (!screenshot) throw new Error("usage: node page_check.cjs BASE_URL ADMIN_KEY MEMBER_KEY SCREENSHOT.png");
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") pageErrors.push(m.text()); });

    await page.goto(base + "/");
    expect((await page.title()) === "toolgate", "the page loads");

    await page.fill("#key", "tg_wrong");
    await page.click("#connect");
    await page.waitForSelector("#error:not([hidden])");
    const refused = await page.textContent("#error");
    expect(refused.includes("UNAUTHORIZED"), "a wrong key is refused", refused);
    pageErrors.length = 0; // the 401 itself is logged by Chromium as a failed resource

    await page.fill("#key", adminKey);
    await page.click("#connect");
    await page.waitForFunction(() => document.querySelector("#status").textContent === "connected");
    const tools = await page.$$eval("#tools tbody tr", (rows) => rows.map((r) => r.dataset.tool));
    expect(tools.includes("query_weather") && tools.includes("delete_account"), "the admin's tools are listed", tools);
    const skills = await page.$$eval("#skills tbody tr", (rows) => rows.map((r) => r.dataset.skill));
    expect(skills.includes("account-cleanup"), "the admin's skills are listed", skills);
    expect((await page.textContent("#who")).startsWith("ada"), "the page says who is connected");

    await page.waitForFunction(() => document.querySelector("#trace-state").textContent === "(live)");
    expect(true, "the live trace is connected");

    await memberCallsATool(base, memberKey);
    const row = await page.waitForSelector('#trace tbody tr.event.done[data-tool="query_weather"]', { timeout: 15000 });
    const rowText = await row.textContent();
    expect(rowText.includes("mia (member)") && rowText.includes("ok"), "the call appears in the trace", rowText);
    await row.click();
    const detail = await page.textContent("#trace tbody tr.detail pre");
    expect(detail.includes("\"city\": \"Oslo\""), "the trace row opens its parameters", detail);
    expect(detail.includes("\"result\"") && detail.includes("Oslo"), "and its result", detail);

    // The console: a tool opens its contract, examples and guides, and runs from the form.
    await page.click('#tools tbody tr[data-tool="query_weather"]');
    await page.waitForSelector("#tool-detail:not([hidden])");
    expect((await page.textContent("#detail-schema")).includes("\"city\""), "the tool's schema is shown");
    const guides = await page.textContent("#detail-guides");
    expect(guides.includes("weather-check"), "the guides that use it are listed", guides);
    const prefilled = await page.inputValue("#try-params");
    expect(prefilled.includes("\"city\": \"\""), "the form starts from the required fields", prefilled);
    await page.fill("#try-params", '{"city": "Oslo"}');
    await page.click("#try-run");
    await page.waitForSelector("#try-result:not([hidden])");
    const envelope = await page.textContent("#try-envelope");
    expect(envelope.includes("\"success\": true"), "the tried call answers its envelope", envelope);
    expect((await page.textContent("#try-text")).length > 0, "and the text a model reads");

    // The chat: tokens stream into an answer, the tool call shows as it starts and finishes.
    await page.fill("#chat-input", "Weather in Oslo?");
    await page.click("#chat-send");
    await page.waitForSelector('#chat-log .msg.stop[data-stop="answer"]', { timeout: 15000 });
    const toolLine = await page.textContent('#chat-log .msg.tool[data-state="ok"]');
    expect(toolLine.startsWith("→ execute_tool") && toolLine.includes("· ok"), "the chat shows the tool call and its outcome", toolLine);
    const answers = await page.$$eval("#chat-log .msg.assistant", (els) => els.map((e) => e.textContent));
    expect(answers.length === 1 && answers[0] === "Sunny in Oslo.", "the answer streams in", answers);

    await page.screenshot({ path: screenshot, fullPage: true });
    expect(pageErrors.length === 0, "no script errors", pageErrors);
    console.log("PASS web");
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.log("FAIL " + (e && e.stack ? e.stack : e));
  process.exit(1);
});
