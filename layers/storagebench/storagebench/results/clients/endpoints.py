"""A client as fio's ``--client=`` names it, and the label records carry for it."""

from __future__ import annotations

import re
from dataclasses import dataclass

FIO_DEFAULT_PORT = 8765
"""fio's client/server port when the connect string names none (``fio --server`` listens there)."""
_TYPE_PREFIX = re.compile(r"^(ip|ip4|ip6):", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class ClientEndpoint:
    """A fio server as fio's client reports it: ``hostname`` (as given on ``--client``) and ``port``."""

    host: str
    port: int

    @property
    def label(self) -> str:
        """``host:port`` (``[v6]:port``): what a per-client record's ``client`` holds."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_client(text: str) -> ClientEndpoint:
    """A ``--client`` connect string: ``host``, ``host,port`` or ``ip:``/``ip6:`` before either.

    ValueError naming the value and what is allowed otherwise (``sock:`` paths are not network
    clients, and a multi-client step's clients are machines).
    """
    value = text.strip()
    if not value or value.lower().startswith("sock:"):
        raise ValueError(
            f"client {text!r}: expected host, host,port or ip:/ip6: before either (a fio --client "
            "connect string naming a machine)"
        )
    value = _TYPE_PREFIX.sub("", value)
    host, comma, port_text = value.rpartition(",")
    if not comma:
        host, port = value, FIO_DEFAULT_PORT
    elif port_text.isdigit() and 1 <= int(port_text) <= 65535:
        port = int(port_text)
    else:
        raise ValueError(f"client {text!r}: port {port_text!r} is not 1..65535")
    if not host or "," in host:
        raise ValueError(f"client {text!r}: expected host, host,port or ip:/ip6: before either")
    return ClientEndpoint(host=host, port=port)
