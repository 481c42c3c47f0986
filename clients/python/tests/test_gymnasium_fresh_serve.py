"""The README as written, from its first command: ``envharness serve`` on a fresh store (built-in domains only),
then the README's Python examples, unchanged but for the port. Issue 13: ``make(domain='retail')`` was POOL_EMPTY."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envharness_client import Client  # noqa: E402
from tests.server import ServeProcess  # noqa: E402

# The client's README in the repository (ENVHARNESS_REPO when the tests run from a copy, as in the venv test).
README = Path(os.environ.get("ENVHARNESS_REPO", Path(__file__).resolve().parents[3])) / "clients" / "python" / "README.md"
SERVER: ServeProcess


def setUpModule() -> None:
    global SERVER
    # The README's first command is `envharness serve --port 8787`: the same, on a free port.
    SERVER = ServeProcess(test_domains=False, timeout=300.0)


def tearDownModule() -> None:
    code = SERVER.stop()
    if code not in (0, None):
        raise AssertionError(f"envharness serve exited with {code}:\n{''.join(SERVER.output)}")


def readme_blocks() -> list:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


class FreshServe(unittest.TestCase):
    def test_make_retail_gives_a_working_episode(self) -> None:
        with Client(SERVER.url, SERVER.token) as client:
            env = client.make(domain="retail")
            obs, info = env.reset(seed=0)
            self.assertEqual(obs["kind"], "reset")
            self.assertEqual(info["domain"], "retail")
            obs, reward, terminated, truncated, info = env.step({"type": "tool", "tool": "list_all_product_types", "args": {}})
            self.assertNotIn("error", obs)
            env.close()

    def test_readme_examples_run_as_written(self) -> None:
        blocks = readme_blocks()
        self.assertGreaterEqual(len(blocks), 2)
        previous = os.environ.get("ENVHARNESS_TOKEN")
        os.environ["ENVHARNESS_TOKEN"] = SERVER.token
        # The blocks continue one another (the second uses the first's `client`): one scope for both.
        scope: dict = {"__name__": "readme"}
        try:
            for block in blocks[:2]:
                code = block.replace("http://127.0.0.1:8787", SERVER.url)
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(code, str(README), "exec"), scope)  # noqa: S102 - the README is ours
                if "finish_run" in code:
                    # The stand-in policy replays reference solutions: every episode of every round succeeds.
                    rounds = [line.split() for line in out.getvalue().splitlines() if line.strip()]
                    self.assertEqual([int(r[0]) for r in rounds], [0, 1, 2], out.getvalue())
                    self.assertTrue(all(float(r[1]) == 10 for r in rounds), out.getvalue())
            self.assertEqual(len(scope["results"]), 64)
        finally:
            if "envs" in scope:
                for env in scope["envs"]:
                    env.close()
            if "client" in scope:
                scope["client"].close()
            if previous is None:
                os.environ.pop("ENVHARNESS_TOKEN", None)
            else:
                os.environ["ENVHARNESS_TOKEN"] = previous


if __name__ == "__main__":
    unittest.main()
