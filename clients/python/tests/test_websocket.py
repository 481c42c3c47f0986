"""The WebSocket client against a scripted server (no EnvHarness): the handshake, frames however the bytes arrive,
fragments, ping/pong, close, sizes, and requests whose answers come late or overlap."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import struct
import sys
import unittest
from pathlib import Path
from typing import Awaitable, Callable, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envharness_client import TransportError, UnauthorizedError, WebSocketClosedError  # noqa: E402
from envharness_client.websocket import WebSocket  # noqa: E402

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0

Streams = Tuple[asyncio.StreamReader, asyncio.StreamWriter]


def frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """A server frame (unmasked)."""
    n = len(payload)
    b0 = (0x80 if fin else 0) | opcode
    if n < 126:
        return bytes((b0, n)) + payload
    if n < 65536:
        return struct.pack("!BBH", b0, 126, n) + payload
    return struct.pack("!BBQ", b0, 127, n) + payload


async def read_frame(reader: asyncio.StreamReader) -> Tuple[int, bytes]:
    """A client frame: ``(opcode, payload)``; clients must mask."""
    b0, b1 = await reader.readexactly(2)
    assert b1 & 0x80, "client frames are masked"
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", await reader.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", await reader.readexactly(8))[0]
    key = await reader.readexactly(4)
    data = await reader.readexactly(n)
    return b0 & 0x0F, bytes(b ^ key[i % 4] for i, b in enumerate(data))


def accept_answer(head: bytes) -> bytes:
    match = re.search(rb"Sec-WebSocket-Key: (\S+)", head)
    assert match is not None
    accept = base64.b64encode(hashlib.sha1(match.group(1) + _GUID).digest())
    return b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"


async def with_server(script: Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]],
                      client: Callable[[str], Awaitable[None]]) -> None:
    """Runs ``client(url)`` against a server that hands each connection (and its request head) to ``script``."""
    done: List[BaseException] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await script(reader, writer, await reader.readuntil(b"\r\n\r\n"))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except BaseException as error:  # surfaced by the test
            done.append(error)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        await client(f"ws://127.0.0.1:{port}/ws")
    finally:
        server.close()
        await server.wait_closed()
    if done:
        raise done[0]


async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Reads the client's frames until its close, and echoes that."""
    while True:
        opcode, payload = await read_frame(reader)
        if opcode == CLOSE:
            writer.write(frame(CLOSE, payload[:2]))
            return


def run(coro: Awaitable[None]) -> None:
    asyncio.run(asyncio.wait_for(coro, 20))


class Frames(unittest.TestCase):
    def test_frames_arrive_with_the_handshake_byte_by_byte_and_many_to_a_packet(self) -> None:
        long_text = "x" * 300  # a 16-bit length

        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head) + frame(TEXT, b"first"))
            for byte in frame(TEXT, long_text.encode()):
                writer.write(bytes((byte,)))
                await writer.drain()
                await asyncio.sleep(0.001)
            writer.write(frame(TEXT, b"a") + frame(BINARY, "é".encode()) + frame(TEXT, b"c")[:2])
            await writer.drain()
            await asyncio.sleep(0.01)
            writer.write(frame(TEXT, b"c")[2:])
            await until_close(reader, writer)

        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            self.assertEqual([await ws.recv() for _ in range(5)], ["first", long_text, "a", "é", "c"])
            await ws.close()

        run(with_server(script, client))

    def test_large_and_fragmented_messages_with_a_ping_between_fragments(self) -> None:
        big = "ü" * 100_000  # 200 kB: a 64-bit length, larger than the read buffer

        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head))
            data = frame(TEXT, big.encode())
            for at in range(0, len(data), 10_000):
                writer.write(data[at:at + 10_000])
                await writer.drain()
            writer.write(frame(TEXT, b"he", fin=False) + frame(PING, b"are you there") + frame(CONTINUATION, b"ll", fin=False))
            writer.write(frame(CONTINUATION, b"o"))
            self.assertEqual(await read_frame(reader), (PONG, b"are you there"))
            writer.write(frame(TEXT, b"after"))
            await until_close(reader, writer)

        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            self.assertEqual(await ws.recv(), big)
            self.assertEqual(await ws.recv(), "hello")
            self.assertEqual(await ws.recv(), "after")
            await ws.close()

        run(with_server(script, client))

    def test_a_frame_or_a_message_over_max_size_is_a_transport_error(self) -> None:
        async def one_frame(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head) + frame(TEXT, b"ok") + frame(TEXT, b"y" * 2000))
            await until_close(reader, writer)

        async def fragments(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head) + frame(TEXT, b"ok") + frame(TEXT, b"z" * 600, fin=False) + frame(CONTINUATION, b"z" * 600))
            await until_close(reader, writer)

        for script, message in ((one_frame, "frame of 2000 bytes exceeds 1000"), (fragments, "message exceeds 1000")):
            async def client(url: str) -> None:
                ws = await WebSocket.connect(url, max_size=1000)
                self.assertEqual(await ws.recv(), "ok")
                with self.assertRaisesRegex(TransportError, message):
                    await ws.recv()
                with self.assertRaises(TransportError):
                    await ws.send_text("after")
                await ws.close()

            run(with_server(script, client))

    def test_messages_nobody_takes_stop_the_reading_above_max_size(self) -> None:
        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head) + frame(TEXT, b"m" * 600) * 10)
            await until_close(reader, writer)

        async def client(url: str) -> None:
            ws = await WebSocket.connect(url, max_size=1000)
            transport = ws._transport
            for _ in range(100):
                if not transport.is_reading():
                    break
                await asyncio.sleep(0.01)
            self.assertFalse(transport.is_reading())  # 6000 bytes waiting: more than max_size
            for _ in range(9):
                self.assertEqual(await ws.recv(), "m" * 600)
            self.assertFalse(transport.is_reading())  # 600: still more than half of it
            await ws.recv()
            self.assertTrue(transport.is_reading())
            await ws.close()

        run(with_server(script, client))


class Closing(unittest.TestCase):
    def test_a_close_frame_is_echoed_and_ends_reading_after_the_messages_before_it(self) -> None:
        echoed: List[Tuple[int, bytes]] = []

        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head) + frame(TEXT, b"last words") + frame(CLOSE, struct.pack("!H", 1001) + b"bye"))
            echoed.append(await read_frame(reader))

        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            await asyncio.sleep(0.05)  # the close frame is in before the client reads
            self.assertEqual(await ws.recv(), "last words")
            for _ in range(2):
                with self.assertRaises(WebSocketClosedError) as caught:
                    await ws.recv()
                self.assertEqual((caught.exception.close_code, caught.exception.reason), (1001, "bye"))
            self.assertEqual(ws.close_code, 1001)
            with self.assertRaises(WebSocketClosedError):
                await ws.send_text("too late")
            await ws.close()

        run(with_server(script, client))
        self.assertEqual(echoed, [(CLOSE, struct.pack("!H", 1001))])

    def test_a_message_sent_before_the_close_answers_the_next_request(self) -> None:
        # OpenEnv's CAPACITY_REACHED: an error message, then the close, before the client has said anything.
        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head) + frame(TEXT, b'{"type":"error"}') + frame(CLOSE, struct.pack("!H", 1000)))
            await until_close(reader, writer)

        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            await asyncio.sleep(0.05)
            self.assertEqual(json.loads(await ws.request('{"type":"reset"}')), {"type": "error"})
            with self.assertRaises(WebSocketClosedError):
                await ws.request('{"type":"reset"}')
            await ws.close()

        run(with_server(script, client))

    def test_a_connection_that_ends_without_a_close_frame(self) -> None:
        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head) + frame(TEXT, b"half")[:3])

        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            with self.assertRaisesRegex(WebSocketClosedError, "without a close frame") as caught:
                await ws.recv()
            self.assertEqual(caught.exception.close_code, 1006)
            await ws.close()

        run(with_server(script, client))

    def test_close_sends_a_close_frame_and_waits_for_the_servers(self) -> None:
        got: List[Tuple[int, bytes]] = []

        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head))
            got.append(await read_frame(reader))
            writer.write(frame(CLOSE, struct.pack("!H", 1000)))
            await until_close(reader, writer)

        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            await ws.close(4000, "done")

        run(with_server(script, client))
        self.assertEqual(got, [(CLOSE, struct.pack("!H", 4000) + b"done")])


class Handshake(unittest.TestCase):
    def test_a_refused_upgrade_raises_the_problem_as_its_typed_error(self) -> None:
        problem = json.dumps({"type": "about:blank", "title": "Unauthorized", "status": 401, "code": "UNAUTHORIZED", "detail": "no token"}).encode()

        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            answer = f"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/problem+json\r\nContent-Length: {len(problem)}\r\n\r\n".encode()
            writer.write(answer + problem[:10])
            await writer.drain()
            await asyncio.sleep(0.01)
            writer.write(problem[10:])
            await until_close(reader, writer)

        async def client(url: str) -> None:
            with self.assertRaisesRegex(UnauthorizedError, "no token"):
                await WebSocket.connect(url)

        run(with_server(script, client))

    def test_a_wrong_accept_key_is_refused(self) -> None:
        async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
            writer.write(accept_answer(head.replace(b"Sec-WebSocket-Key: ", b"Sec-WebSocket-Key: x")))
            await until_close(reader, writer)

        async def client(url: str) -> None:
            with self.assertRaisesRegex(TransportError, "Sec-WebSocket-Accept"):
                await WebSocket.connect(url)

        run(with_server(script, client))


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
    """Answers each text message with ``re:<text>``, in order; ``slow`` after 0.3 s."""
    writer.write(accept_answer(head))
    while True:
        opcode, payload = await read_frame(reader)
        if opcode == CLOSE:
            writer.write(frame(CLOSE, payload[:2]))
            return
        if payload == b"slow":
            await asyncio.sleep(0.3)
        writer.write(frame(TEXT, b"re:" + payload))


class Requests(unittest.TestCase):
    def test_overlapping_requests_get_their_answers_in_order(self) -> None:
        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            self.assertEqual(await asyncio.gather(*(ws.request(f"m{i}", timeout=5) for i in range(20))), [f"re:m{i}" for i in range(20)])
            await ws.close()

        run(with_server(echo, client))

    def test_an_answer_after_the_deadline_is_dropped_not_given_to_the_next_request(self) -> None:
        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            with self.assertRaises(asyncio.TimeoutError):
                await ws.request("slow", timeout=0.05)
            self.assertEqual(await ws.request("next", timeout=5), "re:next")
            # A request cancelled while it waits drops its answer too.
            task = asyncio.ensure_future(ws.request("slow", timeout=5))
            await asyncio.sleep(0.05)
            task.cancel()
            self.assertEqual(await ws.request("after", timeout=5), "re:after")
            await ws.close()

        run(with_server(echo, client))

    def test_a_cancelled_recv_takes_no_message(self) -> None:
        async def client(url: str) -> None:
            ws = await WebSocket.connect(url)
            waiting = asyncio.ensure_future(ws.recv())
            await asyncio.sleep(0.02)
            waiting.cancel()
            await ws.send_text("one")
            self.assertEqual(await ws.recv(), "re:one")
            await ws.close()

        run(with_server(echo, client))


if __name__ == "__main__":
    unittest.main()
