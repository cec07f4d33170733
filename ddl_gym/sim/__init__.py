"""The simulator core: cluster and job model, performance models, event engine, metrics.

Imports no gymnasium, torch or stable-baselines3.
"""

from ddl_gym._moved import install as _install_moved_paths
from ddl_gym.sim.alloc import Allocation
from ddl_gym.sim.engine import CAPABILITIES, InvariantError, Scheduler, SimulationError, Simulator, run_policy
from ddl_gym.sim.metrics import SUMMARY_KEYS, SimResult
from ddl_gym.sim.model import ARCHITECTURES, ClusterSpec, ConfigError, ModelProfile, ResourceType, Workload
from ddl_gym.sim.perf import (
    AllReduceContentionModel,
    RARContentionModel,
    make_performance_model,
    per_iteration_times,
)
from ddl_gym.sim.tasklevel import TaskLevelSimulator
from ddl_gym.sim.zoo import MODEL_ZOO, TABLE_III_MODELS, get_model

_install_moved_paths()  # the 0.1 paths ddl_gym.sim.perf_pipeline, perf_ps, perf_aonline, heavy_edge still import, with a warning

__all__ = [
    "ARCHITECTURES", "Allocation", "CAPABILITIES", "ResourceType", "AllReduceContentionModel", "ClusterSpec", "ConfigError", "InvariantError", "MODEL_ZOO", "ModelProfile",
    "RARContentionModel", "SUMMARY_KEYS", "Scheduler", "SimResult", "SimulationError", "Simulator",
    "TABLE_III_MODELS", "TaskLevelSimulator", "Workload", "get_model", "make_performance_model", "per_iteration_times", "run_policy",
]
