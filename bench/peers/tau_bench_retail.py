"""tau-bench's retail environment on this machine, in-process, with a scripted user instead of its LLM user.

Usage: python3 tau_bench_retail.py PEERS/tau-bench SPLIT [seconds]
Measures, on SPLIT's tasks: full episodes (reset, every gold action through env.step, then the reply that
ends the conversation and triggers tau-bench's reward: reload, replay of the gold actions, hashes compared),
gold tool steps (the same calls without reset or reward) and read-only steps (get_order_details,
get_user_details, get_product_details on the split's own ids). Prints one JSON object.
"""
import json
import statistics
import sys
import time

sys.path.insert(0, sys.argv[1])
import stubs  # noqa: E402

stubbed = stubs.install(["litellm", "openai", "anthropic", "google", "mistralai", "tenacity"])

from tau_bench.envs.retail.env import MockRetailDomainEnv  # noqa: E402
from tau_bench.envs.user import BaseUserSimulationEnv  # noqa: E402
from tau_bench.types import RESPOND_ACTION_NAME, Action  # noqa: E402

split = sys.argv[2]
budget = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0


class ScriptedUser(BaseUserSimulationEnv):
    """Opens with the task's instruction and ends the conversation at the agent's first reply."""

    def reset(self, instruction=None):
        return instruction or ""

    def step(self, content):
        return "###STOP###"

    def get_total_cost(self):
        return 0.0


env = MockRetailDomainEnv(user_strategy="human", task_split=split, task_index=0)
env.user = ScriptedUser()
tasks = env.tasks
done_action = Action(name=RESPOND_ACTION_NAME, kwargs={"content": "Done."})


def episode(index):
    env.reset(task_index=index)
    for action in env.tasks[index].actions:
        if action.name != RESPOND_ACTION_NAME:
            env.step(action)
    response = env.step(done_action)
    assert response.done
    return response.reward


def rate(fn, seconds, runs=3):
    """Median calls per CPU-second (time.process_time) of fn(i) over `runs` timed runs; i counts on across runs, so every run gets new tasks."""
    results = []
    i = 0
    for _ in range(runs):
        n = 0
        start = time.process_time()
        while True:
            fn(i)
            i += 1
            n += 1
            elapsed = time.process_time() - start
            if elapsed >= seconds / runs:
                break
        results.append(n / elapsed)
    return statistics.median(results)


rewards = []


def episodes(n):
    rewards.append(episode(n % len(tasks)))


gold_calls = [a for t in tasks for a in t.actions if a.name != RESPOND_ACTION_NAME]
env.reset(task_index=0)


def gold_steps(n):
    # Reload the database every pass so writes act on the state they were written for.
    if n % len(gold_calls) == 0:
        env.data = env.data_load_func()
    env.step(gold_calls[n % len(gold_calls)])


# The split's gold calls are mostly writes: the read mix asks for the orders, users and products they touch.
reads = []
for a in gold_calls:
    if "order_id" in a.kwargs:
        reads.append(Action(name="get_order_details", kwargs={"order_id": a.kwargs["order_id"]}))
    if "user_id" in a.kwargs:
        reads.append(Action(name="get_user_details", kwargs={"user_id": a.kwargs["user_id"]}))
    if "product_id" in a.kwargs:
        reads.append(Action(name="get_product_details", kwargs={"product_id": a.kwargs["product_id"]}))


def read_steps(n):
    env.step(reads[n % len(reads)])


episodes_per_sec = rate(episodes, budget)
gold_steps_per_sec = rate(gold_steps, budget / 2)
read_steps_per_sec = rate(read_steps, budget / 2)
print(json.dumps({
    "python": sys.version.split()[0],
    "split": split,
    "tasks": len(tasks),
    "episodes_measured": len(rewards),
    "gold_rewarded": sum(1 for r in rewards if r == 1.0),
    "gold_calls": len(gold_calls),
    "read_calls": len(reads),
    "stubbed": stubbed,
    "episodes_per_sec": episodes_per_sec,
    "gold_steps_per_sec": gold_steps_per_sec,
    "read_steps_per_sec": read_steps_per_sec,
}))
