"""Workloads: the papers' synthetic generators, the workload CSV format, trace loaders (Philly,
Alibaba GPU v2023) and trace windows split into training / evaluation time ranges (``windows``)."""

from __future__ import annotations

from ddl_gym.workloads.alibaba import load_alibaba, load_alibaba_nodes
from ddl_gym.workloads.csv_io import read_workload_csv, write_workload_csv
from ddl_gym.workloads.philly import default_trace_path, load_philly
from ddl_gym.workloads.synthetic import (
    PAPER_GPU_MIX,
    PAPER_ITERATIONS,
    TABLE_III,
    ada_srsf_workload,
    default_workload,
    resolve_models,
    scaled_workload,
    sjf_bco_workload,
)

__all__ = [
    "PAPER_GPU_MIX",
    "PAPER_ITERATIONS",
    "TABLE_III",
    "ada_srsf_workload",
    "default_trace_path",
    "default_workload",
    "load_alibaba",
    "load_alibaba_nodes",
    "load_philly",
    "read_workload_csv",
    "resolve_models",
    "scaled_workload",
    "sjf_bco_workload",
    "write_workload_csv",
]
