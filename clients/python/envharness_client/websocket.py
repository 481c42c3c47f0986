"""A WebSocket client (RFC 6455) on asyncio streams: the handshake, masked frames, ping/pong, fragmentation, close."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import ssl
import struct
from typing import Dict, Optional, Tuple
from urllib.parse import urlsplit

from .errors import EnvHarnessError, TransportError, WebSocketClosedError, error_from_problem

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_TEXT, _BINARY, _CLOSE, _PING, _PONG, _CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


def _mask(payload: bytes, key: bytes) -> bytes:
    """XOR with the 4-byte key, as one big-integer operation (a byte loop is ~50x slower)."""
    n = len(payload)
    if n == 0:
        return payload
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


class WebSocket:
    """One client connection. ``recv`` answers pings itself; a close frame ends it with ``WebSocketClosedError``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_size: int) -> None:
        self._reader = reader
        self._writer = writer
        self._max_size = max_size
        self._closed = False
        self.close_code: Optional[int] = None

    @classmethod
    async def connect(cls, url: str, headers: Optional[Dict[str, str]] = None, timeout: float = 10.0,
                      max_size: int = 100 * 1024 * 1024) -> "WebSocket":
        """Opens ``ws://`` or ``wss://`` ``url``; a refused upgrade raises the server's typed error."""
        parts = urlsplit(url)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise ValueError(f"url must be ws(s)://host:port/path, got {url!r}")
        tls = parts.scheme == "wss"
        port = parts.port or (443 if tls else 80)
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(parts.hostname, port, ssl=ssl.create_default_context() if tls else None,
                                        limit=max_size + 16), timeout)
        except (OSError, asyncio.TimeoutError) as error:
            raise TransportError(f"cannot reach {url}: {error!r}") from error
        key = base64.b64encode(os.urandom(16)).decode()
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        head = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n")
        for name, value in (headers or {}).items():
            if any(c in name + value for c in "\r\n"):
                raise ValueError(f"invalid header {name!r}")
            head += f"{name}: {value}\r\n"
        writer.write((head + "\r\n").encode("latin-1"))
        try:
            status, answer, body = await asyncio.wait_for(_read_answer(reader), timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            writer.close()
            raise TransportError(f"WebSocket handshake with {url} failed: {error!r}") from error
        if status != 101:
            writer.close()
            import json
            try:
                problem = json.loads(body.decode("utf-8"))
            except ValueError:
                problem = None
            if isinstance(problem, dict):
                raise error_from_problem(status, problem)
            raise EnvHarnessError(f"WebSocket upgrade refused: HTTP {status}", status=status)
        expected = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        if answer.get("sec-websocket-accept") != expected or answer.get("upgrade", "").lower() != "websocket":
            writer.close()
            raise TransportError("WebSocket handshake: wrong Sec-WebSocket-Accept or Upgrade")
        sock = writer.get_extra_info("socket")
        if sock is not None:
            import socket
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        return cls(reader, writer, max_size)

    async def send_text(self, text: str) -> None:
        await self._send(_TEXT, text.encode("utf-8"))

    async def _send(self, opcode: int, payload: bytes) -> None:
        if self._closed and opcode != _CLOSE:
            raise WebSocketClosedError("the WebSocket is closed", self.close_code or 1006)
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        key = os.urandom(4)
        self._writer.write(header + key + _mask(payload, key))
        try:
            await self._writer.drain()
        except OSError as error:
            self._closed = True
            raise WebSocketClosedError(f"the connection broke: {error!r}") from error

    async def recv(self) -> str:
        """The next text (or binary, decoded as UTF-8) message."""
        parts = []
        size = 0
        while True:
            fin, opcode, payload = await self._frame()
            if opcode == _PING:
                await self._send(_PONG, payload)
                continue
            if opcode == _PONG:
                continue
            if opcode == _CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                reason = payload[2:].decode("utf-8", "replace")
                self.close_code = code
                if not self._closed:
                    self._closed = True
                    try:
                        await self._send(_CLOSE, payload[:2])
                    except WebSocketClosedError:
                        pass
                self._writer.close()
                raise WebSocketClosedError(f"the server closed the WebSocket ({code} {reason})".strip(), code, reason)
            if opcode not in (_TEXT, _BINARY, _CONTINUATION):
                raise TransportError(f"unknown WebSocket opcode {opcode}")
            parts.append(payload)
            size += len(payload)
            if size > self._max_size:
                raise TransportError(f"a WebSocket message exceeds {self._max_size} bytes")
            if fin:
                return b"".join(parts).decode("utf-8")

    async def _frame(self) -> Tuple[bool, int, bytes]:
        try:
            b0, b1 = await self._reader.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", await self._reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await self._reader.readexactly(8))[0]
            if n > self._max_size:
                raise TransportError(f"a WebSocket frame of {n} bytes exceeds {self._max_size}")
            key = await self._reader.readexactly(4) if b1 & 0x80 else None
            payload = await self._reader.readexactly(n) if n else b""
        except (asyncio.IncompleteReadError, OSError) as error:
            self._closed = True
            raise WebSocketClosedError(f"the connection ended without a close frame: {error!r}") from error
        if key is not None:
            payload = _mask(payload, key)
        return bool(b0 & 0x80), b0 & 0x0F, payload

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Sends a close frame and waits (briefly) for the server's."""
        if not self._closed:
            self._closed = True
            try:
                await self._send(_CLOSE, struct.pack("!H", code) + reason.encode("utf-8")[:120])
                await asyncio.wait_for(self._drain_until_close(), 2.0)
            except (WebSocketClosedError, TransportError, asyncio.TimeoutError, OSError):
                pass
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass

    async def _drain_until_close(self) -> None:
        while True:
            _, opcode, _ = await self._frame()
            if opcode == _CLOSE:
                return


async def _read_answer(reader: asyncio.StreamReader) -> Tuple[int, Dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1])
    headers: Dict[str, str] = {}
    for line in head[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = b""
    if status != 101 and "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    return status, headers, body
