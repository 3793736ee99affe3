"""OAuth 2.1 against an MCP server through the official MCP Python SDK (`mcp` 2.x).

The SDK's own OAuth client (`mcp.client.auth.OAuthClientProvider`) does the whole
dance the MCP authorization spec (2025-11-25) asks of a client: the server's 401
with `WWW-Authenticate: Bearer resource_metadata=...`, RFC 9728 Protected
Resource Metadata, RFC 8414 / OpenID discovery of the authorization server,
RFC 7591 dynamic client registration, the authorization code grant with PKCE and
an RFC 8707 `resource`, then the MCP requests with the bearer token. The user's
part (the browser) is a scripted login over plain HTTP against the test identity
provider (crates/toolgate/tests/oidc/provider.mjs): follow the authorization URL,
POST `login=<account>` to its login form, follow the redirects until the one to
our redirect_uri, and hand its code, state and iss to the SDK's callback.

Before the SDK runs, the script checks the server's side by hand so that a
failure says what is wrong: an unauthenticated POST must answer 401 whose
WWW-Authenticate names `resource_metadata`, and that document must be JSON whose
`resource` is the server URL (the SDK's rule: same origin, URL path under the
resource's path) and whose `authorization_servers` is not empty.

Usage:
  oauth_check.py URL --login ACCOUNT [--tool NAME] [--args JSON] [--again-after SECONDS]
                 [--expect-forbidden]

  URL                 the MCP endpoint, e.g. http://127.0.0.1:PORT/mcp
  --login ACCOUNT     the identity provider's account to log in as (alice, bob, ...)
  --tool NAME         after listing the tools, call this one (default: list only)
  --args JSON         the call's arguments, a JSON object (default {})
  --again-after S     after the call, wait S seconds and call the tool again in the same
                      session (for tokens that expire: the SDK refreshes the token before
                      sending, or re-authorizes on the server's 401)
  --expect-forbidden  the login succeeds, but the MCP session must then be refused with
                      HTTP 403 (initialize, list or call); exit 0 only then

Prints one JSON line on stdout, then exits 0:
  {"ok": true, "login": ACCOUNT, "issuer": ..., "resource": ..., "scopes_supported": [...],
   "token": {"sub", "aud", "scope", "groups", "client_id", "exp"}   (claims, never the token),
   "tools": N, "tool_names": [...], "tool": NAME, "is_error": bool, "text": "...",
   "structured": {...} | null, "authorizations": N (scripted logins), "refreshes": N,
   "statuses": [HTTP statuses of the requests to URL, in order],
   "again": {"is_error", "text"} (with --again-after)}
With --expect-forbidden: {"ok": true, "forbidden": true, "login": ..., "status": 403, "token": {...},
   "error": "<what the SDK raised>"}.
On any failure: one JSON line {"ok": false, "error": "..."} and exit 1 (2 for bad usage).
Diagnostics go to stderr.
"""

import argparse
import base64
import json
import re
import sys
from typing import Any
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

# Never contacted: the scripted login catches the redirect to it.
REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"
MAX_LOGIN_HOPS = 20


class CheckFailed(Exception):
    """A check failed; the message says which and what was seen."""


def log(message: str) -> None:
    print(f"oauth_check: {message}", file=sys.stderr, flush=True)


class MemoryStorage:
    """In-memory `TokenStorage` for one run."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def jwt_claims(token: str) -> dict[str, Any]:
    """The claims of a JWT access token, unverified (for the report only); {} if not a JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return {}
    keep = ("sub", "aud", "scope", "groups", "client_id", "exp", "iss")
    return {k: claims[k] for k in keep if k in claims}


class ScriptedLogin:
    """The user's browser: logs in as `account` and catches the redirect to REDIRECT_URI."""

    def __init__(self, account: str) -> None:
        self.account = account
        self.result: AuthorizationCodeResult | None = None
        self.authorizations = 0

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorizations += 1
        self.result = None
        params = parse_qs(urlparse(authorization_url).query)
        log(f"authorize: resource={params.get('resource')} scope={params.get('scope')}")
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
            url = authorization_url
            response = await browser.get(url)
            for _ in range(MAX_LOGIN_HOPS):
                if response.is_redirect:
                    url = urljoin(str(response.url), response.headers["location"])
                    if url.startswith(REDIRECT_URI):
                        self.result = self._callback(url)
                        return
                    response = await browser.get(url)
                    continue
                if response.status_code == 200 and "<form" in response.text:
                    action = re.search(r'<form[^>]*action="([^"]+)"', response.text)
                    if not action:
                        raise CheckFailed(f"login page at {url} has a form without action")
                    url = urljoin(str(response.url), action.group(1))
                    response = await browser.post(url, data={"login": self.account})
                    continue
                raise CheckFailed(
                    f"scripted login as {self.account}: {response.request.method} {url} answered "
                    f"{response.status_code}: {response.text[:400]}"
                )
            raise CheckFailed(f"scripted login: more than {MAX_LOGIN_HOPS} redirects")

    @staticmethod
    def _callback(url: str) -> AuthorizationCodeResult:
        query = parse_qs(urlparse(url).query)
        if "error" in query:
            raise CheckFailed(
                f"authorization failed: {query['error'][0]}: {query.get('error_description', [''])[0]}"
            )
        if "code" not in query:
            raise CheckFailed(f"redirect to the client carries no code: {url}")
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )

    async def callback_handler(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise CheckFailed("the scripted login produced no authorization code")
        return self.result


async def check_server_side(url: str) -> dict[str, Any]:
    """The 401 and the Protected Resource Metadata, checked by hand; returns the PRM."""
    async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as http:
        probe = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "oauth_check-probe", "version": "1"},
            },
        }
        response = await http.post(
            url, json=probe, headers={"Accept": "application/json, text/event-stream"}
        )
        if response.status_code != 401:
            raise CheckFailed(f"an unauthenticated POST to {url} answered {response.status_code}, not 401")
        challenge = response.headers.get("www-authenticate", "")
        if not challenge.lower().startswith("bearer"):
            raise CheckFailed(f"the 401 has no Bearer WWW-Authenticate challenge: {challenge!r}")
        found = re.search(r'resource_metadata="([^"]+)"', challenge)
        if not found:
            raise CheckFailed(f"the 401's WWW-Authenticate has no resource_metadata: {challenge!r}")
        prm_url = found.group(1)
        prm_response = await http.get(prm_url)
        if prm_response.status_code != 200:
            raise CheckFailed(f"resource_metadata {prm_url} answered {prm_response.status_code}")
        try:
            prm = prm_response.json()
        except ValueError:
            raise CheckFailed(f"resource_metadata {prm_url} is not JSON: {prm_response.text[:200]!r}") from None
        resource = prm.get("resource")
        expected = resource_url_from_server_url(url)
        if not isinstance(resource, str) or not check_resource_allowed(
            requested_resource=expected, configured_resource=resource
        ):
            raise CheckFailed(f"the PRM's resource {resource!r} does not match the server URL {expected}")
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers:
            raise CheckFailed(f"the PRM has no authorization_servers: {prm}")
        log(f"401 names {prm_url}; resource {resource}; authorization server {servers[0]}")
        return prm


async def run(args: argparse.Namespace) -> dict[str, Any]:
    prm = await check_server_side(args.url)

    login = ScriptedLogin(args.login)
    storage = MemoryStorage()
    oauth = OAuthClientProvider(
        server_url=args.url,
        client_metadata=OAuthClientMetadata(
            client_name="toolgate oauth_check (mcp Python SDK)",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=login.redirect_handler,
        callback_handler=login.callback_handler,
    )

    statuses: list[int] = []
    refreshes = 0

    async def on_response(response: httpx2.Response) -> None:
        nonlocal refreshes
        if str(response.request.url).split("?")[0] == args.url:
            statuses.append(response.status_code)
        elif response.request.method == "POST" and b"grant_type=refresh_token" in response.request.content:
            refreshes += 1

    http = create_mcp_http_client(auth=oauth)
    http.event_hooks["response"].append(on_response)

    report: dict[str, Any] = {
        "ok": True,
        "login": args.login,
        "issuer": None,
        "resource": prm.get("resource"),
        "scopes_supported": prm.get("scopes_supported"),
    }
    try:
        async with http, streamable_http_client(args.url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                report["tools"] = len(tools.tools)
                report["tool_names"] = [t.name for t in tools.tools]
                if args.tool:
                    result = await session.call_tool(args.tool, args.call_args)
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    report.update(
                        tool=args.tool,
                        is_error=bool(result.is_error),
                        text=text,
                        structured=result.structured_content,
                    )
                    if args.again_after is not None:
                        await anyio.sleep(args.again_after)
                        again = await session.call_tool(args.tool, args.call_args)
                        report["again"] = {
                            "is_error": bool(again.is_error),
                            "text": "".join(getattr(c, "text", "") for c in again.content),
                        }
    except CheckFailed:
        raise
    except BaseException as e:  # the SDK wraps failures of its tasks in exception groups
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        failure = describe(e)
        if args.expect_forbidden and 403 in statuses:
            token = storage.tokens.access_token if storage.tokens else ""
            if not token:
                raise CheckFailed(f"403 came before any token was issued: {failure}") from None
            return {
                "ok": True,
                "forbidden": True,
                "login": args.login,
                "status": 403,
                "token": jwt_claims(token),
                "error": failure,
            }
        raise CheckFailed(f"MCP session failed (HTTP statuses seen at {args.url}: {statuses}): {failure}") from None

    if login.authorizations == 0 or storage.tokens is None:
        raise CheckFailed("the session worked without the SDK ever authorizing: the server did not ask for a token")
    report["issuer"] = str(oauth.context.oauth_metadata.issuer) if oauth.context.oauth_metadata else None
    report["token"] = jwt_claims(storage.tokens.access_token)
    report["authorizations"] = login.authorizations
    report["refreshes"] = refreshes
    report["statuses"] = statuses
    if args.expect_forbidden:
        raise CheckFailed(f"expected HTTP 403, but the session worked (statuses {statuses}): {json.dumps(report)}")
    return report


def describe(e: BaseException) -> str:
    """The innermost messages of an exception (group)."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in e.exceptions)
    text = str(e) or type(e).__name__
    return f"{type(e).__name__}: {text}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--login", required=True)
    parser.add_argument("--tool")
    parser.add_argument("--args", default="{}")
    parser.add_argument("--again-after", type=float)
    parser.add_argument("--expect-forbidden", action="store_true")
    args = parser.parse_args()
    try:
        args.call_args = json.loads(args.args)
        if not isinstance(args.call_args, dict):
            raise ValueError("not an object")
    except ValueError as e:
        print(json.dumps({"ok": False, "error": f"--args must be a JSON object: {e}"}))
        return 2
    try:
        report = anyio.run(run, args)
    except CheckFailed as e:
        print(json.dumps({"ok": False, "error": str(e)}), flush=True)
        return 1
    except Exception as e:
        print(json.dumps({"ok": False, "error": describe(e)}), flush=True)
        return 1
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
