"""Malformed-input battery: run ``ddl-gym`` on hundreds of bad inputs and classify what happens.

Usage::

    python scripts/hardening_battery.py [--jobs 2] [--only csv-numbers,cli] [--write docs/robustness/hardening.md]
                                        [--baseline REV]   # also run the cases on git revision REV

Every case is one ``python -m ddl_gym.cli ...`` subprocess in its own folder, under a time limit
(``--timeout``, default 30 s) and an address-space limit (4 GiB), and gets one outcome:

* ``clean``: exit status 2 and exactly one stderr line ``ddl-gym: error: ...`` that names what the
  case says it must (file name, line, column, key ...);
* ``vague``: a one-line error that misses one of those names;
* ``traceback``: a Python traceback on stderr;
* ``silent``: exit status 0 on an input that must be rejected (garbage accepted);
* ``hang``: killed at the time limit (or by the memory limit);
* ``other``: anything else (several lines, another exit status);
* ``ok`` / ``rejected``: for the few *valid* inputs in the battery (a UTF-8 BOM, CRLF line ends),
  exit 0 or not.

``--baseline REV`` extracts ``REV`` with ``git archive`` into a temporary folder and runs the same
cases against it (``PYTHONPATH`` first), so one command gives the before/after table of the note.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

HEADER = ("job_id,arrival_s,gpus,iterations,model,weight,user,group,"
          "gradient_bytes,forward_s,backward_s,batch_size,gpu_memory_mb")
COLUMNS = HEADER.split(",")
GOOD_ROW = ["1", "5.0", "2", "100", "resnet50", "1", "-1", "-1", "1e8", "0.02", "0.03", "32", "1000"]
FIRST_ROW = "0,0.0,1,100,resnet50,1,-1,-1,,,,,"
EVAL = ["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1", "--out", "{dir}/out",
        "--no-plots", "--no-progress", "--workers", "1"]


@dataclass
class Case:
    cls: str
    name: str
    argv: list[str]
    files: dict[str, bytes | str] = field(default_factory=dict)
    expect: str = "error"  # "error" (must be rejected) or "ok" (valid input)
    mention: tuple[str, ...] = ()  # strings the one-line error must contain
    setup: Callable[[Path], None] | None = None
    forbid: tuple[str, ...] = ()  # strings stderr must never contain (a private file's content)


# ---------------------------------------------------------------------------- cases
#: Values outside each column's documented range (csv_io.FIELD_BOUNDS) or not numbers at all.
BAD_VALUES: dict[str, tuple[str, ...]] = {
    "job_id": ("1e300", "-1e300", "9.3e18", "9223372036854775808", "1.5", "nan", "inf", "abc", "", "1e999", "0x10"),
    "arrival_s": ("1e16", "1e300", "1e308", "1e10", "-1", "nan", "inf", "-inf", "", "abc"),
    "gpus": ("0", "-1", "1.5", "1e300", "1e7", "", "nan", "abc", "9.3e18"),
    "iterations": ("0", "-5", "1.5", "1e300", "1e16", "9.3e18", "", "nan", "abc"),
    "weight": ("1e308", "1e300", "1e7", "-1", "nan", "inf", "abc"),
    "user": ("1e300", "1.5", "9.3e18", "x", "nan", "-1e300"),
    "group": ("1e300", "1.5", "9.3e18", "x", "nan"),
    "gradient_bytes": ("1e300", "1e16", "-1", "nan", "abc", "inf"),
    "forward_s": ("1e300", "1e7", "-1", "nan", "abc"),
    "backward_s": ("1e300", "1e7", "-1", "nan", "abc"),
    "batch_size": ("0", "1.5", "1e300", "1e10", "abc", "-3"),
    "gpu_memory_mb": ("1e300", "1e10", "-1", "nan", "abc"),
}


def _csv(row: Sequence[str]) -> str:
    return f"{HEADER}\n{FIRST_ROW}\n{','.join(row)}\n"


def csv_number_cases() -> list[Case]:
    cases = []
    for column, values in BAD_VALUES.items():
        k = COLUMNS.index(column)
        for value in values:
            row = list(GOOD_ROW)
            row[k] = value
            cases.append(Case("csv-numbers", f"{column}={value or '<empty>'}",
                              [*EVAL, "--workload", "{dir}/jobs.csv"], {"jobs.csv": _csv(row)},
                              mention=("jobs.csv", "line 3", column)))
    return cases


def _sparse(name: str, size: int) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        with open(folder / name, "wb") as fh:
            fh.truncate(size)
    return make


def csv_structure_cases() -> list[Case]:
    w = [*EVAL, "--workload", "{dir}/jobs.csv"]
    valid = f"{HEADER}\n{FIRST_ROW}\n{','.join(GOOD_ROW)}\n"
    big = ",".join(["64"] * 1)
    cases = [
        Case("csv-structure", "header only", w, {"jobs.csv": HEADER + "\n"}, mention=("jobs.csv",)),
        Case("csv-structure", "comments only", w, {"jobs.csv": "# nothing\n# here\n"}, mention=("jobs.csv",)),
        Case("csv-structure", "empty file", w, {"jobs.csv": ""}, mention=("jobs.csv",)),
        Case("csv-structure", "blank lines only", w, {"jobs.csv": "\n\n   \n"}, mention=("jobs.csv",)),
        Case("csv-structure", "all jobs dropped (--drop-oversized)", [*w, "--drop-oversized"],
             {"jobs.csv": f"job_id,arrival_s,gpus,iterations,model\n0,0,{big},10,resnet50\n1,1,64,10,resnet50\n"},
             mention=("jobs.csv",)),
        Case("csv-structure", "BOM header only", w, {"jobs.csv": ("\ufeff" + HEADER + "\n").encode("utf-8")},
             mention=("jobs.csv",)),
        Case("csv-structure", "/dev/zero", [*EVAL, "--workload", "/dev/zero"], mention=("/dev/zero",)),
        Case("csv-structure", "/dev/urandom", [*EVAL, "--workload", "/dev/urandom"], mention=("/dev/urandom",)),
        Case("csv-structure", "3 GB sparse file of zeros", w, setup=_sparse("jobs.csv", 3 << 30), mention=("jobs.csv",)),
        Case("csv-structure", "a folder", [*EVAL, "--workload", "{dir}"], mention=("{dir}",)),
        Case("csv-structure", "missing file", [*EVAL, "--workload", "{dir}/absent.csv"], mention=("absent.csv",)),
        Case("csv-structure", "PNG bytes", w, {"jobs.csv": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4},
             mention=("jobs.csv",)),
        Case("csv-structure", "UTF-16 text", w, {"jobs.csv": valid.encode("utf-16")}, mention=("jobs.csv",)),
        Case("csv-structure", "NUL bytes in a row", w, {"jobs.csv": valid.replace("resnet50", "res\x00net50", 1)},
             mention=("jobs.csv",)),
        Case("csv-structure", "unterminated quote", w, {"jobs.csv": f'{HEADER}\n0,0,1,10,"resnet50\n1,2,3\n'},
             mention=("jobs.csv",)),
        Case("csv-structure", "duplicate header column", w,
             {"jobs.csv": "job_id,arrival_s,gpus,gpus,iterations,model\n0,0,1,1,10,resnet50\n"},
             mention=("jobs.csv", "gpus")),
        Case("csv-structure", "missing required column", w,
             {"jobs.csv": "job_id,arrival_s,gpus,model\n0,0,1,resnet50\n"}, mention=("jobs.csv", "iterations")),
        Case("csv-structure", "row with extra field", w, {"jobs.csv": valid + "9,1,1,10,resnet50,1,-1,-1,,,,,,7\n"},
             mention=("jobs.csv", "line 4")),
        Case("csv-structure", "duplicate job id", w, {"jobs.csv": valid + valid.splitlines()[2] + "\n"},
             mention=("jobs.csv", "job_id")),
        Case("csv-structure", "job larger than the cluster", w,
             {"jobs.csv": "job_id,arrival_s,gpus,iterations,model\n0,0,64,10,resnet50\n"},
             mention=("jobs.csv", "gpus")),
        Case("csv-structure", "unknown model, no profile", w,
             {"jobs.csv": "job_id,arrival_s,gpus,iterations,model\n0,0,1,10,gpt-17\n"}, mention=("jobs.csv", "model")),
        Case("csv-structure", "a 2 MB line", w, {"jobs.csv": f"{HEADER}\n0,0,1,10,{'x' * (2 << 20)},1,-1,-1,,,,,\n"},
             mention=("jobs.csv", "line 2")),
        Case("csv-structure", "header of 100k columns", w, {"jobs.csv": ",".join(f"c{i}" for i in range(100_000)) + "\n"},
             mention=("jobs.csv",)),
        # Valid inputs that must be accepted.
        Case("csv-structure", "UTF-8 BOM (spreadsheet export)", w, {"jobs.csv": ("\ufeff" + valid).encode("utf-8")},
             expect="ok"),
        Case("csv-structure", "CRLF line ends", w, {"jobs.csv": valid.replace("\n", "\r\n")}, expect="ok"),
    ]
    return cases


SCENARIO_OK = {
    "top": "name = 'x'\n",
    "cluster": "[cluster]\nservers = 2\ngpus_per_server = 4\n",
    "model": "",
    "workload": "[workload]\nkind = 'synthetic'\ngenerator = 'scaled'\nnum_jobs = 6\nmax_gpus = 4\n",
    "options": "",
}


def _scenario(**parts: str) -> str:
    merged = {**SCENARIO_OK, **parts}
    return "".join(merged[k] for k in ("top", "cluster", "model", "workload", "options"))


def scenario_cases() -> list[Case]:
    argv = ["eval", "--scenario", "{dir}/sc.toml", "--policies", "fifo+pack", "--seeds", "1", "--out", "{dir}/out",
            "--no-plots", "--no-progress", "--workers", "1"]
    cl = "[cluster]\n"
    wl = "[workload]\nkind = 'synthetic'\ngenerator = 'scaled'\n"
    specs: list[tuple[str, dict[str, str], tuple[str, ...]]] = [
        ("unknown top-level key", {"top": "name = 'x'\nnmae = 'y'\n"}, ("nmae",)),
        ("unknown [cluster] key", {"cluster": cl + "servers = 2\nservres = 4\n"}, ("servres",)),
        ("unknown [model] key", {"model": "[model]\nname = 'rar'\nxi3 = 1.0\n"}, ("xi3",)),
        ("unknown [workload] key", {"workload": wl + "num_jbos = 6\n"}, ("num_jbos",)),
        ("unknown [options] key", {"options": "[options]\ngpu_shareing = true\n"}, ("gpu_shareing",)),
        ("csv workload unknown key", {"workload": "[workload]\nkind = 'csv'\npath = 'j.csv'\ndrop_oversize = true\n"},
         ("drop_oversize",)),
        ("philly workload unknown key", {"workload": "[workload]\nkind = 'philly'\nmax_job = 5\n"}, ("max_job",)),
        ("servers as string", {"cluster": cl + "servers = '4'\n"}, ("servers",)),
        ("servers fractional", {"cluster": cl + "servers = 4.5\n"}, ("servers",)),
        ("servers boolean", {"cluster": cl + "servers = true\n"}, ("servers",)),
        ("servers zero", {"cluster": cl + "servers = 0\n"}, ("servers",)),
        ("servers 10^9", {"cluster": cl + "servers = 1000000000\n"}, ("servers",)),
        ("gpus_per_server string", {"cluster": cl + "servers = 2\ngpus_per_server = 'x'\n"}, ("gpus_per_server",)),
        ("gpus_per_server list with string", {"cluster": cl + "gpus_per_server = [4, 'a']\n"}, ("gpus_per_server",)),
        ("gpus_per_server empty list", {"cluster": cl + "gpus_per_server = []\n"}, ("gpus_per_server",)),
        ("gpus_per_server 10^6", {"cluster": cl + "servers = 2\ngpus_per_server = 1000000\n"}, ("gpus_per_server",)),
        ("gpus_per_server float", {"cluster": cl + "servers = 2\ngpus_per_server = 2.5\n"}, ("gpus_per_server",)),
        ("bandwidth string", {"cluster": cl + "servers = 2\ninter_bandwidth_gbps = 'fast'\n"}, ("inter_bandwidth_gbps",)),
        ("bandwidth negative", {"cluster": cl + "servers = 2\ninter_bandwidth_gbps = -1\n"}, ("inter_bandwidth_gbps",)),
        ("bandwidth inf", {"cluster": cl + "servers = 2\nintra_bandwidth_gbps = inf\n"}, ("intra_bandwidth_gbps",)),
        ("bandwidth 1e300", {"cluster": cl + "servers = 2\ninter_bandwidth_gbps = 1e300\n"}, ("inter_bandwidth_gbps",)),
        ("gpu memory nan", {"cluster": cl + "servers = 2\ngpu_memory_mb = nan\n"}, ("gpu_memory_mb",)),
        ("cluster not a table", {"cluster": "cluster = 5\n"}, ("cluster",)),
        ("cluster missing", {"cluster": ""}, ("cluster",)),
        ("model unknown name", {"model": "[model]\nname = 'quantum'\n"}, ("quantum",)),
        ("model as string", {"top": "name = 'x'\nmodel = 'rar'\n"}, ("model",)),
        ("model param string", {"model": "[model]\nname = 'rar'\nxi1 = 'x'\n"}, ("xi1",)),
        ("model param negative", {"model": "[model]\nname = 'rar'\nxi2 = -1.0\n"}, ("xi2",)),
        ("model param nan", {"model": "[model]\nname = 'allreduce'\neta = nan\n"}, ("eta",)),
        ("model degradation unknown", {"model": "[model]\nname = 'rar'\ndegradation = 'cubic'\n"}, ("degradation",)),
        ("workload kind unknown", {"workload": "[workload]\nkind = 'magic'\n"}, ("magic",)),
        ("workload generator unknown", {"workload": "[workload]\ngenerator = 'bogus'\n"}, ("bogus",)),
        ("num_jobs string", {"workload": wl + "num_jobs = 'many'\n"}, ("num_jobs",)),
        ("num_jobs negative", {"workload": wl + "num_jobs = -5\n"}, ("num_jobs",)),
        ("num_jobs zero", {"workload": wl + "num_jobs = 0\n"}, ("num_jobs",)),
        ("num_jobs 10^12", {"workload": wl + "num_jobs = 1000000000000\n"}, ("num_jobs",)),
        ("scaled without num_jobs", {"workload": wl}, ("num_jobs",)),
        ("max_gpus zero", {"workload": wl + "num_jobs = 4\nmax_gpus = 0\n"}, ("max_gpus",)),
        ("arrival rate negative", {"workload": wl + "num_jobs = 4\narrival_rate_per_s = -1.0\n"}, ("arrival_rate_per_s",)),
        ("iterations bad pair", {"workload": wl + "num_jobs = 4\niterations = [10]\n"}, ("iterations",)),
        ("window_s string", {"workload": "[workload]\ngenerator = 'ada_srsf'\nwindow_s = 'long'\n"}, ("window_s",)),
        ("gpu_mix bad", {"workload": "[workload]\ngenerator = 'ada_srsf'\ngpu_mix = {a = 1}\n"}, ("gpu_mix",)),
        ("csv path missing", {"workload": "[workload]\nkind = 'csv'\n"}, ("path",)),
        ("csv path absent file", {"workload": "[workload]\nkind = 'csv'\npath = 'nope.csv'\n"}, ("nope.csv",)),
        ("csv drop_oversized string", {"workload": "[workload]\nkind = 'csv'\npath = 'j.csv'\ndrop_oversized = 'yes'\n"},
         ("drop_oversized",)),
        ("philly table unknown", {"workload": "[workload]\nkind = 'philly'\ntable = 'helios'\n"}, ("helios",)),
        ("philly max_jobs negative", {"workload": "[workload]\nkind = 'philly'\nmax_jobs = -1\n"}, ("max_jobs",)),
        ("philly start string", {"workload": "[workload]\nkind = 'philly'\nstart = 'x'\n"}, ("start",)),
        ("engine unknown", {"top": "name = 'x'\nengine = 'bogus'\n"}, ("engine",)),
        ("engine number", {"top": "name = 'x'\nengine = 1\n"}, ("engine",)),
        ("options not a table", {"top": "name = 'x'\noptions = 5\n"}, ("options",)),
        ("gpu_sharing string", {"top": "name = 'x'\nengine = 'task'\n", "model": "[model]\nname = 'allreduce'\n",
                                "options": "[options]\ngpu_sharing = 'yes'\n"}, ("gpu_sharing",)),
        ("name not a string", {"top": "name = 5\n"}, ("name",)),
        ("description a list", {"top": "name = 'x'\ndescription = []\n"}, ("description",)),
    ]
    cases = []
    for name, parts, mention in specs:
        cases.append(Case("scenario", name, argv, {"sc.toml": _scenario(**parts),
                                                     "j.csv": "job_id,arrival_s,gpus,iterations,model\n0,0,1,10,resnet50\n"},
                          mention=("sc.toml", *mention)))
    jargv = [a.replace("sc.toml", "sc.json") for a in argv]
    cases += [
        Case("scenario", "JSON top-level list", jargv, {"sc.json": "[1, 2]"}, mention=("sc.json",)),
        Case("scenario", "JSON unknown [cluster] key", jargv,
             {"sc.json": '{"cluster": {"servers": 2, "gpu_per_server": 4}, "workload": {"generator": "scaled", "num_jobs": 4}}'},
             mention=("sc.json", "gpu_per_server")),
        Case("scenario", "JSON servers null", jargv,
             {"sc.json": '{"cluster": {"servers": null}, "workload": {"generator": "scaled", "num_jobs": 4}}'},
             mention=("sc.json", "servers")),
        Case("scenario", "invalid TOML", argv, {"sc.toml": "name = 'broken\n[cluster\n"}, mention=("sc.toml",)),
        Case("scenario", "empty file", argv, {"sc.toml": ""}, mention=("sc.toml", "cluster")),
        Case("scenario", "not UTF-8", argv, {"sc.toml": b"name = '\xff\xfe'\n"}, mention=("sc.toml",)),
        Case("scenario", "/dev/zero as scenario", [a.replace("{dir}/sc.toml", "/dev/zero") for a in argv],
             mention=("/dev/zero",)),
        Case("scenario", "a folder as scenario", [a.replace("{dir}/sc.toml", "{dir}") for a in argv], mention=("{dir}",)),
        Case("scenario", "20 MB scenario file", argv, {"sc.toml": _scenario() + "# " + "x" * (20 << 20) + "\n"},
             mention=("sc.toml",)),
    ]
    return cases


def _write_fake_agent(kind: str) -> Callable[[Path], None]:
    """Agent files of the wrong kind: a CSV renamed, a zip that is not a model, a broken sidecar."""

    def make(folder: Path) -> None:
        import zipfile

        agents = folder / "agents"
        agents.mkdir()
        if kind == "not-a-zip":
            (agents / "agent.zip").write_text("job_id,arrival_s\n")
            (agents / "agent.json").write_text('{"algo": "maskable-ppo", "window": 4}')
        elif kind == "random-zip":
            with zipfile.ZipFile(agents / "agent.zip", "w") as zf:
                zf.writestr("hello.txt", "hi")
            (agents / "agent.json").write_text(
                '{"algo": "maskable-ppo", "window": 4, "placements": ["pack"], "queue_order": "srsf",'
                ' "observation_layout": {}, "observation_shape": [3], "action_n": 5, "vecnormalize": null}')
        elif kind == "bad-sidecar":
            with zipfile.ZipFile(agents / "agent.zip", "w") as zf:
                zf.writestr("data", "{}")
            (agents / "agent.json").write_text("{not json")
        elif kind == "sidecar-missing-keys":
            with zipfile.ZipFile(agents / "agent.zip", "w") as zf:
                zf.writestr("data", "{}")
            (agents / "agent.json").write_text('{"algo": "maskable-ppo"}')
        elif kind == "no-sidecar":
            with zipfile.ZipFile(agents / "agent.zip", "w") as zf:
                zf.writestr("data", "{}")

    return make


def cli_cases() -> list[Case]:
    base = ["eval", "--scenario", "small", "--out", "{dir}/out", "--no-plots", "--no-progress", "--workers", "1"]
    ev = [*base, "--seeds", "1"]
    specs: list[tuple[str, list[str], tuple[str, ...]]] = [
        ("unknown policy", [*ev, "--policies", "fifo+pakc"], ("fifo+pakc",)),
        ("empty policy list", [*ev, "--policies", ""], ("--policies",)),
        ("only commas", [*ev, "--policies", ",,"], ("--policies",)),
        ("missing placement", [*ev, "--policies", "fifo+"], ("fifo+",)),
        ("missing order", [*ev, "--policies", "+pack"], ("+pack",)),
        ("unknown placement", [*ev, "--policies", "fifo+nope"], ("fifo+nope",)),
        ("mcts bad number", [*ev, "--policies", "mcts:guide=srsf+pack,sims=abc"], ("sims",)),
        ("mcts negative sims", [*ev, "--policies", "mcts:guide=srsf+pack,sims=-1"], ("sims",)),
        ("mcts unknown key", [*ev, "--policies", "mcts:guide=srsf+pack,foo=1"], ("foo",)),
        ("mcts unknown guide", [*ev, "--policies", "mcts:guide=nope"], ("nope",)),
        ("unknown agent kind", [*ev, "--policies", "dqn:agent.zip"], ("dqn",)),
        ("agent empty path", [*ev, "--policies", "maskable-ppo:"], ("maskable-ppo",)),
        ("agent missing file", [*ev, "--policies", "maskable-ppo:{dir}/none.zip"], ("none.zip",)),
        ("agent file is a CSV", [*ev, "--policies", "maskable-ppo:{dir}/agents/agent.zip"], ("agent.zip",)),
        ("agent zip not a model", [*ev, "--policies", "maskable-ppo:{dir}/agents/agent.zip"], ("agent.zip",)),
        ("agent sidecar not JSON", [*ev, "--policies", "maskable-ppo:{dir}/agents/agent.zip"], ("agent",)),
        ("agent sidecar incomplete", [*ev, "--policies", "maskable-ppo:{dir}/agents/agent.zip"], ("agent",)),
        ("agent without sidecar", [*ev, "--policies", "maskable-ppo:{dir}/agents/agent.zip"], ("agent",)),
        ("agent is a folder without agent", [*ev, "--policies", "ppo:{dir}"], ("agent",)),
        ("seeds zero", [*base, "--policies", "fifo+pack", "--seeds", "0"], ("--seeds",)),
        ("seeds negative", [*base, "--policies", "fifo+pack", "--seeds", "-2"], ("--seeds",)),
        ("seeds not a number", [*base, "--policies", "fifo+pack", "--seeds", "x"], ("--seeds",)),
        ("seeds float", [*base, "--policies", "fifo+pack", "--seeds", "1.5"], ("--seeds",)),
        ("seeds 10^12", [*base, "--policies", "fifo+pack", "--seeds", "1000000000000"], ("--seeds",)),
        ("seed list letters", [*base, "--policies", "fifo+pack", "--seed-list", "a,b"], ("seed",)),
        ("seed list negative", [*base, "--policies", "fifo+pack", "--seed-list", "-1"], ("seed",)),
        ("seed list beyond int64", [*base, "--policies", "fifo+pack", "--seed-list", "99999999999999999999999"],
         ("seed",)),
        ("seed list empty", [*base, "--policies", "fifo+pack", "--seed-list", ","], ("seed",)),
        ("workers zero", [*ev[:-2], "--policies", "fifo+pack", "--seeds", "1", "--workers", "0"], ("--workers",)),
        ("workers negative", [*ev[:-2], "--policies", "fifo+pack", "--seeds", "1", "--workers", "-3"], ("--workers",)),
        ("workers 10^6", [*ev[:-2], "--policies", "fifo+pack", "--seeds", "2", "--workers", "1000000"], ("--workers",)),
        ("workers not a number", [*ev[:-2], "--policies", "fifo+pack", "--seeds", "1", "--workers", "two"],
         ("--workers",)),
        ("out is a file", ["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1", "--out",
                           "{dir}/afile", "--no-plots", "--no-progress"], ("afile",)),
        ("out under /proc", ["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1", "--out",
                             "/proc/ddl-gym-out", "--no-plots", "--no-progress"], ("/proc/ddl-gym-out",)),
        ("out under /dev/null", ["eval", "--scenario", "small", "--policies", "fifo+pack", "--seeds", "1", "--out",
                                 "/dev/null/x", "--no-plots", "--no-progress"], ("/dev/null",)),
        ("unknown subcommand", ["evaluate"], ("evaluate",)),
        ("unknown option", ["eval", "--policies", "fifo+pack", "--sedes", "1"], ("--sedes",)),
        ("missing --policies", ["eval", "--scenario", "small"], ("--policies",)),
        ("demo timesteps negative", ["demo", "--timesteps", "-5", "--out", "{dir}/d"], ("--timesteps",)),
        ("demo seeds zero", ["demo", "--seeds", "0", "--timesteps", "0", "--out", "{dir}/d"], ("--seeds",)),
        ("train timesteps negative", ["train", "--scenario", "small", "--timesteps", "-1", "--out", "{dir}/t"],
         ("--timesteps",)),
        ("train n-envs zero", ["train", "--scenario", "small", "--n-envs", "0", "--out", "{dir}/t"], ("--n-envs",)),
        ("train unknown preset", ["train", "--scenario", "small", "--preset", "nope", "--out", "{dir}/t"], ("nope",)),
        ("train unknown algo", ["train", "--scenario", "small", "--algo", "dqn", "--out", "{dir}/t"], ("dqn",)),
        ("train unknown scenario", ["train", "--scenario", "nowhere", "--timesteps", "64", "--out", "{dir}/t"],
         ("nowhere",)),
        ("train out is a file", ["train", "--scenario", "small", "--timesteps", "64", "--out", "{dir}/afile"],
         ("afile",)),
        ("train bad bc expert", ["train", "--scenario", "small", "--timesteps", "64", "--bc-expert", "nope",
                                 "--out", "{dir}/t"], ("nope",)),
        ("train missing --out", ["train", "--scenario", "small"], ("--out",)),
        ("train window zero", ["train", "--scenario", "small", "--window", "0", "--timesteps", "64", "--out", "{dir}/t"],
         ("window",)),
        ("reproduce unknown target", ["reproduce", "nope"], ("nope",)),
        ("reproduce bad seeds", ["reproduce", "sjf-bco", "--seeds", "x", "--out", "{dir}/r"], ("--seeds",)),
        ("bench unknown option", ["bench", "--bogus"], ("--bogus",)),
    ]
    setups = {
        "agent file is a CSV": _write_fake_agent("not-a-zip"),
        "agent zip not a model": _write_fake_agent("random-zip"),
        "agent sidecar not JSON": _write_fake_agent("bad-sidecar"),
        "agent sidecar incomplete": _write_fake_agent("sidecar-missing-keys"),
        "agent without sidecar": _write_fake_agent("no-sidecar"),
    }
    cases = []
    for name, argv, mention in specs:
        cases.append(Case("cli", name, argv, {"afile": "x"}, mention=mention, setup=setups.get(name)))
    return cases


SECRET = "hunter2-private-token"
_EV = ["eval", "--scenario", "small", "--seeds", "1", "--out", "{dir}/out", "--no-plots", "--no-progress", "--workers", "1"]


def bounds_cases() -> list[Case]:
    """Sizes and counts a user can type, and floats that reach the simulator (issue 30)."""
    policy = [("smd:attempts=1000000000", "attempts"), ("smd:attempts=0", "attempts"), ("smd:eps=1e-9", "eps"),
              ("smd:eps=nan", "eps"), ("smd:eps=-1", "eps"), ("smd:m_delta=inf", "m_delta"), ("smd-fc:q=50", "q"),
              ("smd:attempts=2.5", "attempts")]
    cases = [Case("bounds", f"policy {spec}", ["eval", "--scenario", "smd-sync", *_EV[3:], "--policies", spec], mention=(key,))
             for spec, key in policy]
    smd = '[cluster]\nunits = 1\n[workload]\nkind = "smd"\n'
    win = '[cluster]\nservers = 4\ngpus_per_server = 4\n[workload]\nkind = "philly-slice"\n'
    files = [("smd num_jobs 1e9", smd + "num_jobs = 1000000000\n", "num_jobs"),
             ("smd num_jobs 0", smd + "num_jobs = 0\n", "num_jobs"),
             ("smd time_scale_factor nan", smd + "time_scale_factor = nan\n", "time_scale_factor"),
             ("smd time_scale inf", smd + "time_scale = inf\n", "time_scale"),
             ("window num_jobs 1e9", win + "num_jobs = 1000000000\n", "num_jobs"),
             ("window time_scale nan", win + "time_scale = nan\n", "time_scale"),
             ("window allow_fewer text", win + 'allow_fewer = "yes"\n', "allow_fewer"),
             ("window 160 of 3 jobs", win + 'path = "three.csv"\n', "fewer than num_jobs")]
    three = "#job id,arrival time (sec),topology,shape,size,duration (sec)\n" + "".join(
        f"{i},{i * 10}.0,CLOS,1,1,100.0\n" for i in range(3))
    cases += [Case("bounds", f"scenario file {name}", ["eval", "--scenario", "{dir}/s.toml", *_EV[3:], "--policies",
                                                       "esw" if "smd" in name else "fifo+pack"],
                   files={"s.toml": text, "three.csv": three}, mention=("s.toml" if "160" not in name else "three.csv", key))
              for name, text, key in files]
    cli = [(["reproduce", "a-srpt", "--table2-cases", "-5"], "--table2-cases"),
           (["reproduce", "a-srpt", "--table2-cases", "0"], "--table2-cases"),
           (["reproduce", "smd", "--eps", "1e-9"], "--eps"), (["reproduce", "smd", "--eps", "nan"], "--eps"),
           (["leaderboard", "--workers", "0"], "--workers"), (["scenarios", "--seeds", "0"], "--seeds"),
           (["scenarios", "--workers", "-1"], "--workers"), (["train", "--timesteps", "0", "--out", "{dir}/t"], "--timesteps"),
           (["train", "--n-envs", "0", "--out", "{dir}/t"], "--n-envs")]
    cases += [Case("bounds", " ".join(argv[:3]), argv, mention=(key,)) for argv, key in cli]
    return cases


def ignored_cases() -> list[Case]:
    """Options that used to be accepted and silently ignored (issue 30)."""
    jobs = "job_id,arrival_s,gpus,iterations,model\n0,0,1,100,resnet50\n"
    torn = ("scenario,policy,seed,avg_jct_s\nsmall,fifo+pack,0,\n")
    return [
        Case("ignored", "--workload on aonline-ps-small", ["eval", "--scenario", "aonline-ps-small", *_EV[3:],
                                                            "--policies", "fifo-mr", "--workload", "{dir}/j.csv"],
             files={"j.csv": jobs}, mention=("--workload",)),
        Case("ignored", "--seeds with --seed-list", [*_EV, "--policies", "fifo+pack", "--seed-list", "1,2"],
             mention=("--seed-list",)),
        Case("ignored", "--metrics without --reference", [*_EV, "--policies", "fifo+pack", "--metrics", "avg_jct_s"],
             mention=("--metrics",)),
        Case("ignored", "--drop-oversized without --workload", [*_EV, "--policies", "fifo+pack", "--drop-oversized"],
             mention=("--drop-oversized",)),
        Case("ignored", "train --device cuda without CUDA", ["train", "--device", "cuda", "--out", "{dir}/t"],
             mention=("--device",)),
        Case("ignored", "train --device nonsense", ["train", "--device", "abacus", "--out", "{dir}/t"],
             mention=("--device",)),
        Case("ignored", "compare on a torn summary", ["compare", "--out", "{dir}", "--reference", "fifo+pack"],
             files={"summary.csv": torn}, mention=("summary.csv",)),
    ]


def preset_cases() -> list[Case]:
    """`ddl-gym train --preset FILE` with bad files: one named line, never an internal error."""
    texts = {
        "YAML list": ("- a\n- b\n", "mapping"), "syntax error": ("a: [\n", "YAML"),
        "learning_rate text": ("ppo:\n  learning_rate: fast\n", "ppo.learning_rate"),
        "learning_rate at top": ("learning_rate: 0.1\n", "learning_rate"), "unknown key": ("bogus: 1\n", "bogus"),
        "timesteps text": ("timesteps: lots\n", "timesteps"), "gamma 2": ("ppo:\n  gamma: 2\n", "gamma"),
        "net_arch zero": ("ppo:\n  net_arch: [0]\n", "net_arch"), "eval section list": ("eval: [1]\n", "eval"),
        "env window 0": ("inherit: default\nenv:\n  window: 0\n", "window"),
        "env unknown arg": ("inherit: default\nenv:\n  windw: 4\n", "windw"),
        "env reward_scale nan": ("inherit: default\nenv:\n  reward_scale: .nan\n", "reward_scale"),
        "inherit cycle": ("inherit: p.yaml\n", "cycle"), "missing sections": ("timesteps: 5\n", "missing"),
        "private text": (f"[{SECRET} and more\n", "p.yaml"),
    }
    return [Case("preset", name, ["train", "--preset", "{dir}/p.yaml", "--out", "{dir}/t"], files={"p.yaml": text},
                 mention=(key,), forbid=(SECRET,)) for name, (text, key) in texts.items()]


def echo_cases() -> list[Case]:
    """A file that is not what an option expects: the error names it and never repeats its content."""
    private = f"{SECRET} and other private words\nline two\n"
    return [Case("no-echo", f"{what} given a private text", argv, files={"priv.txt": private}, mention=("priv.txt",),
                 forbid=(SECRET,))
            for what, argv in (("--scenario", ["eval", "--scenario", "{dir}/priv.txt", *_EV[3:], "--policies", "fifo+pack"]),
                               ("--workload", [*_EV, "--policies", "fifo+pack", "--workload", "{dir}/priv.txt"]),
                               ("--preset", ["train", "--preset", "{dir}/priv.txt", "--out", "{dir}/t"]))]


CLASSES: dict[str, Callable[[], list[Case]]] = {
    "csv-numbers": csv_number_cases,
    "csv-structure": csv_structure_cases,
    "scenario": scenario_cases,
    "cli": cli_cases,
    "bounds": bounds_cases,
    "ignored": ignored_cases,
    "preset": preset_cases,
    "no-echo": echo_cases,
}


# ---------------------------------------------------------------------------- running
def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run_case(case: Case, python: str, pythonpath: str | None, timeout: float) -> tuple[str, str]:
    folder = Path(tempfile.mkdtemp(prefix="battery-"))
    try:
        for name, content in case.files.items():
            path = folder / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8", newline="")
        if case.setup is not None:
            case.setup(folder)
        argv = [a.replace("{dir}", str(folder)) for a in case.argv]
        mention = [m.replace("{dir}", str(folder)) for m in case.mention]
        env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        try:
            proc = subprocess.run([python, "-m", "ddl_gym.cli", *argv], cwd=folder, env=env, capture_output=True,
                                  text=True, errors="replace", timeout=timeout, preexec_fn=_limit_memory)
        except subprocess.TimeoutExpired:
            return "hang", f"killed after {timeout:.0f} s"
        err = proc.stderr
        lines = [line for line in err.splitlines() if line.strip()]
        if any(secret in err for secret in case.forbid):
            return "echo", "stderr repeats the file's content"
        # A real traceback starts its line; the string inside an error message does not count.
        if any(line.startswith("Traceback (most recent call last)") for line in lines):
            return "traceback", (lines[-1] if lines else "")[:200]
        if case.expect == "ok":
            return ("ok" if proc.returncode == 0 else "rejected"), (lines[-1] if lines else "")[:200]
        if proc.returncode == 0:
            return "silent", "exit 0"
        if proc.returncode in (-9, 137) or "MemoryError" in err:
            return "hang", "memory limit"
        if proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("ddl-gym: error: "):
            missing = [m for m in mention if m not in lines[0]]
            return ("vague" if missing else "clean"), lines[0][:200] + (f"  [missing {missing}]" if missing else "")
        return "other", f"exit {proc.returncode}: " + " / ".join(lines[-2:])[:200]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_battery(cases: list[Case], python: str, pythonpath: str | None, jobs: int, timeout: float,
                verbose: bool) -> list[tuple[Case, str, str]]:
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(lambda c: run_case(c, python, pythonpath, timeout), cases))
    results = [(c, o, d) for c, (o, d) in zip(cases, outcomes)]
    if verbose:
        for case, outcome, detail in results:
            print(f"{case.cls:14s} {outcome:9s} {case.name:40s} {detail}", file=sys.stderr)
    return results


def extract_revision(rev: str) -> Path:
    """``git archive REV`` into a temporary folder laid out like the installed package."""
    folder = Path(tempfile.mkdtemp(prefix="battery-baseline-"))
    archive = subprocess.run(["git", "archive", rev], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    for sub in ("baselines", "agents"):  # installed as ddl_gym.baselines / ddl_gym.agents
        link = folder / "ddl_gym" / sub
        if not link.exists():
            link.symlink_to(folder / sub, target_is_directory=True)
    return folder


def summarise(results: list[tuple[Case, str, str]]) -> dict[str, Counter]:
    table: dict[str, Counter] = {}
    for case, outcome, _ in results:
        table.setdefault(case.cls, Counter())[outcome] += 1
    return table


OUTCOMES = ("clean", "vague", "traceback", "silent", "hang", "other", "ok", "rejected")


def markdown(after: dict[str, Counter], before: dict[str, Counter] | None, rev: str | None) -> str:
    lines = ["| class | cases | " + ("clean before | " if before else "") + "clean now | "
             + " | ".join(o for o in OUTCOMES if o != "clean") + " |"]
    lines.append("|---|---:|" + ("---:|" if before else "") + "---:|" + "---:|" * (len(OUTCOMES) - 1))
    for cls in after:
        now = after[cls]
        total = sum(now.values())
        cells = [cls, str(total)]
        if before:
            b = before.get(cls, Counter())
            cells.append(f"{b['clean'] + b['ok']}")
        cells.append(f"{now['clean'] + now['ok']}")
        cells += [str(now[o]) for o in OUTCOMES if o != "clean"]
        lines.append("| " + " | ".join(cells) + " |")
    note = ("'clean' counts clean one-line errors for bad inputs plus accepted valid inputs ('ok'); "
            "the other columns are today's outcomes.")
    if before:
        note += f" 'clean before' is the same battery on revision {rev}."
    return "\n".join(lines) + "\n\n" + note + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hardening_battery.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CLASSES), help=f"classes to run ({', '.join(CLASSES)})")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--baseline", metavar="REV", help="also run the battery on this git revision")
    parser.add_argument("--rev", metavar="REV", help="run the battery on this git revision instead of the working tree")
    parser.add_argument("--write", type=Path, help="write the Markdown report here")
    parser.add_argument("--verbose", action="store_true", help="one line per case on stderr")
    args = parser.parse_args(argv)
    names = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = [n for n in names if n not in CLASSES]
    if unknown:
        parser.error(f"unknown class {unknown[0]!r}; choose from {', '.join(CLASSES)}")
    cases = [case for n in names for case in CLASSES[n]()]
    t0 = time.perf_counter()
    current = extract_revision(args.rev) if args.rev else None
    try:
        after_results = run_battery(cases, sys.executable, str(current) if current else None, args.jobs,
                                    args.timeout, args.verbose)
    finally:
        if current is not None:
            shutil.rmtree(current, ignore_errors=True)
    before = None
    if args.baseline:
        tree = extract_revision(args.baseline)
        try:
            before = summarise(run_battery(cases, sys.executable, str(tree), args.jobs, args.timeout, args.verbose))
        finally:
            shutil.rmtree(tree, ignore_errors=True)
    after = summarise(after_results)
    report = markdown(after, before, args.baseline)
    details = ["", "Cases that are not clean now:", ""]
    for case, outcome, detail in after_results:
        if outcome not in ("clean", "ok"):
            details.append(f"* `{case.cls}` / {case.name}: **{outcome}** — {detail}")
    if len(details) == 3:
        details.append("(none)")
    text = report + "\n".join(details) + "\n"
    print(text)
    print(f"({len(cases)} cases in {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
