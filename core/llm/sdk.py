"""Mapping the official SDKs' exceptions (openai, anthropic: the same shape) onto ragassay's retry policy."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .retry import RetryableError, status_error


def api_message(exc: Any) -> str:
    """The provider's error message from an SDK exception (its JSON body if any), at most 300 characters."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
    return str(getattr(exc, "message", "") or exc)[:300]


@contextlib.contextmanager
def sdk_errors(sdk: Any, timeout_s: float) -> Iterator[None]:
    """Turn ``sdk``'s status, timeout, connection and validation errors into RetryableError/ProviderError."""
    try:
        yield
    except sdk.APIStatusError as exc:
        raise status_error(exc.status_code, api_message(exc), exc.response.headers) from None
    except sdk.APITimeoutError:
        raise RetryableError(f"no response within {timeout_s:g} s (timeout)") from None
    except sdk.APIConnectionError as exc:
        raise RetryableError(f"connection error: {exc}") from None
    except (ValueError, sdk.APIResponseValidationError) as exc:
        raise RetryableError(f"malformed response: {str(exc)[:200]}") from None
    except Exception as exc:
        if type(exc).__module__.startswith("httpx"):  # transport errors inside a stream
            raise RetryableError(f"connection error: {type(exc).__name__}: {exc}") from None
        raise
