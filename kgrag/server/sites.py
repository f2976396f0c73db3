"""Which sites may talk to the service. The ``Host`` a request names and the ``Origin`` a browser adds must be the
service's own: the address the request reached (with ``localhost``, ``127.0.0.1`` and ``[::1]`` when that
address is a loopback one), or a name in ``allowed_hosts``. A page of another site then can neither write to an
open service (a browser sends the page's Origin with a cross-site POST) nor read it through a name of its own
that resolves to this machine (DNS rebinding: the Host is then that name).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
DEFAULT_PORTS = {"http": 80, "https": 443}


def name_and_port(netloc: str, scheme: str | None = None) -> tuple[str, int | None] | None:
    """``name[:port]`` (a name, an IPv4 or a bracketed IPv6 address) as (lowercase name, port); without a port,
    the scheme's default (None without a scheme); None when it does not parse."""
    try:
        parts = urlsplit(f"//{netloc.strip()}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.path or parts.query:
        return None
    return parts.hostname.rstrip("."), port if port is not None else DEFAULT_PORTS.get(scheme or "")


def is_address(text: str) -> bool:
    """Whether ``text`` is an IP address (not a name)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def is_loopback(address: str) -> bool:
    return is_address(address) and ipaddress.ip_address(address).is_loopback


def allowed(site: tuple[str, int | None], own: tuple[str, int] | None, extra: list[str]) -> bool:
    """Whether ``site`` (name, port) is the service's own address (``own``) or one of ``extra`` ("name" for any
    port, "name:port", or "*" for any site)."""
    name, port = site
    if own is not None and port == own[1]:
        if name == own[0] or (is_loopback(own[0]) and name in LOOPBACK_NAMES):
            return True
    for entry in extra:
        if entry.strip() == "*":
            return True
        listed = name_and_port(entry)
        if listed is not None and listed[0] == name and listed[1] in (None, port):
            return True
    return False


def refusal(
    headers: Mapping[str, str], scheme: str, own: tuple[str, int] | None, extra: list[str]
) -> tuple[int, str] | None:
    """Why a request is refused (status, message), or None when its Host and Origin are the service's own."""
    host = headers.get("host")
    if host is not None:
        site = name_and_port(host, scheme)
        if site is None or not allowed(site, own, extra):
            return 400, f"this service does not answer to the host {host!r} (the allowed_hosts setting adds names)"
    origin = headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        site = name_and_port(parts.netloc, parts.scheme) if parts.scheme in DEFAULT_PORTS else None
        if site is None or not allowed(site, own, extra):
            return 403, f"requests from the site {origin!r} are refused (the allowed_hosts setting adds sites)"
    return None
