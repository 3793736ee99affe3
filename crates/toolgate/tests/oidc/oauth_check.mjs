// OAuth 2.1 against an MCP server through the official MCP TypeScript SDK
// (`@modelcontextprotocol/sdk`, installed by `.ci/tools.sh` under $TOOLGATE_NODE_MODULES).
//
// The SDK's own OAuth client does the dance the MCP authorization spec (2025-11-25)
// asks of a client: StreamableHTTPClientTransport with an `authProvider` (our
// OAuthClientProvider) meets the server's 401, reads RFC 9728 Protected Resource
// Metadata, discovers the authorization server (RFC 8414 / OpenID), registers
// (RFC 7591) and sends the user to the authorization URL (code + PKCE + RFC 8707
// `resource`); connect() then fails with UnauthorizedError, and
// `transport.finishAuth(code)` trades the code for tokens; a second connect()
// carries the bearer token. The user's part (the browser) is a scripted login over
// plain HTTP against the test identity provider (provider.mjs beside this file):
// follow the authorization URL, POST `login=<account>` to its login form, follow the
// redirects until the one to our redirect_uri, check its state (and RFC 9207 iss).
//
// Before the SDK runs, the script checks the server's side by hand so that a
// failure says what is wrong: an unauthenticated POST must answer 401 whose
// WWW-Authenticate names `resource_metadata`, and that document must be JSON whose
// `resource` matches the server URL (same origin, URL path under the resource's
// path) and whose `authorization_servers` is not empty.
//
// Usage:
//   node oauth_check.mjs URL --login ACCOUNT [--tool NAME] [--args JSON] [--again-after SECONDS]
//                        [--expect-forbidden]
//     URL                 the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp
//     --login ACCOUNT     the identity provider's account to log in as (alice, bob, ...)
//     --tool NAME         after listing the tools, call this one (default: list only)
//     --args JSON         the call's arguments, a JSON object (default {})
//     --again-after S     after the call, wait S seconds and call the tool again (for tokens
//                         that expire: this SDK sends the expired token, meets the server's
//                         401 and re-authorizes; the call is then made in a new session)
//     --expect-forbidden  the login succeeds, but the MCP session must then be refused
//                         with HTTP 403 (initialize, list or call); exit 0 only then
// Needs TOOLGATE_NODE_MODULES (what `bash .ci/tools.sh` prints).
//
// Prints one JSON line on stdout, then exits 0:
//   {"ok": true, "login": ACCOUNT, "issuer": ..., "resource": ..., "scopes_supported": [...],
//    "token": {"sub", "aud", "scope", "groups", "client_id", "exp", "iss"}  (claims, never the token),
//    "tools": N, "tool_names": [...], "tool": NAME, "is_error": bool, "text": "...",
//    "structured": {...} | null, "authorizations": N (scripted logins),
//    "statuses": [HTTP statuses of the requests to URL, in order],
//    "again": {"is_error", "text", "reauthorized": bool} (with --again-after)}
// With --expect-forbidden: {"ok": true, "forbidden": true, "login": ..., "status": 403,
//    "token": {...}, "error": "<what the SDK raised>"}.
// On any failure: one JSON line {"ok": false, "error": "..."} and exit 1 (2 for bad usage).
// Diagnostics go to stderr.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback'; // never contacted
const MAX_LOGIN_HOPS = 20;

class CheckFailed extends Error {}

function out(obj, code) {
  process.stdout.write(`${JSON.stringify(obj)}\n`, () => process.exit(code));
}

function log(message) {
  process.stderr.write(`oauth_check.mjs: ${message}\n`);
}

function parseArgs(argv) {
  const args = {
    url: undefined, login: undefined, tool: undefined, callArgs: {}, expectForbidden: false, againAfter: undefined,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new CheckFailed(`${a} needs a value`);
      i += 1;
      return argv[i];
    };
    if (a === '--login') args.login = value();
    else if (a === '--tool') args.tool = value();
    else if (a === '--args') {
      const raw = value();
      try {
        args.callArgs = JSON.parse(raw);
      } catch (e) {
        throw new CheckFailed(`--args must be a JSON object: ${e.message}`);
      }
      if (!args.callArgs || typeof args.callArgs !== 'object' || Array.isArray(args.callArgs)) {
        throw new CheckFailed('--args must be a JSON object');
      }
    } else if (a === '--again-after') {
      args.againAfter = Number(value());
      if (!Number.isFinite(args.againAfter) || args.againAfter < 0) throw new CheckFailed('--again-after needs seconds');
    } else if (a === '--expect-forbidden') args.expectForbidden = true;
    else if (a.startsWith('--')) throw new CheckFailed(`unknown option ${a}`);
    else if (args.url === undefined) args.url = a;
    else throw new CheckFailed(`unexpected argument ${a}`);
  }
  if (!args.url || !args.login) {
    throw new CheckFailed('usage: oauth_check.mjs URL --login ACCOUNT [--tool NAME] [--args JSON] [--expect-forbidden]');
  }
  return args;
}

function jwtClaims(token) {
  const parts = String(token || '').split('.');
  if (parts.length !== 3) return {};
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    const keep = ['sub', 'aud', 'scope', 'groups', 'client_id', 'exp', 'iss'];
    return Object.fromEntries(keep.filter((k) => k in claims).map((k) => [k, claims[k]]));
  } catch {
    return {};
  }
}

// The SDK's rule for a PRM resource (RFC 8707 / 9728): same origin, path prefix.
function resourceAllowed(serverUrl, resource) {
  let s;
  let r;
  try {
    s = new URL(serverUrl);
    r = new URL(resource);
  } catch {
    return false;
  }
  if (s.origin !== r.origin) return false;
  const withSlash = (p) => (p.endsWith('/') ? p : `${p}/`);
  return withSlash(s.pathname).startsWith(withSlash(r.pathname));
}

async function checkServerSide(url) {
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth_check-probe', version: '1' } },
    }),
  });
  await response.body?.cancel();
  if (response.status !== 401) throw new CheckFailed(`an unauthenticated POST to ${url} answered ${response.status}, not 401`);
  const challenge = response.headers.get('www-authenticate') || '';
  if (!/^bearer/i.test(challenge)) throw new CheckFailed(`the 401 has no Bearer WWW-Authenticate challenge: ${JSON.stringify(challenge)}`);
  const found = /resource_metadata="([^"]+)"/.exec(challenge);
  if (!found) throw new CheckFailed(`the 401's WWW-Authenticate has no resource_metadata: ${JSON.stringify(challenge)}`);
  const prmUrl = found[1];
  const prmResponse = await fetch(prmUrl, { redirect: 'manual' });
  const body = await prmResponse.text();
  if (prmResponse.status !== 200) throw new CheckFailed(`resource_metadata ${prmUrl} answered ${prmResponse.status}`);
  let prm;
  try {
    prm = JSON.parse(body);
  } catch {
    throw new CheckFailed(`resource_metadata ${prmUrl} is not JSON: ${JSON.stringify(body.slice(0, 200))}`);
  }
  if (typeof prm.resource !== 'string' || !resourceAllowed(url, prm.resource)) {
    throw new CheckFailed(`the PRM's resource ${JSON.stringify(prm.resource)} does not match the server URL ${url}`);
  }
  if (!Array.isArray(prm.authorization_servers) || prm.authorization_servers.length === 0) {
    throw new CheckFailed(`the PRM has no authorization_servers: ${body}`);
  }
  log(`401 names ${prmUrl}; resource ${prm.resource}; authorization server ${prm.authorization_servers[0]}`);
  return prm;
}

// A browser with a cookie jar (one origin, no path scoping needed for the provider's cookies).
class ScriptedBrowser {
  constructor() {
    this.cookies = new Map();
  }

  async request(url, init = {}) {
    const headers = new Headers(init.headers || {});
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) {
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
    }
    return response;
  }
}

async function scriptedLogin(authorizationUrl, account) {
  const browser = new ScriptedBrowser();
  let url = authorizationUrl;
  let response = await browser.request(url);
  for (let hop = 0; hop < MAX_LOGIN_HOPS; hop += 1) {
    if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
      await response.body?.cancel();
      url = new URL(response.headers.get('location'), url).href;
      if (url.startsWith(REDIRECT_URI)) return new URL(url).searchParams;
      response = await browser.request(url);
      continue;
    }
    const text = await response.text();
    if (response.status === 200 && text.includes('<form')) {
      const action = /<form[^>]*action="([^"]+)"/.exec(text);
      if (!action) throw new CheckFailed(`login page at ${url} has a form without action`);
      url = new URL(action[1], url).href;
      response = await browser.request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ login: account }).toString(),
      });
      continue;
    }
    throw new CheckFailed(`scripted login as ${account}: ${url} answered ${response.status}: ${text.slice(0, 400)}`);
  }
  throw new CheckFailed(`scripted login: more than ${MAX_LOGIN_HOPS} redirects`);
}

async function main() {
  const modules = process.env.TOOLGATE_NODE_MODULES;
  if (!modules) throw new CheckFailed('TOOLGATE_NODE_MODULES is not set (run `bash .ci/tools.sh` and export what it prints)');
  const sdk = (rel) => import(pathToFileURL(join(modules, '@modelcontextprotocol/sdk/dist/esm', rel)).href);
  const { Client } = await sdk('client/index.js');
  const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
  const { UnauthorizedError } = await sdk('client/auth.js');

  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    out({ ok: false, error: e.message }, 2);
    return;
  }

  const prm = await checkServerSide(args.url);

  const expectedState = `st-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  const store = { tokens: undefined, client: undefined, verifier: undefined, discovery: undefined };
  let callback;
  let authorizations = 0;
  const authProvider = {
    get redirectUrl() { return REDIRECT_URI; },
    get clientMetadata() {
      return {
        client_name: 'toolgate oauth_check.mjs (MCP TypeScript SDK)',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },
    state: () => expectedState,
    clientInformation: () => store.client,
    saveClientInformation: (info) => { store.client = info; },
    tokens: () => store.tokens,
    saveTokens: (tokens) => { store.tokens = tokens; },
    saveCodeVerifier: (v) => { store.verifier = v; },
    codeVerifier: () => {
      if (!store.verifier) throw new CheckFailed('no PKCE code verifier saved');
      return store.verifier;
    },
    saveDiscoveryState: (s) => { store.discovery = s; },
    discoveryState: () => store.discovery,
    invalidateCredentials: (scope) => {
      if (scope === 'all' || scope === 'client') store.client = undefined;
      if (scope === 'all' || scope === 'tokens') store.tokens = undefined;
      if (scope === 'all' || scope === 'verifier') store.verifier = undefined;
      if (scope === 'all' || scope === 'discovery') store.discovery = undefined;
    },
    async redirectToAuthorization(authorizationUrl) {
      authorizations += 1;
      const p = authorizationUrl.searchParams;
      log(`authorize: resource=${p.get('resource')} scope=${p.get('scope')} code_challenge_method=${p.get('code_challenge_method')}`);
      callback = await scriptedLogin(authorizationUrl.href, args.login);
    },
  };

  const statuses = [];
  const recordingFetch = async (input, init) => {
    const response = await fetch(input, init);
    const target = typeof input === 'string' ? input : input.href ?? input.url;
    if (String(target).split('?')[0] === args.url) statuses.push(response.status);
    return response;
  };

  const newClient = () => new Client({ name: 'toolgate-oauth-check-ts', version: '1.0.0' });
  const newTransport = () => new StreamableHTTPClientTransport(new URL(args.url), { authProvider, fetch: recordingFetch });

  let client = newClient();
  let transport = newTransport();
  const report = {
    ok: true,
    login: args.login,
    issuer: undefined,
    resource: prm.resource,
    scopes_supported: prm.scopes_supported ?? null,
  };
  try {
    try {
      await client.connect(transport);
      throw new CheckFailed('the session worked without the SDK ever authorizing: the server did not ask for a token');
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
    }
    if (!callback) throw new CheckFailed('the SDK raised UnauthorizedError without sending the user to authorize');
    if (callback.get('error')) {
      throw new CheckFailed(`authorization failed: ${callback.get('error')}: ${callback.get('error_description') || ''}`);
    }
    if (callback.get('state') !== expectedState) {
      throw new CheckFailed(`state mismatch: sent ${expectedState}, got ${callback.get('state')}`);
    }
    const issuer = store.discovery?.authorizationServerMetadata?.issuer;
    report.issuer = issuer;
    if (callback.get('iss') !== null && callback.get('iss') !== issuer) {
      throw new CheckFailed(`RFC 9207 iss ${callback.get('iss')} is not the authorization server's issuer ${issuer}`);
    }
    if (!callback.get('code')) throw new CheckFailed('the redirect to the client carries no code');
    await transport.finishAuth(callback.get('code'));
    if (!store.tokens?.access_token) throw new CheckFailed('finishAuth stored no access token');
    report.token = jwtClaims(store.tokens.access_token);
    await transport.close().catch(() => {});

    client = newClient();
    transport = newTransport();
    await client.connect(transport);
    const tools = await client.listTools();
    report.tools = tools.tools.length;
    report.tool_names = tools.tools.map((t) => t.name);
    if (args.tool) {
      const result = await client.callTool({ name: args.tool, arguments: args.callArgs });
      report.tool = args.tool;
      report.is_error = Boolean(result.isError);
      report.text = (result.content || []).map((c) => c.text ?? '').join('');
      report.structured = result.structuredContent ?? null;
      if (args.againAfter !== undefined) {
        await new Promise((resolve) => { setTimeout(resolve, args.againAfter * 1000); });
        const before = authorizations;
        callback = undefined;
        let again;
        try {
          again = await client.callTool({ name: args.tool, arguments: args.callArgs });
        } catch (e) {
          if (!(e instanceof UnauthorizedError) || !callback?.get('code')) throw e;
          if (callback.get('state') !== expectedState) throw new CheckFailed('state mismatch on re-authorization');
          await transport.finishAuth(callback.get('code'));
          await transport.close().catch(() => {});
          client = newClient();
          transport = newTransport();
          await client.connect(transport);
          again = await client.callTool({ name: args.tool, arguments: args.callArgs });
        }
        report.again = {
          is_error: Boolean(again.isError),
          text: (again.content || []).map((c) => c.text ?? '').join(''),
          reauthorized: authorizations > before,
        };
      }
    }
    report.authorizations = authorizations;
    report.statuses = statuses;
  } catch (e) {
    if (e instanceof CheckFailed) throw e;
    const failure = `${e?.constructor?.name || 'Error'}: ${e?.message || e}`;
    if (args.expectForbidden && statuses.includes(403)) {
      if (!store.tokens?.access_token) throw new CheckFailed(`403 came before any token was issued: ${failure}`);
      await transport.close().catch(() => {});
      return {
        ok: true, forbidden: true, login: args.login, status: 403, token: jwtClaims(store.tokens.access_token), error: failure,
      };
    }
    throw new CheckFailed(`MCP session failed (HTTP statuses seen at ${args.url}: ${JSON.stringify(statuses)}): ${failure}`);
  } finally {
    await transport.close().catch(() => {});
  }
  if (authorizations === 0) throw new CheckFailed('the SDK never sent the user to authorize');
  if (args.expectForbidden) {
    throw new CheckFailed(`expected HTTP 403, but the session worked (statuses ${JSON.stringify(statuses)}): ${JSON.stringify(report)}`);
  }
  return report;
}

main().then(
  (report) => { if (report) out(report, 0); },
  (e) => out({ ok: false, error: e instanceof CheckFailed ? e.message : `${e?.constructor?.name || 'Error'}: ${e?.message || e}` }, 1),
);
