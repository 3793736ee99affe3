// The web page's chat asks its person, in headless Chromium (playwright-core).
//
// usage: node chat_elicit.cjs BASE_URL KEY ORDER_ID SCREENSHOT
//
// Against `toolgate serve --demo` whose chat model is scripted to cancel the APPROVED trip
// ORDER_ID of KEY's user, twice. It connects with KEY, sends a message, waits for the
// confirmation form in the transcript (the question's text, Confirm / Decline / Cancel, no
// inputs), clicks Decline, sees the outcome "declined" and the form disabled, reads the order
// back through /api/call (still APPROVED); sends a second message, clicks Confirm, sees
// "accepted", reads the order back (CANCELLED); then a third run calls query_travel_policy
// without its required `city` (the server asks for missing values): a form with one required
// text input, not sent while empty, sent with "Shanghai"; and keeps a screenshot at SCREENSHOT.
// Chromium: $CHROMIUM or /usr/bin/chromium. Prints PASS and exits 0, or FAIL and exits 1.
"use strict";

const { chromium } = require("playwright-core");

function expect(condition, what, got) {
  if (!condition) throw new Error(what + (got === undefined ? "" : ": got " + JSON.stringify(got)));
  console.log("  ok  " + what);
}

async function statusOf(base, key, orderId) {
  const res = await fetch(base + "/api/call", {
    method: "POST",
    headers: { "Authorization": "Bearer " + key, "Content-Type": "application/json" },
    body: JSON.stringify({ tool: "query_travel_order", parameters: { order_id: orderId } }),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error("/api/call answered " + res.status + ": " + JSON.stringify(body));
  const result = body.envelope.result;
  return result.status || (result.order && result.order.status);
}

// Send `message`, wait for the run's open question (the `n`th form), and return its state.
async function ask(page, message, n) {
  await page.fill("#chat-input", message);
  await page.click("#chat-send");
  await page.waitForFunction((n) => {
    const forms = document.querySelectorAll("#chat-log form.ask");
    return forms.length === n && forms[n - 1].dataset.state === "open";
  }, n, { timeout: 15000 });
  return page.evaluate((n) => {
    const form = document.querySelectorAll("#chat-log form.ask")[n - 1];
    const text = form.querySelector(".ask-message");
    return {
      message: text.textContent,
      markup: text.children.length,
      buttons: [...form.querySelectorAll("button")].map((b) => b.textContent),
      inputs: form.querySelectorAll("input, select").length,
      disabled: form.querySelector("fieldset").disabled,
      call: form.dataset.call,
      tool: (document.querySelector('#chat-log .msg.tool[data-call="' + form.dataset.call + '"]') || {}).textContent,
      visible: form.getBoundingClientRect().height > 0,
    };
  }, n);
}

// Wait for the `n`th question to be over and the `n`th run to end; the outcome shown and the tool line.
async function answered(page, n) {
  await page.waitForFunction((n) => {
    const form = document.querySelectorAll("#chat-log form.ask")[n - 1];
    return form.dataset.outcome && document.querySelectorAll("#chat-log .msg.stop[data-stop]").length === n;
  }, n, { timeout: 15000 });
  return page.evaluate((n) => {
    const form = document.querySelectorAll("#chat-log form.ask")[n - 1];
    const tool = document.querySelector('#chat-log .msg.tool[data-call="' + form.dataset.call + '"]');
    const stops = document.querySelectorAll("#chat-log .msg.stop[data-stop]");
    const answers = document.querySelectorAll("#chat-log .msg.assistant");
    return {
      outcome: form.dataset.outcome,
      shown: form.querySelector(".ask-outcome").textContent,
      disabled: form.querySelector("fieldset").disabled,
      toolState: tool && tool.dataset.state,
      toolResult: tool && tool.title,
      stop: stops[n - 1].dataset.stop,
      answer: answers.length ? answers[answers.length - 1].textContent : null,
    };
  }, n);
}

(async () => {
  const [base, key, orderArg, screenshot] = process.argv.slice(2);
  if (!screenshot) throw new Error("usage: node chat_elicit.cjs BASE_URL KEY ORDER_ID SCREENSHOT");
  const orderId = Number(orderArg);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error" && !m.location().url.endsWith("/favicon.ico")) pageErrors.push(m.text() + " " + m.location().url);
    });
    page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) pageErrors.push(r.status() + " " + r.request().method() + " " + r.url()); });
    const answers = [];
    page.on("request", (r) => { if (r.url().endsWith("/api/chat/answer")) answers.push(r.postDataJSON()); });
    const chats = [];
    page.on("request", (r) => { if (r.url().endsWith("/api/chat")) chats.push(r.postDataJSON()); });

    await page.goto(base + "/");
    await page.fill("#key", key);
    await page.click("#connect");
    await page.waitForFunction(() => document.querySelector("#status").textContent === "connected");
    expect(await statusOf(base, key, orderId) === "APPROVED", "the order is APPROVED to begin with");

    // First run: the model cancels the trip; the page asks; Decline.
    const first = await ask(page, "Cancel my Shenzhen trip", 1);
    expect(chats.length === 1 && chats[0].elicitation === true, "the page declares it answers questions", chats);
    expect(first.visible && /cannot be undone/.test(first.message), "the question's text is in the transcript", first);
    expect(first.markup === 0, "as text, not markup", first);
    expect(JSON.stringify(first.buttons) === JSON.stringify(["Confirm", "Decline", "Cancel"]) && first.inputs === 0,
      "a confirmation is Confirm / Decline / Cancel, no inputs", first);
    expect(!first.disabled, "the form is open", first);
    expect(/cancel_travel_order/.test(first.tool || ""), "below the tool call that asks", first);
    await page.click("#chat-log form.ask >> nth=0 >> button.ask-decline");
    const declined = await answered(page, 1);
    expect(answers.length === 1 && answers[0].action === "decline" && answers[0].content === undefined,
      "Decline posts a decline", answers);
    expect(declined.outcome === "declined" && declined.shown === "answer: declined", "the outcome shown is declined", declined);
    expect(declined.disabled, "the answered form is disabled", declined);
    expect(declined.toolState === "ok" && /nothing was changed/i.test(declined.toolResult || ""),
      "the call says nothing was changed", declined);
    expect(declined.stop === "answer" && declined.answer === "Kept it.", "the run ends with the model's answer", declined);
    expect(await statusOf(base, key, orderId) === "APPROVED", "the order is still APPROVED");

    // Second run, same conversation: Confirm.
    const second = await ask(page, "Yes, cancel it", 2);
    expect(chats.length === 2 && chats[1].elicitation === true && chats[1].conversation_id, "the second message continues the conversation", chats);
    expect(/cannot be undone/.test(second.message) && second.buttons[0] === "Confirm", "asked again", second);
    await page.click("#chat-log form.ask >> nth=1 >> button.ask-confirm");
    const confirmed = await answered(page, 2);
    expect(answers.length === 2 && answers[1].action === "accept" && answers[1].content.confirm === true,
      "Confirm posts an accept with confirm: true", answers);
    expect(confirmed.outcome === "accepted" && confirmed.shown === "answer: accepted", "the outcome shown is accepted", confirmed);
    expect(confirmed.disabled, "the answered form is disabled", confirmed);
    expect(confirmed.toolState === "ok" && /cancel/i.test(confirmed.toolResult || ""), "the confirmed call ran", confirmed);
    expect(confirmed.answer === "Cancelled.", "the run ends with the model's answer", confirmed);
    expect(await statusOf(base, key, orderId) === "CANCELLED", "the order is CANCELLED");

    // Third run: a missing required value, asked as a form of that field.
    const third = await ask(page, "What may a hotel in Shanghai cost?", 3);
    expect(/city/.test(third.message) && third.inputs === 1, "a form of the missing field", third);
    expect(JSON.stringify(third.buttons) === JSON.stringify(["Submit", "Decline", "Cancel"]), "Submit / Decline / Cancel", third);
    const field = await page.evaluate(() => {
      const form = document.querySelectorAll("#chat-log form.ask")[2];
      const input = form.querySelector("input");
      const label = input.closest("label");
      return { name: input.name, type: input.type, required: input.required, label: label.textContent,
               mark: !!label.querySelector(".bad"), hint: (label.querySelector(".hint") || {}).textContent };
    });
    expect(field.name === "city" && field.type === "text" && field.required && field.mark, "city: a required text input, marked", field);
    expect(/^city \*/.test(field.label) && /destination city/i.test(field.hint || ""), "with its title and description", field);
    await page.click("#chat-log form.ask >> nth=2 >> button.ask-submit");
    const unsent = await page.evaluate(() => document.querySelectorAll("#chat-log form.ask")[2].dataset.state);
    expect(unsent === "open" && answers.length === 2, "an empty required field is not sent", { unsent, answers });
    await page.fill("#chat-log form.ask >> nth=2 >> input[name=city]", "Shanghai");
    await page.click("#chat-log form.ask >> nth=2 >> button.ask-submit");
    const given = await answered(page, 3);
    expect(answers.length === 3 && answers[2].action === "accept" && JSON.stringify(answers[2].content) === '{"city":"Shanghai"}',
      "Submit posts the field's value", answers);
    expect(given.outcome === "accepted" && given.disabled, "accepted, and the form is disabled", given);
    expect(given.toolState === "ok" && /Shanghai/.test(given.toolResult || ""), "the call ran with the given city", given);
    expect(given.answer === "Tier 1.", "the run ends with the model's answer", given);
    expect(pageErrors.length === 0, "no script errors, no failed requests", pageErrors);

    // The transcript unrolled, for the picture.
    await page.addStyleTag({ content: "#chat-log { height: auto !important; }" });
    await page.locator("#chat-log").scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log("PASS chat elicitation");
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.log("FAIL " + (e && e.stack ? e.stack : e));
  process.exit(1);
});
