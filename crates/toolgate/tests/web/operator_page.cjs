// The operator's section of the web page, in headless Chromium (playwright-core).
//
// usage: node operator_page.cjs BASE_URL ADMIN_KEY MEMBER_KEY SCREENSHOT
//
// Against `toolgate serve --demo` with an upstream nobody serves (`ghost`) and a configuration
// file that was broken after the start: a member sees no operator section (and the admin API
// answers it 403); the admin sees the sources (travel and fitness reachable, ghost not, with its
// reason), the keys, the audit trail and the last reload; creates a key through the page (the
// secret is shown once and works), changes its role, revokes it (it stops working), filters the
// audit trail, and asks for a reload, which is refused with the problems listed. Then a
// screenshot of the section. Chromium: $CHROMIUM or /usr/bin/chromium. Prints PASS or FAIL.
"use strict";

const { chromium } = require("playwright-core");

function expect(condition, what, got) {
  if (!condition) throw new Error(what + (got === undefined ? "" : ": got " + JSON.stringify(got)));
  console.log("  ok  " + what);
}

async function status(base, key, path) {
  const res = await fetch(base + path, { headers: { "Authorization": "Bearer " + key } });
  let body = null;
  try { body = await res.json(); } catch (_) {}
  return { status: res.status, body };
}

async function connect(page, key) {
  await page.fill("#key", key);
  await page.click("#connect");
  await page.waitForFunction(() => document.getElementById("status").textContent === "connected", null, { timeout: 15000 });
}

const text = (page, selector) => page.locator(selector).first().innerText();
let shown = null; // the page, for what it showed when a step failed

(async () => {
  const [base, adminKey, memberKey, screenshot] = process.argv.slice(2);
  if (!screenshot) throw new Error("usage: node operator_page.cjs BASE_URL ADMIN_KEY MEMBER_KEY SCREENSHOT");
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    shown = page;
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("dialog", (d) => d.accept());
    await page.goto(base + "/");

    // A lower role: no operator section, and the routes refuse it.
    await connect(page, memberKey);
    expect(await page.locator("#admin").isHidden(), "a member sees no operator section");
    expect((await page.locator("#admin *").count()) === 0, "and none of its markup is in the page");
    const refused = await status(base, memberKey, "/api/admin/keys");
    expect(refused.status === 403 && refused.body.error.code === "PERMISSION_DENIED", "the keys API answers a member 403", refused);

    // The highest role.
    await connect(page, adminKey);
    await page.waitForSelector("#admin:not([hidden])");
    expect(true, "an admin sees the operator section");
    await page.waitForSelector("#sources tr[data-source=ghost]");
    const reach = async (name) => page.getAttribute("#sources tr[data-source=" + name + "]", "data-reachable");
    expect(await reach("ghost") === "false", "the upstream nobody serves is unreachable", await reach("ghost"));
    const ghostRow = await text(page, "#sources tr[data-source=ghost]");
    expect(/unreachable/.test(ghostRow) && ghostRow.length > 40, "with its reason", ghostRow);
    expect(await reach("travel") === "true", "travel (the database) is reachable", await reach("travel"));
    expect(await reach("fitness") === "true", "the fitness API is reachable", await reach("fitness"));
    const fitnessTools = Number(await text(page, "#sources tr[data-source=fitness] td:nth-child(4)"));
    expect(fitnessTools > 3, "the fitness source counts its tools", fitnessTools);
    const travelCalls = Number(await text(page, "#sources tr[data-source=travel] td:nth-child(5)"));
    expect(travelCalls >= 3, "and travel the calls made before (from the metrics)", travelCalls);
    const travelRate = await text(page, "#sources tr[data-source=travel] td:nth-child(6)");
    expect(/^[0-9.]+ %$/.test(travelRate) && travelRate !== "0.0 %", "with an error rate", travelRate);

    // Keys: list, create (shown once), change, revoke.
    await page.waitForSelector("#keys tbody tr[data-key]");
    const listed = await page.locator("#keys tbody tr[data-state=active]").count();
    expect(listed >= 4, "the demo keys are listed", listed);
    expect(!(await page.locator("#admin-keys").innerText()).includes("tg_"), "no secret is listed");
    await page.fill("#key-user", "dora");
    await page.selectOption("#key-role", "member");
    await page.fill("#key-domains", "travel");
    await page.click("#key-create-submit");
    await page.waitForSelector("#key-secret:not([hidden])");
    const secret = (await text(page, "#key-secret-value")).trim();
    expect(/^tg_[0-9a-f]{64}$/.test(secret), "the new key's secret is shown once", secret.slice(0, 3));
    const id = (await text(page, "#key-secret-id")).split(" ")[0];
    const works = await status(base, secret, "/api/whoami");
    expect(works.status === 200 && works.body.user_id === "dora" && works.body.role === "member", "and it works at once", works);
    const row = "#keys tr[data-key=" + id + "]";
    await page.waitForSelector(row + "[data-state=active]");
    expect((await text(page, row)).includes("domains travel"), "its row shows its scope");
    await page.click(row + " .key-edit");
    await page.selectOption(row + " .key-change-role", "manager");
    await page.click(row + " .key-change-save");
    await page.waitForFunction((sel) => { const r = document.querySelector(sel); return r && r.cells[2].textContent === "manager"; }, row);
    const changed = await status(base, secret, "/api/whoami");
    expect(changed.status === 200 && changed.body.role === "manager", "a role changed on the page holds on the next request", changed.body);
    await page.click(row + " .key-revoke");
    await page.waitForSelector(row + "[data-state=revoked]");
    const gone = await status(base, secret, "/api/whoami");
    expect(gone.status === 401, "a key revoked on the page stops working", gone.status);
    await page.click("#key-secret-hide");

    // The audit trail, filtered.
    await page.click("#audit-apply");
    await page.waitForSelector("#audit tbody tr[data-tool='keys.revoke']");
    await page.fill("#audit-tool", "keys.create");
    await page.click("#audit-apply");
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll("#audit tbody tr")];
      return rows.length > 0 && rows.every((r) => r.dataset.tool === "keys.create");
    });
    expect(true, "the audit trail filters by tool (keys.create)");
    await page.fill("#audit-tool", "");
    await page.fill("#audit-outcome", "PERMISSION_DENIED");
    await page.click("#audit-apply");
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll("#audit tbody tr")];
      return rows.length > 0 && rows.every((r) => r.dataset.outcome === "PERMISSION_DENIED");
    });
    expect(true, "and by outcome (the guest's refused call made before)");
    await page.fill("#audit-outcome", "");
    await page.click("#audit-apply");
    await page.waitForFunction(() => document.querySelectorAll("#audit tbody tr").length >= 4);

    // The last reload: none yet; asked now, it is refused (the file was broken) and says why.
    expect(await page.getAttribute("#reload-last", "data-outcome") === "none", "no reload yet");
    await page.click("#reload-now");
    await page.waitForSelector("#reload-last[data-outcome=refused]");
    const problems = await text(page, "#reload-last");
    expect(/Refused; nothing changed/.test(problems) && /inventory/.test(problems), "a refused reload lists its problems", problems);

    expect(pageErrors.length === 0, "no script error on the page", pageErrors);
    await page.locator("#admin").screenshot({ path: screenshot });
    console.log("PASS operator page");
  } catch (e) {
    const seen = shown ? await shown.locator("#admin").innerText().catch(() => "") : "";
    throw new Error(e.message + "\nthe operator section showed:\n" + seen);
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.log("FAIL " + e.message);
  process.exit(1);
});
