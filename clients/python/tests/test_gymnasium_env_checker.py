"""Gymnasium's environment checks, rule by rule, against a real ``envharness serve``.

gymnasium is not a dependency (and not installable on every machine this runs on), so each test states
the contract of one check in Gymnasium's ``gymnasium/utils/env_checker.py`` or
``gymnasium/utils/passive_env_checker.py`` (Farama-Foundation/Gymnasium, read at commit 3f0476a) and
asserts it directly; where a rule only warns in Gymnasium, it is asserted here all the same.
"""

from __future__ import annotations

import copy
import inspect
import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envharness_client.client import Client, SeededRandom  # noqa: E402
from tests.server import SharedServer  # noqa: E402

SHARED = SharedServer()
CLIENT: Client


def setUpModule() -> None:
    global CLIENT
    CLIENT = SHARED.start()


def tearDownModule() -> None:
    SHARED.stop()


def data_equivalence(a, b) -> bool:  # type: ignore[no-untyped-def]
    """env_checker.data_equivalence for JSON data: same types, same keys, equal leaves."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(data_equivalence(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(data_equivalence(x, y) for x, y in zip(a, b))
    return bool(a == b)


class GymnasiumEnvChecker(unittest.TestCase):
    def setUp(self) -> None:
        # A sampling env (resample on every reset): the case where the seed must pick the task.
        self.env = CLIENT.make(domain="inventory")

    def tearDown(self) -> None:
        self.env.close()

    # ---- check_env: the class and its attributes ------------------------------------------------

    def test_check_env_unwrapped_is_the_env(self) -> None:
        """check_env warns when ``env.unwrapped is not env``; the checks read ``env.unwrapped._np_random``."""
        self.assertIs(self.env.unwrapped, self.env)

    def test_check_env_declares_both_spaces(self) -> None:
        """check_env raises AttributeError without ``action_space`` / ``observation_space``; check_space needs a Space
        with ``shape``, ``contains``/``in``, ``sample`` and ``seed``."""
        for space in (self.env.action_space, self.env.observation_space):
            self.assertTrue(hasattr(space, "shape"))
            self.assertTrue(callable(space.contains) and callable(space.sample) and callable(space.seed))
            self.assertIn(space.sample(), space)

    def test_check_seed_deprecation(self) -> None:
        """check_seed_deprecation: no callable ``env.seed`` (seeding is ``reset(seed=...)``)."""
        self.assertFalse(callable(getattr(self.env, "seed", None)))

    def test_check_reset_return_info_deprecation(self) -> None:
        """check_reset_return_info_deprecation: ``reset`` takes no ``return_info``."""
        self.assertNotIn("return_info", inspect.signature(self.env.reset).parameters)

    # ---- reset ------------------------------------------------------------------------------------

    def test_check_reset_return_type(self) -> None:
        """check_reset_return_type: ``reset()`` returns a 2-tuple ``(obs, info)``, obs in the space, info a dict."""
        result = self.env.reset()
        self.assertIsInstance(result, tuple)
        self.assertEqual(len(result), 2)
        obs, info = result
        self.assertIn(obs, self.env.observation_space)
        self.assertIsInstance(info, dict)

    def test_env_reset_passive_checker_signature(self) -> None:
        """env_reset_passive_checker: ``reset`` accepts ``seed`` (default None) and ``options``."""
        parameters = inspect.signature(self.env.reset).parameters
        self.assertIn("seed", parameters)
        self.assertIsNone(parameters["seed"].default)
        self.assertIn("options", parameters)

    def test_check_reset_seed_determinism(self) -> None:
        """check_reset_seed_determinism: reset(seed=123), reset(), reset(seed=123), reset() - the seeded resets
        give equivalent observations, and so do the two unseeded ones after them; the generator's state after
        seed 123 is the same both times and differs after seed 456."""
        env = self.env
        obs_1, info_1 = env.reset(seed=123)
        self.assertIn(obs_1, env.observation_space)
        self.assertIsNotNone(env.unwrapped._np_random)
        rng_1 = copy.deepcopy(env.unwrapped._np_random)
        obs_2, info_2 = env.reset()
        self.assertIn(obs_2, env.observation_space)
        obs_3, info_3 = env.reset(seed=123)
        rng_3 = copy.deepcopy(env.unwrapped._np_random)
        obs_4, info_4 = env.reset()
        self.assertTrue(data_equivalence(obs_1, obs_3), "reset(seed=123) twice gave different observations")
        self.assertEqual(info_1["taskId"], info_3["taskId"])
        self.assertTrue(data_equivalence(obs_2, obs_4), "reset(seed=123) then reset() is not reproducible")
        self.assertEqual(rng_1.bit_generator.state, rng_3.bit_generator.state)
        env.reset(seed=456)
        self.assertNotEqual(env.unwrapped._np_random.bit_generator.state, rng_1.bit_generator.state)

    def test_seeded_reset_is_reproducible_server_side(self) -> None:
        """The seed picks the task on the server: two envs (two episodes) reset with one seed see one task and one
        observation; other seeds reach other tasks; a reset without a seed may draw anew."""
        other = CLIENT.make(domain="inventory")
        try:
            for seed in (0, 7, 123):
                a_obs, a_info = self.env.reset(seed=seed)
                b_obs, b_info = other.reset(seed=seed)
                self.assertEqual(a_info["taskId"], b_info["taskId"])
                self.assertTrue(data_equivalence(a_obs, b_obs))
            tasks = {self.env.reset(seed=seed)[1]["taskId"] for seed in range(12)}
            self.assertGreater(len(tasks), 1, "every seed gave the same task: the seed does not pick the task")
        finally:
            other.close()

    def test_check_reset_options(self) -> None:
        """check_reset_options: ``reset(options={})`` works."""
        obs, info = self.env.reset(options={})
        self.assertIn(obs, self.env.observation_space)

    # ---- step ---------------------------------------------------------------------------------------

    def test_env_step_passive_checker(self) -> None:
        """env_step_passive_checker: a 5-tuple; terminated and truncated are bools; the reward is a finite
        number; info is a dict; the observation is in the space."""
        self.env.reset(seed=5)
        result = self.env.step(self.env.action_space.sample())
        self.assertIsInstance(result, tuple)
        self.assertEqual(len(result), 5)
        obs, reward, terminated, truncated, info = result
        self.assertIn(obs, self.env.observation_space)
        self.assertIsInstance(terminated, bool)
        self.assertIsInstance(truncated, bool)
        self.assertIsInstance(reward, (int, float))
        self.assertFalse(math.isnan(reward) or math.isinf(reward))
        self.assertIsInstance(info, dict)

    def test_check_step_determinism(self) -> None:
        """check_step_determinism: action_space.seed(123), one sampled action, reset(seed=123) and step twice:
        equivalent observations, rewards, terminations and infos; no truncation after one step; the step does
        not move ``np_random``."""
        env = self.env
        env.reset(seed=1)  # the action space learns the episode's tools
        env.action_space.seed(123)
        action = env.action_space.sample()
        self.assertIn(action, env.action_space)
        env.reset(seed=123)
        obs_0, rew_0, term_0, trunc_0, info_0 = env.step(action)
        orig_rng = env.unwrapped._np_random
        seeded_rng = copy.deepcopy(orig_rng)
        env.reset(seed=123)
        obs_1, rew_1, term_1, trunc_1, info_1 = env.step(action)
        self.assertEqual(orig_rng.bit_generator.state, seeded_rng.bit_generator.state)
        self.assertTrue(data_equivalence(obs_0, obs_1))
        self.assertTrue(data_equivalence(rew_0, rew_1))
        self.assertEqual(term_0, term_1)
        self.assertIs(trunc_0, False)
        self.assertIs(trunc_1, False)
        self.assertTrue(data_equivalence(info_0, info_1), f"{info_0} != {info_1}")

    def test_action_space_seed_makes_sample_reproducible(self) -> None:
        """check_step_determinism relies on ``action_space.seed(s)`` making ``sample()`` reproducible."""
        self.env.reset(seed=2)
        self.env.action_space.seed(9)
        first = [self.env.action_space.sample() for _ in range(5)]
        self.env.action_space.seed(9)
        self.assertEqual(first, [self.env.action_space.sample() for _ in range(5)])

    def test_observation_space_rejects_what_is_not_an_observation(self) -> None:
        """check_obs: ``obs in observation_space`` must mean something - foreign values are outside it."""
        space = self.env.observation_space
        for bad in (None, [], {"kind": "nope"}, {"kind": "tool", "text": 3}, {"kind": "tool", "output": float("nan")}):
            self.assertNotIn(bad, space)

    # ---- render and close -----------------------------------------------------------------------------

    def test_env_render_passive_checker_metadata(self) -> None:
        """env_render_passive_checker: ``metadata['render_modes']`` a list of strings, ``render_fps`` a positive
        number when there are modes, ``render_mode`` None or one of the modes."""
        modes = self.env.metadata["render_modes"]
        self.assertIsInstance(modes, (list, tuple))
        self.assertTrue(all(isinstance(m, str) for m in modes))
        self.assertGreater(self.env.metadata["render_fps"], 0)
        self.assertTrue(self.env.render_mode is None or self.env.render_mode in modes)
        self.assertIsNone(self.env.render())

    def test_render_ansi_returns_text(self) -> None:
        """_check_render_return: ANSI rendering produces a string; an unsupported mode is refused at creation."""
        env = CLIENT.make(domain="inventory", render_mode="ansi")
        try:
            obs, _ = env.reset(seed=3)
            text = env.render()
            self.assertIsInstance(text, str)
            self.assertIn(obs["text"][:20], text)
        finally:
            env.close()
        with self.assertRaises(ValueError):
            CLIENT.make(domain="inventory", render_mode="rgb_array")

    def test_close_twice_is_allowed(self) -> None:
        """check_env's close check: calling ``close()`` on a closed env must not raise."""
        env = CLIENT.make(domain="inventory")
        env.reset(seed=4)
        env.close()
        env.close()

    def test_np_random_without_seed_is_created(self) -> None:
        """Gymnasium's ``Env.np_random``: created (unseeded) on first use, ``np_random_seed`` -1 then."""
        env = CLIENT.make(domain="inventory")
        try:
            self.assertIsInstance(env.np_random, SeededRandom)
            self.assertEqual(env.np_random_seed, -1)
            env.reset(seed=11)
            self.assertEqual(env.np_random_seed, 11)
        finally:
            env.close()


if __name__ == "__main__":
    unittest.main()
