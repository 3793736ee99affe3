// The real identity provider of toolgate's OAuth tests: panva's `oidc-provider`
// (npm, installed by `.ci/tools.sh` under $TOOLGATE_NODE_MODULES), configured
// as an OAuth 2.1 / OpenID Connect authorization server for MCP.
//
// Start:
//   TOOLGATE_NODE_MODULES=... node crates/toolgate/tests/oidc/provider.mjs
// It listens on 127.0.0.1 on an ephemeral port and, once listening, prints ONE
// line of JSON to stdout:
//   {"issuer":"http://127.0.0.1:PORT","port":PORT,"token_endpoint":"...","jwks_uri":"...",
//    "registration_endpoint":"...","stats_url":"http://127.0.0.1:PORT/test/stats"}
// The issuer string has no trailing slash; it is exactly the `iss` of every
// token and the `issuer` of /.well-known/openid-configuration (and of
// /.well-known/oauth-authorization-server, served too).
// It exits when its stdin closes (so it never outlives the test that spawned
// it with a piped stdin), and on SIGTERM/SIGINT. By hand: `tail -f /dev/null | node provider.mjs`.
// Diagnostics go to stderr (oidc-provider warns once that Node.js 20 is not
// its preferred runtime; it runs on it).
//
// Environment (all optional):
//   OIDC_ACCOUNTS             JSON object {"<account>": {"groups": [...]}, ...} replacing the accounts below
//   OIDC_TOOLGATE_SECRET      client secret of the static client `toolgate` (default "toolgate-secret")
//   OIDC_RESOURCES            comma-separated resource indicators (RFC 8707) the provider issues
//                             JWT access tokens for; an entry ending in `*` is a prefix
//                             (default "http://127.0.0.1*,http://localhost*")
//   OIDC_EXCHANGE_AUDIENCES   comma-separated `audience`/`resource` values a token exchange may
//                             target, same syntax (default: the value of OIDC_RESOURCES)
//   OIDC_SCOPES               the resource scopes (default "tools:read tools:write")
//   OIDC_AT_TTL               access token lifetime in seconds (default 3600)
//   OIDC_SHORT_TTL            access token lifetime of the account `alice-short` (default 2)
//   OIDC_ALG                  JWS algorithm of access tokens: RS256 (default) or ES256
//
// Accounts (default): `alice` groups ["tg-admins"], `bob` groups ["tg-members"],
// `mallory` groups ["nobody"], and `alice-short` groups ["tg-admins"], whose access
// tokens (also those a token exchange issues for her) live OIDC_SHORT_TTL seconds
// (for "expired token" tests).
//
// Clients:
//   - any client may register itself (RFC 7591 dynamic client registration, open, at
//     /reg); PKCE (S256) is required for every authorization code request;
//   - `toolgate`, static, confidential (client_secret_basic, OIDC_TOOLGATE_SECRET), grant
//     types client_credentials and urn:ietf:params:oauth:grant-type:token-exchange;
//   - `toolgate-short`, the same secret, client_credentials only, whose tokens live
//     OIDC_SHORT_TTL seconds (for "expired token" tests).
// Scopes: openid offline_access tools:read tools:write (resource scopes from OIDC_SCOPES).
//
// Access tokens: with a `resource` (RFC 8707) that OIDC_RESOURCES allows, the access
// token is a JWT (RFC 9068, header typ "at+jwt", RS256 by default, key at jwks_uri) with
//   iss, sub (the account), aud (= the resource), client_id, scope (the granted resource
//   scopes, space-separated), groups (the account's groups), iat, exp, jti.
// Without a resource the access token is opaque (usable only at userinfo).
// A client_credentials token has sub = client_id and no groups.
//
// Scripted login (no password, plain HTTP; keep cookies between requests):
//   1. GET the authorization URL; it redirects (303) to /interaction/<uid>.
//   2a. GET /interaction/<uid> answers 200 with a tiny HTML form
//       (<form method="post" action="/interaction/<uid>/login"> with a field `login`);
//       POST `login=<account>` (application/x-www-form-urlencoded) to that action;
//       it redirects back to the authorization endpoint.
//   2b. Or: when the authorization request carried `login_hint=<account>`, the GET of
//       /interaction/<uid> logs that account in at once and redirects.
//   3. Consent is given automatically: a consent interaction redirects at once.
//   4. Follow redirects until one points at the client's redirect_uri: it carries
//      `code`, `state` and `iss` (RFC 9207).
// An unknown account answers 400 with a JSON error (error "unknown_account").
//
// Token exchange (RFC 8693) at the token endpoint, by a client allowed the grant (toolgate):
//   grant_type=urn:ietf:params:oauth:grant-type:token-exchange
//   subject_token=<a JWT access token this provider issued to a user, unexpired>
//   subject_token_type=urn:ietf:params:oauth:token-type:access_token (or ...:jwt)
//   audience=<target> and/or resource=<target> (one distinct value, allowed by OIDC_EXCHANGE_AUDIENCES)
//   scope=<optional, a subset of the subject token's scope; default: the subject token's scope>
//   requested_token_type=<optional, ...:access_token>
// answers {"access_token": JWT, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
//   "token_type": "Bearer", "expires_in": N, "scope": "..."}; the new JWT has the same sub and
//   groups, aud = the target, client_id = the exchanging client, and act = {"sub": <client>}.
// An invalid, expired or foreign subject token is 400 invalid_grant; a target not allowed is
// 400 invalid_target.
//
// Test endpoints (not OAuth):
//   GET  /test/stats        -> {"token_exchange": {"<sub>": n}, "token_exchange_rejected": n,
//                               "grants": {"<grant_type>": n}, "logins": {"<account>": n},
//                               "registrations": n}
//   POST /test/stats/reset  -> 204, all counts back to zero
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.TOOLGATE_NODE_MODULES;
if (!modules) {
  process.stderr.write('provider.mjs: TOOLGATE_NODE_MODULES is not set (run `bash .ci/tools.sh` and export what it prints)\n');
  process.exit(2);
}
const load = (rel) => import(pathToFileURL(join(modules, rel)).href);
const { Provider, errors } = await load('oidc-provider/lib/index.js');
const jose = await load('jose/dist/webapi/index.js');

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

function fail(message) {
  process.stderr.write(`provider.mjs: ${message}\n`);
  process.exit(2);
}

function envInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) fail(`${name} must be a positive integer of seconds, got ${JSON.stringify(raw)}`);
  return n;
}

function patterns(raw) {
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

function allowed(list, value) {
  return typeof value === 'string' && list.some((p) => (p.endsWith('*') ? value.startsWith(p.slice(0, -1)) : value === p));
}

let accounts = {
  alice: { groups: ['tg-admins'] },
  bob: { groups: ['tg-members'] },
  mallory: { groups: ['nobody'] },
  'alice-short': { groups: ['tg-admins'] },
};
if (process.env.OIDC_ACCOUNTS) {
  try {
    accounts = JSON.parse(process.env.OIDC_ACCOUNTS);
  } catch (e) {
    fail(`OIDC_ACCOUNTS is not JSON: ${e.message}`);
  }
  for (const [id, a] of Object.entries(accounts)) {
    if (!a || !Array.isArray(a.groups)) fail(`OIDC_ACCOUNTS: account ${id} needs "groups": [..]`);
  }
}
const SHORT_ACCOUNT = 'alice-short';

const toolgateSecret = process.env.OIDC_TOOLGATE_SECRET || 'toolgate-secret';
const resources = patterns(process.env.OIDC_RESOURCES || 'http://127.0.0.1*,http://localhost*');
const exchangeAudiences = process.env.OIDC_EXCHANGE_AUDIENCES
  ? patterns(process.env.OIDC_EXCHANGE_AUDIENCES)
  : resources;
const resourceScopes = (process.env.OIDC_SCOPES || 'tools:read tools:write').split(/\s+/).filter(Boolean);
const atTtl = envInt('OIDC_AT_TTL', 3600);
const shortTtl = envInt('OIDC_SHORT_TTL', 2);
const alg = process.env.OIDC_ALG || 'RS256';
if (alg !== 'RS256' && alg !== 'ES256') fail(`OIDC_ALG must be RS256 or ES256, got ${JSON.stringify(alg)}`);

// One signing key per run; the public half is at jwks_uri, and the token
// exchange verifies subject tokens against it.
const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
const kid = `tg-${randomBytes(6).toString('hex')}`;
const privateJwk = { ...(await jose.exportJWK(privateKey)), kid, alg, use: 'sig' };
const publicJwks = jose.createLocalJWKSet({ keys: [{ ...(await jose.exportJWK(publicKey)), kid, alg, use: 'sig' }] });

const stats = {};
function resetStats() {
  stats.token_exchange = {};
  stats.token_exchange_rejected = 0;
  stats.grants = {};
  stats.logins = {};
  stats.registrations = 0;
}
resetStats();
const bump = (obj, key) => { obj[key] = (obj[key] || 0) + 1; };

function accessTokenTtl(token) {
  return token?.accountId === SHORT_ACCOUNT ? shortTtl : atTtl;
}

function resourceServerInfo(identifier) {
  return {
    scope: resourceScopes.join(' '),
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg } },
    identifier: () => identifier,
  };
}

// The port is known only once listening, and the issuer must be known before
// the Provider is built: listen first, then hand requests to the provider.
let handler = (_req, res) => { res.statusCode = 503; res.end(); };
const server = createServer((req, res) => handler(req, res));
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', resolve);
});
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'toolgate',
    client_secret: toolgateSecret,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials', TOKEN_EXCHANGE],
    response_types: [],
    redirect_uris: [],
  }, {
    // Client-credentials tokens that expire after OIDC_SHORT_TTL seconds, for expiry tests.
    client_id: 'toolgate-short',
    client_secret: toolgateSecret,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
  }],
  async findAccount(_ctx, id) {
    const account = Object.hasOwn(accounts, id) ? accounts[id] : undefined;
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, groups: account.groups };
      },
    };
  },
  jwks: { keys: [privateJwk] },
  scopes: ['openid', 'offline_access', ...resourceScopes],
  claims: { openid: ['sub', 'groups'] },
  responseTypes: ['code'],
  pkce: { required: () => true },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  clientDefaults: { id_token_signed_response_alg: alg },
  enabledJWA: { idTokenSigningAlgValues: [alg] },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      async getResourceServerInfo(_ctx, resourceIndicator) {
        if (!allowed(resources, resourceIndicator)) {
          throw new errors.InvalidTarget(`resource ${resourceIndicator} is not served by this provider (OIDC_RESOURCES)`);
        }
        return resourceServerInfo(resourceIndicator);
      },
    },
  },
  async extraTokenClaims(_ctx, token) {
    if (!token.accountId) return undefined;
    const account = Object.hasOwn(accounts, token.accountId) ? accounts[token.accountId] : undefined;
    const extra = { groups: account ? account.groups : [] };
    if (token.gty === TOKEN_EXCHANGE) extra.act = { sub: token.clientId };
    return extra;
  },
  ttl: {
    AccessToken: (_ctx, token) => accessTokenTtl(token),
    ClientCredentials: (_ctx, token) => (token.clientId === 'toolgate-short' ? shortTtl : atTtl),
    AuthorizationCode: 60,
    IdToken: 3600,
    RefreshToken: 24 * 3600,
    Interaction: 600,
    Session: 24 * 3600,
    Grant: 24 * 3600,
  },
  interactions: {
    url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
  },
  clientBasedCORS: () => true,
});

provider.on('server_error', (_ctx, err) => process.stderr.write(`provider.mjs: server_error: ${err.stack || err}\n`));
provider.on('grant.success', (ctx) => bump(stats.grants, ctx.oidc.params.grant_type));
provider.on('registration_create.success', () => { stats.registrations += 1; });

// RFC 8693 token exchange.
async function tokenExchange(ctx) {
  const { params, client } = ctx.oidc;
  if (!params.subject_token) throw new errors.InvalidRequest("missing required parameter 'subject_token'");
  if (params.subject_token_type !== AT_TYPE && params.subject_token_type !== JWT_TYPE) {
    throw new errors.InvalidRequest(`subject_token_type must be ${AT_TYPE} or ${JWT_TYPE}`);
  }
  if (params.requested_token_type !== undefined && params.requested_token_type !== AT_TYPE) {
    throw new errors.InvalidRequest(`requested_token_type must be ${AT_TYPE}`);
  }
  if (params.actor_token !== undefined) throw new errors.InvalidRequest('actor_token is not supported');

  const targets = [...new Set([params.audience, params.resource].flat().filter((v) => v !== undefined))];
  if (targets.length !== 1) {
    throw new errors.InvalidTarget('exactly one distinct audience or resource must be requested');
  }
  const [target] = targets;
  if (!allowed(exchangeAudiences, target)) {
    throw new errors.InvalidTarget(`audience ${target} is not allowed for token exchange (OIDC_EXCHANGE_AUDIENCES)`);
  }

  let subject;
  try {
    ({ payload: subject } = await jose.jwtVerify(params.subject_token, publicJwks, {
      issuer, typ: 'at+jwt', algorithms: [alg], requiredClaims: ['sub', 'exp'],
    }));
  } catch (e) {
    stats.token_exchange_rejected += 1;
    throw new errors.CustomOIDCProviderError('invalid_grant', `subject_token is invalid (${e.code || e.name}): it must be an unexpired JWT access token from this provider`);
  }
  if (!Object.hasOwn(accounts, subject.sub)) {
    stats.token_exchange_rejected += 1;
    throw new errors.CustomOIDCProviderError('invalid_grant', 'subject_token does not name a user of this provider');
  }

  const subjectScopes = new Set(typeof subject.scope === 'string' ? subject.scope.split(' ').filter(Boolean) : []);
  let scopes = [...subjectScopes];
  if (params.scope) {
    scopes = params.scope.split(' ').filter(Boolean);
    const extra = scopes.filter((s) => !subjectScopes.has(s));
    if (extra.length) throw new errors.InvalidScope(`scope beyond the subject token's: ${extra.join(' ')}`);
  }

  const token = new provider.AccessToken({
    accountId: subject.sub,
    client,
    gty: TOKEN_EXCHANGE,
    scope: scopes.join(' ') || undefined,
    resourceServer: resourceServerInfo(target),
  });
  ctx.oidc.entity('AccessToken', token);
  const value = await token.save();
  bump(stats.token_exchange, subject.sub);

  ctx.body = {
    access_token: value,
    issued_token_type: AT_TYPE,
    token_type: 'Bearer',
    expires_in: token.expiration,
    ...(token.scope ? { scope: token.scope } : {}),
  };
}
provider.registerGrantType(
  TOKEN_EXCHANGE,
  tokenExchange,
  ['audience', 'resource', 'scope', 'requested_token_type', 'subject_token', 'subject_token_type', 'actor_token', 'actor_token_type'],
  ['audience', 'resource'],
);

async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function jsonError(ctx, status, error, description) {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = { error, error_description: description };
}

async function finishLogin(ctx, account) {
  if (!Object.hasOwn(accounts, account)) {
    jsonError(ctx, 400, 'unknown_account', `no account ${JSON.stringify(account)}; known: ${Object.keys(accounts).join(', ')}`);
    return;
  }
  bump(stats.logins, account);
  await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
  ctx.respond = false;
}

async function autoConsent(ctx, details) {
  const { prompt: { details: missing }, params, session, grantId } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  if (missing.missingResourceScopes) {
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
  }
  const id = await grant.save();
  await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId: id } }, { mergeWithLastSubmission: true });
  ctx.respond = false;
}

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// Interaction routes and test endpoints, in front of the provider's own.
provider.use(async (ctx, next) => {
  const m = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec(ctx.path);
  if (m) {
    let details;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (e) {
      jsonError(ctx, 400, 'invalid_interaction', `interaction not found or expired (keep the cookies of the authorization request): ${e.message}`);
      return;
    }
    if (details.uid !== m[1]) {
      jsonError(ctx, 400, 'invalid_interaction', 'interaction cookie is for another interaction');
      return;
    }
    const prompt = details.prompt.name;
    if (m[2] && ctx.method === 'POST') {
      if (prompt !== 'login') {
        jsonError(ctx, 400, 'invalid_interaction', `this interaction asks for ${prompt}, not login`);
        return;
      }
      const form = await readForm(ctx.req);
      await finishLogin(ctx, form.get('login') || '');
      return;
    }
    if (!m[2] && ctx.method === 'GET') {
      if (prompt === 'consent') {
        await autoConsent(ctx, details);
        return;
      }
      if (prompt === 'login') {
        if (details.params.login_hint) {
          await finishLogin(ctx, details.params.login_hint);
          return;
        }
        ctx.type = 'html';
        ctx.body = `<!doctype html><title>toolgate test login</title>
<form method="post" action="/interaction/${escapeHtml(details.uid)}/login">
<label>account <input name="login" autofocus></label> (${escapeHtml(Object.keys(accounts).join(', '))})
<button type="submit">Sign in</button></form>\n`;
        return;
      }
      jsonError(ctx, 400, 'invalid_interaction', `unsupported prompt ${prompt}`);
      return;
    }
    jsonError(ctx, 405, 'invalid_request', 'GET /interaction/<uid> or POST /interaction/<uid>/login');
    return;
  }
  if (ctx.path === '/test/stats' && ctx.method === 'GET') {
    ctx.type = 'application/json';
    ctx.body = stats;
    return;
  }
  if (ctx.path === '/test/stats/reset' && ctx.method === 'POST') {
    resetStats();
    ctx.status = 204;
    return;
  }
  if (ctx.path === '/.well-known/oauth-authorization-server' && ctx.method === 'GET') {
    // RFC 8414 metadata: the same document as OpenID discovery.
    ctx.path = '/.well-known/openid-configuration';
  }
  await next();
});

handler = provider.callback();

const discovery = {
  issuer,
  port,
  token_endpoint: `${issuer}/token`,
  jwks_uri: `${issuer}/jwks`,
  registration_endpoint: `${issuer}/reg`,
  stats_url: `${issuer}/test/stats`,
};
process.stdout.write(`${JSON.stringify(discovery)}\n`);

function shutdown() {
  server.close();
  server.closeAllConnections?.();
  process.exit(0);
}
process.stdin.on('end', shutdown);
process.stdin.on('close', shutdown);
process.stdin.on('error', shutdown);
process.stdin.resume();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
