"""A WebSocket client (RFC 6455) on an asyncio protocol: the handshake, masked frames, ping/pong, fragmentation, close.

Frames are parsed as the bytes arrive (into one reused buffer), and each whole message resolves the oldest waiting
``recv`` (or ``request``): a message costs one future, no stream reads (asyncio's ``StreamReader`` took three
``readexactly`` coroutines a frame) and no new timer.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import hashlib
import json
import os
import ssl
import struct
from typing import Deque, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from .errors import EnvHarnessError, TransportError, WebSocketClosedError, error_from_problem

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_TEXT, _BINARY, _CLOSE, _PING, _PONG, _CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0
#: Largest handshake answer head read.
_MAX_HEAD = 64 * 1024
#: The read buffer's usual size, and the least room a read is given.
_READ_SIZE = 64 * 1024
_MIN_READ = 4096
#: Masking keys come from the OS's generator this many bytes at a time (one ``getrandom`` per 256 frames).
_KEY_POOL = 1024


def _mask(payload: bytes, key: bytes) -> bytes:
    """XOR with the 4-byte key, as one big-integer operation (a byte loop is ~50x slower)."""
    n = len(payload)
    if n == 0:
        return payload
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


class _Waiter:
    """A ``recv`` or ``request`` waiting for its message. A request's waiter takes its own answer even after its
    caller stopped waiting (deadline passed, task cancelled), so that the next request never gets it."""

    __slots__ = ("future", "request", "deadline")

    def __init__(self, future: "asyncio.Future[bytes]", request: bool, deadline: Optional[float]) -> None:
        self.future = future
        self.request = request
        self.deadline = deadline


class _Protocol(asyncio.BufferedProtocol):
    """The connection's bytes, read into one reused buffer: the handshake answer, then frames, handed to the
    WebSocket as they arrive. (A plain protocol gets a new 256 KiB ``bytes`` per read, which glibc may ``mmap``
    and unmap again: three system calls and a page fault on each answer.)"""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.ws: Optional[WebSocket] = None
        self.transport: Optional[asyncio.Transport] = None
        self.buffer = bytearray(_READ_SIZE)
        self.view = memoryview(self.buffer)
        #: The unread bytes are ``buffer[start:end]``.
        self.start = 0
        self.end = 0
        #: How many bytes from ``start`` the incomplete frame there needs (0: its header is incomplete too).
        self.need = 0
        self.handshake: "asyncio.Future[Tuple[int, Dict[str, str], bytes]]" = loop.create_future()
        self.upgraded = False
        self.paused = False
        self.drained: Optional["asyncio.Future[None]"] = None
        self.lost: "asyncio.Future[None]" = loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        if len(self.buffer) - self.end < _MIN_READ or self.start + self.need > len(self.buffer):
            self._make_room()
        return self.view[self.end:]

    def _make_room(self) -> None:
        """Moves the unread bytes to the front, in a larger buffer if they (or the frame they start) need it."""
        unread = self.view[self.start:self.end].tobytes()
        size = max(len(self.buffer), self.need + _MIN_READ, len(unread) + _MIN_READ)
        if size > len(self.buffer):
            self.view.release()
            self.buffer = bytearray(size)
            self.view = memoryview(self.buffer)
        self.view[:len(unread)] = unread
        self.start, self.end = 0, len(unread)

    def buffer_updated(self, nbytes: int) -> None:
        self.end += nbytes
        if not self.upgraded:
            self._answer()
            if not self.upgraded:
                return
        if self.end - self.start < (self.need or 2):
            return
        self.start, self.need = self.ws._frames(self.view, self.start, self.end)  # type: ignore[union-attr]
        if self.start == self.end:
            self.start = self.end = 0
            if len(self.buffer) > _READ_SIZE:  # a large message is done: back to the usual buffer
                self.view.release()
                self.buffer = bytearray(_READ_SIZE)
                self.view = memoryview(self.buffer)

    def _answer(self) -> None:
        """Reads the handshake answer's head (and, for a refusal, its body) from the buffer."""
        if self.handshake.done():
            return
        end = self.buffer.find(b"\r\n\r\n", self.start, self.end)
        if end < 0:
            if self.end - self.start > _MAX_HEAD:
                self.handshake.set_exception(TransportError("the handshake answer's headers are too large"))
            return
        lines = self.buffer[self.start:end].decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split(" ", 2)[1])
        except (IndexError, ValueError):
            self.handshake.set_exception(TransportError(f"not an HTTP answer: {lines[0][:100]!r}"))
            return
        headers: Dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        if status != 101 and "content-length" in headers:
            length = int(headers["content-length"])
            if self.end < end + 4 + length:
                return
            body = bytes(self.buffer[end + 4:end + 4 + length])
        if status == 101:
            self.start = end + 4  # what follows is frames
            self.upgraded = True
        self.handshake.set_result((status, headers, body))

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if not self.handshake.done():
            self.handshake.set_exception(ConnectionError(f"the connection ended during the handshake: {exc!r}"))
        if self.ws is not None:
            self.ws._lost(exc)
        self.resume_writing()
        if not self.lost.done():
            self.lost.set_result(None)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)


class WebSocket:
    """One client connection. Pings are answered as they arrive; a close frame ends it with ``WebSocketClosedError``.

    ``recv`` takes the next message no earlier call took (one cancelled while waiting takes none); ``request``
    sends a message and takes the next one, so requests that overlap get their answers in the order they were sent.
    """

    def __init__(self, protocol: _Protocol, max_size: int) -> None:
        self._protocol = protocol
        self._transport: asyncio.Transport = protocol.transport  # type: ignore[assignment]
        self._loop = asyncio.get_running_loop()
        self._max_size = max_size
        self._closed = False
        self.close_code: Optional[int] = None
        #: Whole messages no call has taken yet; then, once the connection ended, the error to raise.
        self._inbox: Deque[bytes] = collections.deque()
        #: Bytes in the inbox; above ``max_size`` the socket is not read until the caller takes half of them.
        self._inbox_size = 0
        self._reading_paused = False
        self._error: Optional[BaseException] = None
        #: Calls waiting for a message, oldest first (while any waits, the inbox is empty).
        self._waiters: Deque[_Waiter] = collections.deque()
        self._fragments: List[bytes] = []
        self._fragments_size = 0
        self._peer_closed: Optional["asyncio.Future[None]"] = None
        self._keys = b""
        self._key_at = 0
        #: One timer for every request's deadline: armed for the oldest, moved on only when it fires.
        self._timer: Optional[asyncio.TimerHandle] = None

    @classmethod
    async def connect(cls, url: str, headers: Optional[Dict[str, str]] = None, timeout: float = 10.0,
                      max_size: int = 100 * 1024 * 1024) -> "WebSocket":
        """Opens ``ws://`` or ``wss://`` ``url``; a refused upgrade raises the server's typed error."""
        parts = urlsplit(url)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise ValueError(f"url must be ws(s)://host:port/path, got {url!r}")
        tls = parts.scheme == "wss"
        port = parts.port or (443 if tls else 80)
        key = base64.b64encode(os.urandom(16)).decode()
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        head = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n")
        for name, value in (headers or {}).items():
            if any(c in name + value for c in "\r\n"):
                raise ValueError(f"invalid header {name!r}")
            head += f"{name}: {value}\r\n"
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await asyncio.wait_for(loop.create_connection(
                lambda: _Protocol(loop), parts.hostname, port, ssl=ssl.create_default_context() if tls else None), timeout)
        except (OSError, asyncio.TimeoutError) as error:
            raise TransportError(f"cannot reach {url}: {error!r}") from error
        ws = cls(protocol, max_size)  # asyncio's TCP transports set TCP_NODELAY themselves (Python >= 3.7)
        protocol.ws = ws  # frames that come with the handshake answer go to it
        transport.write((head + "\r\n").encode("latin-1"))
        try:
            status, answer, body = await asyncio.wait_for(protocol.handshake, timeout)
        except (OSError, asyncio.TimeoutError, TransportError) as error:
            transport.close()
            raise TransportError(f"WebSocket handshake with {url} failed: {error!r}") from error
        if status != 101:
            transport.close()
            try:
                problem = json.loads(body.decode("utf-8"))
            except ValueError:
                problem = None
            if isinstance(problem, dict):
                raise error_from_problem(status, problem)
            raise EnvHarnessError(f"WebSocket upgrade refused: HTTP {status}", status=status)
        expected = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        if answer.get("sec-websocket-accept") != expected or answer.get("upgrade", "").lower() != "websocket":
            transport.close()
            raise TransportError("WebSocket handshake: wrong Sec-WebSocket-Accept or Upgrade")
        return ws

    # ---- sending ------------------------------------------------------------------------------

    async def send_text(self, text: str) -> None:
        self._write(_TEXT, text.encode("utf-8"))
        if self._protocol.paused:
            await self._drain()

    async def request(self, text: str, timeout: Optional[float] = None) -> str:
        """Sends ``text`` and returns the next message; ``asyncio.TimeoutError`` when none came within ``timeout`` s."""
        try:
            self._write(_TEXT, text.encode("utf-8"))
        except WebSocketClosedError:
            if not self._inbox:
                raise
            # The server spoke and closed first (CAPACITY_REACHED, then the close): its message is the answer.
        if self._inbox or self._error is not None:
            return self._take().decode("utf-8")
        waiter = _Waiter(self._loop.create_future(), True, None)
        if timeout is not None:
            waiter.deadline = self._loop.time() + timeout
            if self._timer is None:
                self._timer = self._loop.call_at(waiter.deadline, self._expire)
        self._waiters.append(waiter)
        if self._protocol.paused:
            await self._drain()
        return (await waiter.future).decode("utf-8")

    def _write(self, opcode: int, payload: bytes) -> None:
        if self._closed and opcode != _CLOSE:
            raise WebSocketClosedError("the WebSocket is closed", self.close_code or 1006)
        if self._transport.is_closing():
            self._closed = True
            raise WebSocketClosedError("the connection broke", self.close_code or 1006)
        n = len(payload)
        if n < 126:
            header = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        at = self._key_at
        if at >= len(self._keys):
            self._keys, at = os.urandom(_KEY_POOL), 0
        key = self._keys[at:at + 4]
        self._key_at = at + 4
        self._transport.write(header + key + _mask(payload, key))

    async def _drain(self) -> None:
        protocol = self._protocol
        while protocol.paused and not self._transport.is_closing():
            if protocol.drained is None or protocol.drained.done():
                protocol.drained = self._loop.create_future()
            await protocol.drained

    # ---- receiving ----------------------------------------------------------------------------

    async def recv(self) -> str:
        """The next text (or binary, decoded as UTF-8) message."""
        if self._inbox or self._error is not None:
            return self._take().decode("utf-8")
        waiter = _Waiter(self._loop.create_future(), False, None)
        self._waiters.append(waiter)
        return (await waiter.future).decode("utf-8")

    def _take(self) -> bytes:
        """The oldest message in, else the error that ended the connection."""
        if self._inbox:
            message = self._inbox.popleft()
            self._inbox_size -= len(message)
            if self._reading_paused and self._inbox_size <= self._max_size // 2:
                self._reading_paused = False
                self._transport.resume_reading()
            return message
        assert self._error is not None
        raise self._error

    def _deliver(self, message: bytes) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.future.done():
                waiter.future.set_result(message)
                return
            if waiter.request:
                return  # its caller stopped waiting: the answer is dropped, not given to the next request
            # a recv cancelled while waiting takes no message
        self._inbox.append(message)
        self._inbox_size += len(message)
        if self._inbox_size > self._max_size and not self._reading_paused and not self._transport.is_closing():
            self._reading_paused = True
            self._transport.pause_reading()

    def _expire(self) -> None:
        """The timer: requests past their deadline raise TimeoutError (and still take their answer when it comes)."""
        self._timer = None
        now = self._loop.time()
        next_deadline: Optional[float] = None
        for waiter in self._waiters:
            if waiter.deadline is None or waiter.future.done():
                continue
            if waiter.deadline <= now:
                waiter.future.set_exception(asyncio.TimeoutError())
            elif next_deadline is None or waiter.deadline < next_deadline:
                next_deadline = waiter.deadline
        if next_deadline is not None:
            self._timer = self._loop.call_at(next_deadline, self._expire)

    def _fail(self, error: BaseException) -> None:
        """Ends reading: messages already in stay readable, then every call raises ``error``."""
        if self._error is None:
            self._error = error
        waiters, self._waiters = self._waiters, collections.deque()
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_exception(error)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._peer_closed is not None and not self._peer_closed.done():
            self._peer_closed.set_result(None)

    def _lost(self, exc: Optional[Exception]) -> None:
        self._closed = True
        if self._error is None:
            self._fail(WebSocketClosedError(f"the connection ended without a close frame: {exc!r}", self.close_code or 1006))

    def _frames(self, data: memoryview, at: int, n: int) -> Tuple[int, int]:
        """Handles the whole frames in ``data[at:n]``; returns where the unread bytes start and how many bytes the
        incomplete frame there needs in all (0 while its header is incomplete, or when nothing is left)."""
        while n - at >= 2:
            b0 = data[at]
            b1 = data[at + 1]
            length = b1 & 0x7F
            start = at + 2
            if length == 126:
                if n - at < 4:
                    break
                length = int.from_bytes(data[start:start + 2], "big")
                start += 2
            elif length == 127:
                if n - at < 10:
                    break
                length = int.from_bytes(data[start:start + 8], "big")
                start += 8
            if length > self._max_size:
                self._protocol_error(f"a WebSocket frame of {length} bytes exceeds {self._max_size}")
                return n, 0
            masked = b1 & 0x80
            end = start + (4 if masked else 0) + length
            if end > n:
                return at, end - at
            if masked:  # servers do not mask; accepted all the same
                payload = _mask(data[start + 4:end].tobytes(), data[start:start + 4].tobytes())
            else:
                payload = data[start:end].tobytes()
            at = end
            if not self._frame(b0, payload):
                return n, 0
        return at, 0

    def _frame(self, b0: int, payload: bytes) -> bool:
        """One frame; False once the connection is over."""
        opcode = b0 & 0x0F
        if opcode == _TEXT or opcode == _BINARY or opcode == _CONTINUATION:
            if b0 & 0x80 and not self._fragments:
                self._deliver(payload)
                return True
            self._fragments.append(payload)
            self._fragments_size += len(payload)
            if self._fragments_size > self._max_size:
                self._protocol_error(f"a WebSocket message exceeds {self._max_size} bytes")
                return False
            if b0 & 0x80:
                message = b"".join(self._fragments)
                self._fragments, self._fragments_size = [], 0
                self._deliver(message)
            return True
        if opcode == _PING:
            if not self._closed:
                self._write(_PONG, payload)
            return True
        if opcode == _PONG:
            return True
        if opcode == _CLOSE:
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
            reason = payload[2:].decode("utf-8", "replace")
            self.close_code = code
            if not self._closed:
                self._closed = True
                try:
                    self._write(_CLOSE, payload[:2])
                except WebSocketClosedError:
                    pass
            self._transport.close()
            self._fail(WebSocketClosedError(f"the server closed the WebSocket ({code} {reason})".strip(), code, reason))
            return False
        self._protocol_error(f"unknown WebSocket opcode {opcode}")
        return False

    def _protocol_error(self, detail: str) -> None:
        self._closed = True
        self._transport.close()
        self._fail(TransportError(detail))

    # ---- closing ------------------------------------------------------------------------------

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Sends a close frame and waits (briefly) for the server's."""
        if not self._closed:
            try:
                self._write(_CLOSE, struct.pack("!H", code) + reason.encode("utf-8")[:120])
                self._closed = True
                if self._error is None:
                    self._peer_closed = self._loop.create_future()
                    await asyncio.wait_for(self._peer_closed, 2.0)
            except (WebSocketClosedError, asyncio.TimeoutError, OSError):
                pass
            self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._protocol.lost), 2.0)
        except asyncio.TimeoutError:
            self._transport.abort()
