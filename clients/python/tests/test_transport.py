"""The client's HTTP/1.1 transport against canned answers (no server): framing, keep-alive, header safety."""

from __future__ import annotations

import socket
import sys
import threading
import time
import unittest
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envharness_client import Client, TransportError  # noqa: E402
from envharness_client.client import _Connection  # noqa: E402


class CannedServer:
    """Accepts connections and answers each request with the next canned answer (a list of byte chunks)."""

    def __init__(self, answers: List[List[bytes]], close_after: bool = False) -> None:
        self.requests: List[bytes] = []
        self.connections = 0
        self._answers = list(answers)
        self._close_after = close_after
        self._srv = socket.socket()
        self._srv.bind(("127.0.0.1", 0))
        self._srv.listen(4)
        self.port = self._srv.getsockname()[1]
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self._answers:
            conn, _ = self._srv.accept()
            self.connections += 1
            with conn:
                while self._answers:
                    request = conn.recv(65536)
                    if not request:
                        break
                    self.requests.append(request)
                    for chunk in self._answers.pop(0):
                        conn.sendall(chunk)
                    if self._close_after:
                        break
        self._srv.close()

    def join(self) -> None:
        self._thread.join(5)


class Framing(unittest.TestCase):
    def exchange(self, answer: List[bytes]):  # type: ignore[no-untyped-def]
        server = CannedServer([answer])
        conn = _Connection("127.0.0.1", server.port, 5, False)
        try:
            return conn.exchange(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        finally:
            conn.close()
            server.join()

    def test_reads_a_content_length_body_split_across_packets(self) -> None:
        status, body, headers, will_close = self.exchange([b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe", b"llo"])
        self.assertEqual((status, body, headers["content-length"], will_close), (200, b"hello", "5", False))

    def test_reads_a_chunked_body_with_extensions_and_trailers(self) -> None:
        answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=1\r\nlo\r\n0\r\nX-Trailer: 1\r\n\r\n"
        self.assertEqual(self.exchange([answer])[:2], (200, b"hello"))

    def test_skips_1xx_and_reads_a_body_delimited_by_close(self) -> None:
        status, body, _, will_close = self.exchange([b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\nuntil close"])
        self.assertEqual((status, body, will_close), (200, b"until close", True))

    def test_connection_close_is_honoured(self) -> None:
        status, body, _, will_close = self.exchange([b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"])
        self.assertEqual((status, body, will_close), (204, b"", True))


class KeepAlive(unittest.TestCase):
    def test_keeps_one_connection_and_reconnects_after_the_server_closed_it(self) -> None:
        ok = [b'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"ok":true}']
        server = CannedServer([ok, ok, ok], close_after=True)
        with Client(f"http://127.0.0.1:{server.port}", "token-0123456789abcdef") as client:
            for _ in range(3):
                self.assertEqual(client.request("GET", "/v1/health", retry=True), {"ok": True})
        server.join()
        self.assertEqual(server.connections, 3)
        self.assertTrue(all(r.startswith(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:") for r in server.requests))
        self.assertIn(b"Authorization: Bearer token-0123456789abcdef\r\n", server.requests[0])

    def test_a_request_body_is_sent_with_its_length(self) -> None:
        server = CannedServer([[b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"]])
        with Client(f"http://127.0.0.1:{server.port}", "token-0123456789abcdef") as client:
            client.request("POST", "/v1/x", {"text": "caf\u00e9"})
        server.join()
        head, _, body = server.requests[0].partition(b"\r\n\r\n")
        self.assertEqual(body, '{"text":"caf\u00e9"}'.encode("utf-8"))
        self.assertIn(f"Content-Length: {len(body)}".encode(), head)

    def test_an_unreachable_server_is_a_transport_error(self) -> None:
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        with Client(f"http://127.0.0.1:{port}", "token-0123456789abcdef") as client:
            with self.assertRaises(TransportError):
                client.request("GET", "/v1/health")

    def test_a_server_that_never_answers_times_out(self) -> None:
        # No answer at all, or half an answer: the client's timeout ends the wait (then a new connection is used).
        for answer in ([], [b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12"]):
            server = CannedServer([answer, [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"]])
            with Client(f"http://127.0.0.1:{server.port}", "token-0123456789abcdef", timeout=0.3) as client:
                started = time.monotonic()
                with self.assertRaisesRegex(TransportError, "timed out"):
                    client.request("GET", "/v1/health")
                self.assertLess(time.monotonic() - started, 3)
                self.assertEqual(client.request("GET", "/v1/health"), {})  # on a new connection
            server.join()
            self.assertEqual(server.connections, 2)


class Safety(unittest.TestCase):
    def test_refuses_header_injection_in_tokens_headers_and_paths(self) -> None:
        with self.assertRaises(ValueError):
            Client("http://127.0.0.1:1", "token\r\nX-Evil: 1")
        client = Client("http://127.0.0.1:1", "token-0123456789abcdef")
        with self.assertRaises(ValueError):
            client.request("GET", "/v1/health", headers={"X-A": "1\r\nX-Evil: 1"})
        with self.assertRaises(ValueError):
            client.request("GET", "/v1/health HTTP/1.1\r\nX-Evil: 1")

    def test_idempotency_keys_are_unique_visible_ascii(self) -> None:
        a = Client("http://127.0.0.1:1", "token-0123456789abcdef")
        b = Client("http://127.0.0.1:1", "token-0123456789abcdef")
        keys = [a._idempotency_key() for _ in range(1000)] + [b._idempotency_key() for _ in range(1000)]
        self.assertEqual(len(set(keys)), len(keys))
        self.assertTrue(all(0 < len(k) <= 256 and all(0x21 <= ord(c) <= 0x7E for c in k) for k in keys))


if __name__ == "__main__":
    unittest.main()
