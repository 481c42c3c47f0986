"""Starts a real ``envharness serve`` for the tests: a temporary store, a free port, the test domains."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Optional

REPO = Path(os.environ.get("ENVHARNESS_REPO", Path(__file__).resolve().parents[3]))


class ServeProcess:
    """``node bin/envharness.js serve --port 0`` on a fresh store; ``url`` and ``token`` once it listens."""

    def __init__(self, extra_args: Optional[List[str]] = None, timeout: float = 90.0, test_domains: bool = True) -> None:
        """``test_domains=False`` serves only the built-in domains, exactly as the README's first command."""
        self.dir = tempfile.mkdtemp(prefix="envharness-py-")
        self.token = "py-" + secrets.token_urlsafe(24)
        self.output: List[str] = []
        args = [
            os.environ.get("ENVHARNESS_NODE", "node"), str(REPO / "bin" / "envharness.js"),
            "--store", f"sqlite:{os.path.join(self.dir, 'envharness.db')}",
            "serve", "--port", "0",
        ] + (["--no-fill", "--domain-module", str(REPO / "src" / "server" / "testing" / "domains.ts")] if test_domains else []) + (extra_args or [])
        env = dict(os.environ, ENVHARNESS_TOKEN=self.token, NO_COLOR="1")
        self.proc = subprocess.Popen(args, cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = ""
        found = threading.Event()

        def drain() -> None:
            # Keeps reading for the whole life of the server, so that a full pipe never blocks it.
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.output.append(line)
                match = re.search(r"listening on (http://\S+)", line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()
            found.set()

        self._drain = threading.Thread(target=drain, daemon=True)
        self._drain.start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.1):
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("envharness serve did not start in time:\n" + "".join(self.output))
        if not self.url:
            self.stop()
            raise RuntimeError("envharness serve exited:\n" + "".join(self.output))

    def stop(self) -> int:
        """Stops the server (SIGTERM: open episodes are recorded as closed) and removes the store."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._drain.join(5)
        if self.proc.stdout is not None and not self._drain.is_alive():
            self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode


def populate(client) -> None:  # type: ignore[no-untyped-def]
    """Generates the tasks the tests use: inventory (restock, clearance), math (chain-sum), null (noop)."""
    client.generate(["inventory/restock@1", "inventory/clearance@1"], levels=[1, 2], count=40, seed=1)
    client.generate(["math/chain-sum@1"], levels=[1, 2, 3], count=30, seed=1)
    client.generate(["null/noop@1"], levels=[1], count=1, seed=1, gates={"non_trivial": False})


class SharedServer:
    """One populated server and client for a whole test module: ``start()`` in ``setUpModule``, ``stop()`` in
    ``tearDownModule`` (which fails the module when the server did not exit cleanly)."""

    def __init__(self, extra_args: Optional[List[str]] = None) -> None:
        self.extra_args = extra_args
        self.server: Optional[ServeProcess] = None
        self.client = None  # type: ignore[var-annotated]

    def start(self):  # type: ignore[no-untyped-def]
        """Starts ``envharness serve``, generates the test tasks, and returns the client."""
        from envharness_client.client import Client

        self.server = ServeProcess(self.extra_args)
        self.client = Client(self.server.url, self.server.token)
        populate(self.client)
        return self.client

    @property
    def url(self) -> str:
        assert self.server is not None, "SharedServer.start() was not called"
        return self.server.url

    @property
    def token(self) -> str:
        assert self.server is not None, "SharedServer.start() was not called"
        return self.server.token

    def stop(self) -> None:
        """Closes the client, stops the server, and raises if it exited with an error."""
        if self.client is not None:
            self.client.close()
        if self.server is None:
            return
        code = self.server.stop()
        if code not in (0, None):
            raise AssertionError(f"envharness serve exited with {code}:\n{''.join(self.server.output)}")
