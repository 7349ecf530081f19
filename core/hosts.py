"""Host names of the local servers (``serve``, ``label``, ``traces receive``): whether a bind address or a
request's ``Host`` is this machine alone. A server bound to loopback answers only requests addressed to a loopback
name, so a web page cannot reach it through a DNS name it rebinds to 127.0.0.1.
"""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the app on this machine (127.0.0.0/8, ::1, localhost), the short IPv4 forms
    the system reads too (``127.1`` is 127.0.0.1)."""
    import socket

    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    if not name or not set(name) <= set("0123456789abcdefx."):  # what inet_aton reads, and nothing after it
        return False
    try:
        return ipaddress.IPv4Address(socket.inet_aton(name)).is_loopback
    except (OSError, ValueError):
        return False


def host_name(header: str) -> str:
    """The host name of a ``Host`` header value, without the port (IPv6 brackets removed)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header
