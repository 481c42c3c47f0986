"""Client-side benchmark of the EnvHarness HTTP API (run by bench/server.bench.ts; prints one JSON line).

Modes:
  sequential  one env of the null domain, one step in flight: per-step latency (p50/p99, microseconds) and steps/s
  batched     SESSIONS envs stepped together with step_many: session-steps/s
  raw         the same request shape against any URL with plain http.client (the stdlib client's floor)
  socket      the same request on a plain socket: one sendall, recv until the body is complete (the floor of
              the approach envharness_client takes)
  websocket   one OpenEnv WebSocket session (envharness_client.openenv, asyncio) of the null domain, one step in
              flight: per-step latency and steps/s
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envharness_client import Client, tool  # noqa: E402


def percentile(sorted_values, q):  # type: ignore[no-untyped-def]
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def sequential(client: Client, seconds: float, action: dict) -> dict:
    env = client.make(domain="null", seed=0)
    for _ in range(200):
        env.step(action)
    latencies = []
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        t0 = time.perf_counter_ns()
        env.step(action)
        latencies.append(time.perf_counter_ns() - t0)
    elapsed = time.perf_counter() - start
    env.close()
    latencies.sort()
    return {"steps": len(latencies), "stepsPerSec": len(latencies) / elapsed,
            "p50Us": percentile(latencies, 0.5) / 1000, "p99Us": percentile(latencies, 0.99) / 1000}


def batched(client: Client, seconds: float, sessions: int, action: dict) -> dict:
    envs = [client.make(domain="null", seed=i) for i in range(sessions)]
    pairs = [(env, action) for env in envs]
    for _ in range(5):
        client.step_many(pairs)
    requests = 0
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        client.step_many(pairs)
        requests += 1
    elapsed = time.perf_counter() - start
    for env in envs:
        env.close()
    return {"sessions": sessions, "requests": requests, "sessionStepsPerSec": requests * sessions / elapsed,
            "requestMs": elapsed * 1000 / max(requests, 1)}


def raw(url: str, seconds: float) -> dict:
    """Plain http.client against a null route: what this Python can do at all."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port)
    body = json.dumps({"action": {"type": "tool", "tool": "noop", "args": {}}}).encode()
    headers = {"Content-Type": "application/json", "Authorization": "Bearer x"}
    latencies = []
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        t0 = time.perf_counter_ns()
        conn.request("POST", "/step", body=body, headers=headers)
        response = conn.getresponse()
        json.loads(response.read())
        latencies.append(time.perf_counter_ns() - t0)
    elapsed = time.perf_counter() - start
    conn.close()
    latencies.sort()
    return {"steps": len(latencies), "stepsPerSec": len(latencies) / elapsed,
            "p50Us": percentile(latencies, 0.5) / 1000, "p99Us": percentile(latencies, 0.99) / 1000}


def plain_socket(url: str, seconds: float) -> dict:
    """The null-route request written and read by hand: what a socket round trip costs this Python."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    body = json.dumps({"action": {"type": "tool", "tool": "noop", "args": {}}}).encode()
    request = (f"POST /step HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
               f"Authorization: Bearer x\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body

    def once() -> None:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        while len(rest) < length:
            rest += sock.recv(65536)
        json.loads(rest)

    latencies = []
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        t0 = time.perf_counter_ns()
        once()
        latencies.append(time.perf_counter_ns() - t0)
    elapsed = time.perf_counter() - start
    sock.close()
    latencies.sort()
    return {"steps": len(latencies), "stepsPerSec": len(latencies) / elapsed,
            "p50Us": percentile(latencies, 0.5) / 1000, "p99Us": percentile(latencies, 0.99) / 1000}


def websocket(url: str, token: str, seconds: float, action: dict) -> dict:
    from envharness_client.openenv import OpenEnvSession

    async def run() -> dict:
        async with OpenEnvSession(url.rstrip("/") + "/openenv", token=token) as env:
            await env.reset(seed=0, domain="null")

            async def step() -> None:
                if (await env.step(action)).done:
                    await env.reset(seed=0, domain="null")

            for _ in range(200):
                await step()
            latencies = []
            deadline = time.perf_counter() + seconds
            start = time.perf_counter()
            while time.perf_counter() < deadline:
                t0 = time.perf_counter_ns()
                await step()
                latencies.append(time.perf_counter_ns() - t0)
            elapsed = time.perf_counter() - start
        latencies.sort()
        return {"steps": len(latencies), "stepsPerSec": len(latencies) / elapsed,
                "p50Us": percentile(latencies, 0.5) / 1000, "p99Us": percentile(latencies, 0.99) / 1000}

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", default="x")
    parser.add_argument("--mode", choices=["sequential", "batched", "raw", "socket", "websocket"], required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--sessions", type=int, default=32)
    args = parser.parse_args()
    action = tool("noop")
    if args.mode == "raw":
        result = raw(args.url, args.seconds)
    elif args.mode == "socket":
        result = plain_socket(args.url, args.seconds)
    elif args.mode == "websocket":
        result = websocket(args.url, args.token, args.seconds, action)
    else:
        with Client(args.url, args.token) as client:
            if args.mode == "sequential":
                result = sequential(client, args.seconds, action)
            else:
                result = batched(client, args.seconds, args.sessions, action)
    result["python"] = sys.version.split()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
