// The operator's section of the toolgate page (served at /admin.js): sources,
// API keys, the audit trail and the last reload. The page shows it only to the
// highest role (whoami's `admin`), and every /api/admin/ route refuses the
// others with 403 anyway. Every text from the server is set as textContent.
"use strict";
(function () {
  let key = null;
  const $ = (id) => document.getElementById(id);

  const MARKUP = `
<section id="admin-sources">
  <h2>Sources <span id="sources-state" class="muted"></span> <button type="button" id="sources-refresh">Refresh</button></h2>
  <table id="sources"><thead><tr><th>Source</th><th>Kind</th><th>State</th><th>Tools</th><th>Calls</th><th>Error rate</th><th>Latency (mean / p95 ≤)</th><th>Last error</th></tr></thead><tbody></tbody></table>
</section>
<section id="admin-keys">
  <h2>API keys <span id="keys-state" class="muted"></span></h2>
  <form id="key-create" class="admin-form">
    <input id="key-user" placeholder="user id" aria-label="User id" required>
    <select id="key-role" aria-label="Role"></select>
    <input id="key-toolset" placeholder="toolset (optional)" aria-label="Toolset">
    <input id="key-domains" placeholder="domains, comma-separated (optional)" aria-label="Domains">
    <button type="submit" id="key-create-submit">Create key</button>
  </form>
  <div id="key-secret" class="panel secret" hidden>
    <div>New key <span id="key-secret-id" class="name"></span>, shown once; copy it now:</div>
    <pre id="key-secret-value" class="json"></pre>
    <button type="button" id="key-secret-hide">Done</button>
  </div>
  <div id="keys-error" class="bad" hidden></div>
  <table id="keys"><thead><tr><th>Id</th><th>User</th><th>Role</th><th>Scope</th><th>Created</th><th>State</th><th></th></tr></thead><tbody></tbody></table>
</section>
<section id="admin-audit">
  <h2>Audit trail <span id="audit-state" class="muted"></span></h2>
  <form id="audit-filter" class="admin-form">
    <input id="audit-tool" placeholder="tool" aria-label="Tool">
    <input id="audit-user" placeholder="caller (user id)" aria-label="Caller">
    <input id="audit-outcome" placeholder="outcome (OK, PERMISSION_DENIED, …)" aria-label="Outcome">
    <input id="audit-since" type="datetime-local" step="1" aria-label="Since">
    <input id="audit-limit" type="number" min="1" max="1000" value="50" aria-label="Limit">
    <button type="submit" id="audit-apply">Filter</button>
  </form>
  <table id="audit"><thead><tr><th>Time</th><th>Caller</th><th>Tool</th><th>Outcome</th><th>Parameters</th><th>Instance</th></tr></thead><tbody></tbody></table>
</section>
<section id="admin-reload">
  <h2>Configuration <span id="reload-state" class="muted"></span> <button type="button" id="reload-now">Reload now</button></h2>
  <div id="reload-last" class="panel"></div>
</section>`;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = String(text);
    return e;
  }

  function cell(text, cls) {
    return el("td", cls, text == null ? "" : text);
  }

  // A JSON call with the page's key: the answer, or an Error with the server's code and message.
  async function call(method, path, body) {
    const init = { method, headers: { "Authorization": "Bearer " + key, "Accept": "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    let data = null;
    try { data = await res.json(); } catch (_) { data = null; }
    if (!res.ok) {
      const error = new Error(data && data.error ? data.error.code + ": " + data.error.message : "HTTP " + res.status);
      error.body = data;
      error.status = res.status;
      throw error;
    }
    return data;
  }

  function ms(value) {
    return value == null ? "–" : Number(value).toFixed(value < 10 ? 2 : 0) + " ms";
  }

  async function loadSources() {
    $("sources-state").textContent = "(checking…)";
    try {
      const answer = await call("GET", "/api/admin/sources");
      const tbody = $("sources").tBodies[0];
      tbody.replaceChildren();
      for (const s of answer.sources) {
        const tr = document.createElement("tr");
        tr.dataset.source = s.name;
        tr.dataset.reachable = s.reachable == null ? "unknown" : String(s.reachable);
        const state = s.reachable == null ? cell("unknown", "muted") : s.reachable ? cell("reachable", "ok") : cell("unreachable", "bad");
        const rate = s.error_rate == null ? "–" : (s.error_rate * 100).toFixed(1) + " %";
        const codes = Object.entries(s.error_codes || {}).map(([c, n]) => c + " " + n).join(", ");
        const rateCell = cell(rate, s.errors > 0 ? "bad" : "");
        if (codes) rateCell.title = codes;
        const name = cell(s.name, "name");
        if (s.target) name.title = s.target;
        tr.append(name, cell(s.kind), state, cell(s.tools), cell(s.calls), rateCell,
                  cell(ms(s.latency_ms.mean) + " / " + ms(s.latency_ms.p95_at_most)), cell(s.error || "", "desc"));
        tbody.append(tr);
      }
      $("sources-state").textContent = "(" + answer.sources.length + ", checked " + answer.checked_at.replace(/^.*T/, "").replace(/Z$/, "") + ")";
    } catch (e) {
      $("sources-state").textContent = "(" + e.message + ")";
    }
  }

  function scopeText(scope) {
    const parts = [];
    if (scope.toolset) parts.push("toolset " + scope.toolset);
    if (scope.domains) parts.push("domains " + scope.domains.join(","));
    return parts.join(" · ") || "all";
  }

  function keysError(message) {
    $("keys-error").textContent = message || "";
    $("keys-error").hidden = !message;
  }

  function roleSelect(roles, current) {
    const select = document.createElement("select");
    for (const r of roles) {
      const o = el("option", null, r);
      o.value = r;
      select.append(o);
    }
    if (current) select.value = current;
    return select;
  }

  // A key's row: revoke, or change its role and scope in place.
  function keyRow(k, roles, own) {
    const tr = document.createElement("tr");
    tr.dataset.key = k.id;
    tr.dataset.state = k.active ? "active" : "revoked";
    const actions = cell("");
    if (k.active && k.id !== own) {
      const revoke = el("button", "key-revoke", "Revoke");
      revoke.type = "button";
      revoke.addEventListener("click", async () => {
        if (!window.confirm("Revoke " + k.id + " of " + k.user_id + "? Its sessions end now.")) return;
        try { await call("DELETE", "/api/admin/keys/" + encodeURIComponent(k.id)); keysError(""); }
        catch (e) { keysError(e.message); }
        loadKeys();
      });
      const edit = el("button", "key-edit", "Change");
      edit.type = "button";
      edit.addEventListener("click", () => editRow(tr, k, roles));
      actions.append(edit, " ", revoke);
    } else if (k.id === own) {
      actions.append(el("span", "muted", "this page's key"));
    }
    tr.append(cell(k.id, "name"), cell(k.user_id), cell(k.role), cell(scopeText(k.scope)),
              cell(k.created_at.replace("T", " ").replace(/\.\d+Z$/, "Z")),
              k.active ? cell("active", "ok") : cell("revoked " + k.revoked_at.replace(/T.*$/, ""), "muted"), actions);
    return tr;
  }

  function editRow(tr, k, roles) {
    const form = el("form", "key-change admin-form");
    const role = roleSelect(roles, k.role);
    role.className = "key-change-role";
    const toolset = el("input", "key-change-toolset");
    toolset.placeholder = "toolset (empty: none)";
    toolset.value = k.scope.toolset || "";
    const domains = el("input", "key-change-domains");
    domains.placeholder = "domains (empty: all)";
    domains.value = (k.scope.domains || []).join(",");
    const save = el("button", "key-change-save", "Save");
    save.type = "submit";
    form.append(role, toolset, domains, save);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const d = domains.value.split(",").map((s) => s.trim()).filter(Boolean);
      const body = { role: role.value, toolset: toolset.value.trim() || null, domains: d.length ? d : null };
      try { await call("PATCH", "/api/admin/keys/" + encodeURIComponent(k.id), body); keysError(""); loadKeys(); }
      catch (err) { keysError(err.message); }
    });
    const last = tr.lastElementChild;
    last.replaceChildren(form);
  }

  async function loadKeys() {
    try {
      const answer = await call("GET", "/api/admin/keys");
      const select = $("key-role");
      const chosen = select.value;
      select.replaceChildren(...roleSelect(answer.roles, null).children);
      select.value = chosen || answer.roles[0];
      const tbody = $("keys").tBodies[0];
      tbody.replaceChildren();
      // Newest first, active before revoked.
      const keys = answer.keys.slice().reverse().sort((a, b) => Number(b.active) - Number(a.active));
      for (const k of keys) tbody.append(keyRow(k, answer.roles, answer.own_key_id));
      const active = answer.keys.filter((k) => k.active).length;
      $("keys-state").textContent = "(" + active + " active, " + (answer.keys.length - active) + " revoked)";
    } catch (e) {
      $("keys-state").textContent = "(" + e.message + ")";
    }
  }

  async function createKey(event) {
    event.preventDefault();
    const body = { user_id: $("key-user").value.trim(), role: $("key-role").value };
    const toolset = $("key-toolset").value.trim();
    if (toolset) body.toolset = toolset;
    const domains = $("key-domains").value.split(",").map((s) => s.trim()).filter(Boolean);
    if (domains.length) body.domains = domains;
    try {
      const made = await call("POST", "/api/admin/keys", body);
      keysError("");
      $("key-secret-id").textContent = made.key.id + " (" + made.key.user_id + ", " + made.key.role + ")";
      $("key-secret-value").textContent = made.secret;
      $("key-secret").hidden = false;
      $("key-create").reset();
    } catch (e) {
      keysError(e.message);
    }
    loadKeys();
  }

  async function loadAudit(event) {
    if (event) event.preventDefault();
    const query = new URLSearchParams();
    for (const [field, id] of [["tool", "audit-tool"], ["user", "audit-user"], ["outcome", "audit-outcome"], ["limit", "audit-limit"]]) {
      const v = $(id).value.trim();
      if (v) query.set(field, v);
    }
    const since = $("audit-since").value;
    if (since) query.set("since", new Date(since).toISOString());
    $("audit-state").textContent = "(loading…)";
    try {
      const answer = await call("GET", "/api/audit?" + query.toString());
      const tbody = $("audit").tBodies[0];
      tbody.replaceChildren();
      for (const r of answer.records) {
        const tr = document.createElement("tr");
        tr.dataset.tool = r.tool;
        tr.dataset.outcome = r.outcome;
        const params = JSON.stringify(r.params);
        tr.append(cell(r.at.replace("T", " ")), cell(r.user_id + " (" + r.role + ")"), cell(r.tool, "name"),
                  cell(r.outcome, r.outcome === "OK" ? "ok" : "bad"),
                  cell(params.length > 100 ? params.slice(0, 100) + "…" : params, "desc"), cell(r.instance, "muted"));
        tr.title = JSON.stringify({ params: r.params, ids: r.ids, key_id: r.key_id, trace_id: r.trace_id }, null, 2);
        tbody.append(tr);
      }
      $("audit-state").textContent = "(" + answer.records.length + " record(s), newest first)";
    } catch (e) {
      $("audit-state").textContent = "(" + e.message + ")";
    }
  }

  function list(title, items) {
    const box = el("div");
    box.append(el("h3", null, title + " (" + items.length + ")"));
    const ul = el("ul");
    for (const item of items) ul.append(el("li", null, item));
    box.append(ul);
    return box;
  }

  // How the last reload went: what changed, or every problem (then nothing changed).
  function showReload(last) {
    const box = $("reload-last");
    box.replaceChildren();
    if (!last) {
      box.dataset.outcome = "none";
      box.append(el("div", "muted", "no reload since this server started"));
      return;
    }
    box.dataset.outcome = last.reloaded ? "reloaded" : "refused";
    const head = el("div", last.reloaded ? "ok" : "bad",
      (last.reloaded ? "Reloaded" : "Refused; nothing changed") + " at " + String(last.at || "").replace("T", " "));
    box.append(head);
    if (!last.reloaded) { box.append(list("Problems", last.problems || [])); return; }
    const c = last.changes || {};
    for (const [field, title] of [["added", "Tools added"], ["removed", "Tools removed"], ["upstreams_started", "Upstreams started"],
                                  ["upstreams_stopped", "Upstreams stopped"], ["need_restart", "Changed, but read only at start"],
                                  ["warnings", "Warnings"]]) {
      if (Array.isArray(c[field]) && c[field].length) box.append(list(title, c[field]));
    }
    if (Array.isArray(c.kept)) box.append(el("div", "muted", c.kept.length + " tool(s) kept"));
  }

  async function loadReload() {
    try {
      const answer = await call("GET", "/api/admin/reload");
      $("reload-state").textContent = "";
      showReload(answer.last);
    } catch (e) {
      $("reload-state").textContent = "(" + e.message + ")";
    }
  }

  async function reloadNow() {
    $("reload-state").textContent = "(reloading…)";
    try { await call("POST", "/api/admin/reload"); } catch (e) { if (e.status !== 422) { $("reload-state").textContent = "(" + e.message + ")"; return; } }
    await loadReload();
    loadSources();
  }

  // Show the section for `adminKey` (null hides it); `sections` says whether this server keeps
  // an audit trail and can reload, so that the page asks only for what is there.
  function show(adminKey, sections) {
    const root = $("admin");
    key = adminKey;
    if (!key) { root.hidden = true; root.replaceChildren(); return; }
    const has = Object.assign({ audit: true, reload: true }, sections || {});
    if (!root.childElementCount) {
      root.innerHTML = MARKUP; // static markup of this file, no server text
      $("sources-refresh").addEventListener("click", loadSources);
      $("key-create").addEventListener("submit", createKey);
      $("key-secret-hide").addEventListener("click", () => { $("key-secret").hidden = true; $("key-secret-value").textContent = ""; });
      $("audit-filter").addEventListener("submit", loadAudit);
      $("reload-now").addEventListener("click", reloadNow);
    }
    root.hidden = false;
    $("audit-filter").hidden = $("audit").hidden = !has.audit;
    $("audit-state").textContent = has.audit ? "" : "(this server keeps no audit trail: it is kept when toolgate serve has a database)";
    $("reload-now").hidden = $("reload-last").hidden = !has.reload;
    $("reload-state").textContent = has.reload ? "" : "(this server cannot reload its configuration while it serves)";
    loadSources();
    loadKeys();
    if (has.audit) loadAudit();
    if (has.reload) loadReload();
  }

  window.toolgateAdmin = { show };
})();
