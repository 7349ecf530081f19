"""CSRF protection of the labelling POSTs: a per-session token, signed with itsdangerous.

The first labelling page a browser opens gets a random session id in an HttpOnly, SameSite=Strict cookie; every
form carries the session id signed with the app's secret (random per process, so a restarted app asks for a
reload). A POST is accepted only when its form token is a valid signature of the session id in its cookie: a
page elsewhere can make the browser send the cookie, but cannot read a form token to send with it.
"""

from __future__ import annotations

import hmac
import secrets

COOKIE = "ragassay_label_session"
SALT = "ragassay-label-csrf"
MAX_AGE_S = 7 * 24 * 3600  # a labelling session may stay open for days


class Csrf:
    """Issue and check the CSRF tokens of one app."""

    def __init__(self, secret: bytes | None = None):
        from itsdangerous import URLSafeTimedSerializer

        self._serializer = URLSafeTimedSerializer(secret or secrets.token_bytes(32), salt=SALT)

    @staticmethod
    def session_of(request) -> tuple[str, bool]:
        """The request's session id, and whether it is new (then set it with :meth:`set_cookie`)."""
        current = request.cookies.get(COOKIE, "")
        if len(current) == 32 and current.isalnum():
            return current, False
        return secrets.token_hex(16), True

    def token(self, session: str) -> str:
        """The form token of ``session``."""
        return self._serializer.dumps(session)

    @staticmethod
    def set_cookie(response, session: str) -> None:
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict")

    def refusal(self, request, form_token: str | None) -> str | None:
        """Why a POST is refused (None: it carries this session's token)."""
        from itsdangerous import BadSignature, SignatureExpired

        session = request.cookies.get(COOKIE)
        if not form_token or not session:
            return "the form carries no CSRF token or the browser no labelling session; reload the page"
        try:
            signed = self._serializer.loads(form_token, max_age=MAX_AGE_S)
        except SignatureExpired:
            return "the page is too old; reload it"
        except BadSignature:
            return "the CSRF token is not valid (was the labelling app restarted?); reload the page"
        if not isinstance(signed, str) or not hmac.compare_digest(signed, session):
            return "the CSRF token belongs to another session; reload the page"
        return None
