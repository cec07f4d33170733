#!/usr/bin/env bash
# Create ./.venv (if needed), install ddl-gym with its RL, test and native-build extras, and compile the
# task-level engine (optional; skipped with a message if it cannot build).
# torch==2.13.0 is installed first: a CPU wheel of it is in the local wheel folder pip searches,
# and installing it before stable-baselines3 keeps pip from pulling a CUDA build (gigabytes).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
pip_quiet() { python -m pip install -q "$@"; }
if ! python -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
  pip_quiet "torch==2.13.0"
fi
pip_quiet -e ".[rl,dev,native,docs]"
# The job-level and task-level engines compiled with mypyc (same source, identical results, faster);
# plain Python is used wherever this cannot build (no C compiler) or with DDL_GYM_NO_NATIVE=1.
if [ "${DDL_GYM_NO_NATIVE:-0}" != "1" ]; then
  python scripts/build_native.py --if-stale \
    || echo "setup: compiled engines not built; the plain-Python engines are used (same results, slower)"
fi
python -c "import ddl_gym, torch, stable_baselines3, sb3_contrib; print('ddl-gym', ddl_gym.__version__, '| torch', torch.__version__, '| sb3', stable_baselines3.__version__)"
