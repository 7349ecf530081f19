"""The app's gate: the access token on every request, loopback-only hosts without a token, safe headers.

- With a token (``ragassay serve --token T``, required for a non-loopback bind): every request carries it, as the
  ``token`` query parameter (answered with a redirect to the same URL without it and an HttpOnly, SameSite=Strict
  cookie), the ``X-Ragassay-Token`` header, an ``Authorization: Bearer`` header or that cookie; a missing or
  wrong token is a 403. The cookie is named after the port the app listens on (``ragassay_token_8000``): a
  browser keeps cookies per host name, not per port, so two apps on one host (``serve`` and ``label``) each keep
  their own token instead of overwriting each other's. An empty ``?token=`` is dropped, the cookie kept.
- Without a token (a loopback bind): the ``Host`` of each request must be a loopback name (127.0.0.1,
  localhost, ::1), so a web page cannot reach the app through a DNS name it rebinds to 127.0.0.1.
- Every answer says not to be cached, framed, sniffed or to run any script but the app's own (a
  Content-Security-Policy with ``script-src 'self'``).
"""

from __future__ import annotations

import hmac
from urllib.parse import urlencode

from ...hosts import host_name, is_loopback

COOKIE = "ragassay_token"  # the prefix of the cookie's name: ragassay_token_<port> (cookie_name)
HEADER = "x-ragassay-token"
HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


class Gate:
    """ASGI middleware: the token (or, without one, a loopback ``Host``) on every HTTP request, and the safe
    headers on every answer."""

    def __init__(self, app, token: str | None):
        self.app = app
        self.token = token.encode() if token else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from starlette.requests import Request

        request = Request(scope)
        refusal = self._refusal(request)
        if refusal is not None:
            return await _with_headers(refusal)(scope, receive, send)
        if self.token is not None and "token" in request.query_params and request.method in ("GET", "HEAD"):
            return await _with_headers(_to_cookie(request))(scope, receive, send)
        await self.app(scope, receive, _header_sender(send))

    def _refusal(self, request):
        from starlette.responses import PlainTextResponse

        if self.token is None:
            if is_loopback(host_name(request.headers.get("host", ""))):
                return None
            return PlainTextResponse("forbidden: this app answers only on a loopback host name", status_code=403)
        given = _given(request)
        if given and hmac.compare_digest(given.encode("utf-8", "replace"), self.token):
            return None
        why = "a wrong access token" if given else "no access token"
        return PlainTextResponse(
            f"forbidden: {why}. Open the URL that `ragassay serve` printed (it carries ?token=...).",
            status_code=403,
        )


def cookie_name(scope) -> str:
    """The token cookie of the app answering ``scope``: named after the port it listens on."""
    server = scope.get("server") or ()
    port = server[1] if len(server) > 1 and server[1] is not None else ""
    return f"{COOKIE}_{port}" if port != "" else COOKIE


def _to_cookie(request):
    """A redirect to the request's URL without ``token``; a non-empty (so checked and right) token is kept in the
    app's cookie, an empty one leaves the cookie as it was."""
    from starlette.responses import RedirectResponse

    rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
    target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
    response = RedirectResponse(target, status_code=303)
    if request.query_params["token"]:
        response.set_cookie(cookie_name(request.scope), request.query_params["token"], httponly=True, samesite="strict")
    return response


def _given(request) -> str | None:
    bearer = request.headers.get("authorization", "")
    return (
        request.query_params.get("token")
        or request.headers.get(HEADER)
        or (bearer[7:] if bearer.lower().startswith("bearer ") else None)
        or request.cookies.get(cookie_name(request.scope))
    )


def _header_sender(send):
    async def sender(message):
        if message["type"] == "http.response.start":
            names = {name.lower() for name, _ in message.get("headers", [])}
            message = dict(
                message, headers=list(message.get("headers", [])) + [h for h in HEADERS if h[0] not in names]
            )
        await send(message)

    return sender


def _with_headers(response):
    async def app(scope, receive, send):
        await response(scope, receive, _header_sender(send))

    return app
