"""Whether a host name or address stays on this machine: the one answer the lab's bind checks,
request guard and outside-server rules all rely on."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback IP (127.0.0.0/8, ::1); any other name is not trusted to be."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
