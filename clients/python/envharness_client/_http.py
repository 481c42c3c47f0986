"""HTTP/1.1 without I/O, shared by the sync and asyncio clients: request bytes, answer heads, answer bodies as JSON."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple

from .errors import EnvHarnessError, error_from_problem

# One encoder for every request body (json.dumps with options builds a new one per call).
encode_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode

#: Largest answer head the clients read.
MAX_HEAD = 64 * 1024


def check_header(name: str, value: str) -> str:
    """``value``, unless the header could split the request (CR/LF, a colon in the name): ValueError."""
    if "\r" in value or "\n" in value or "\r" in name or "\n" in name or ":" in name:
        raise ValueError(f"invalid header {name!r}: {value!r}")
    return value


def encode_request(method: str, path: str, host: str, token: str, headers: Optional[Dict[str, str]], body: Any) -> bytes:
    """The whole request (head and JSON body) as bytes, ready for one write."""
    if any(c in path for c in " \r\n") or not path.startswith("/"):
        raise ValueError(f"invalid request path {path!r}")
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nAccept: application/json\r\n"
    if headers:
        for name, value in headers.items():
            head += f"{name}: {check_header(name, value)}\r\n"
    if body is None:
        return (head + "\r\n").encode("latin-1")
    payload = encode_json(body).encode("utf-8")
    return (head + f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n").encode("latin-1") + payload


def parse_head(head: bytes) -> Tuple[int, Dict[str, str], bool]:
    """``(status, headers with lower-case names, will_close)`` of an answer head (without its blank line)."""
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    try:
        status = int(rest[:3])
    except ValueError:
        raise ConnectionError(f"not an HTTP answer: {lines[0][:100]!r}") from None
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    connection = headers.get("connection", "").lower()
    will_close = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")
    return status, headers, will_close


def body_length(status: int, headers: Dict[str, str]) -> Optional[int]:
    """How the body is framed: its length in bytes (0 for 204/304), -1 when chunked, None when it runs to the end of the connection."""
    if status in (204, 304):
        return 0
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return -1
    length = headers.get("content-length")
    return None if length is None else int(length)


def decode_answer(status: int, data: bytes) -> Any:
    """The parsed JSON answer; a problem answer (status >= 400) raises its typed ``EnvHarnessError``."""
    try:
        value = json.loads(data.decode("utf-8")) if data else None
    except ValueError:
        value = None
    if status >= 400:
        if not isinstance(value, dict):
            raise EnvHarnessError(f"HTTP {status}: {data[:200]!r}", status=status)
        raise error_from_problem(status, value)
    return value
