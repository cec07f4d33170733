"""Your own cluster and workload: a scenario file and a workload CSV, from Python and the CLI.

    python examples/own_cluster/run.py
    ddl-gym eval --scenario examples/own_cluster/cluster.toml --policies srsf+ca,fifo+pack --seeds 1 --out /tmp/mine
"""

from pathlib import Path

from ddl_gym.envs.cluster_env import DDLClusterEnv
from ddl_gym.harness import evaluate

here = Path(__file__).resolve().parent
scenario = here / "cluster.toml"

# The harness: reference policies on this cluster (the CSV is the workload of every seed).
results = evaluate(["srsf+ca", "fifo+pack", "sjf+spread"], scenario, seeds=1, workers=1,
                   progress=False, echo=False)
print(results.markdown)

# The env on the same file: one episode with "start the first startable slot, packed".
env = DDLClusterEnv(scenario)
obs, info = env.reset(seed=0)
done = False
while not done:
    startable = [a for a in range(1, env.action_space.n) if info["action_mask"][a]]
    action = env.action_for(env.decode_action(startable[0]).slot, "pack") if startable else 0
    obs, reward, terminated, truncated, info = env.step(action)
    done = terminated or truncated
print(f"env episode: {info['metrics']['jobs']} jobs, average JCT {info['metrics']['avg_jct_s']:.0f} s")
