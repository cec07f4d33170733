#!/usr/bin/env bash
# Create ./.venv-ray (if needed) for the Ray executor and RLlib: ddl-gym with its `ray` and `rl` extras
# (`rl`: the search rows of suite_eval and expert iteration run trained networks on Ray workers).
# A separate venv because ray[rllib] pins gymnasium==1.2.2 while the main venv may hold a newer gymnasium.
# torch==2.13.0 is installed first: a CPU wheel of it is in the local wheel folder pip searches, and
# installing it before ray[rllib] keeps pip from pulling a CUDA build (gigabytes).
# Fails (non-zero exit) if anything cannot be installed, e.g. without network: the Ray tests then fail too.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${DDL_GYM_RAY_VENV:-.venv-ray}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
pip_quiet() { "$VENV/bin/python" -m pip install -q "$@"; }
if ! "$VENV/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
  pip_quiet "torch==2.13.0"
fi
if ! "$VENV/bin/python" -c "import ray, ddl_gym, pytest, gymnasium, sb3_contrib, sys; sys.exit(0 if gymnasium.__version__ == '1.2.2' else 1)" 2>/dev/null; then
  pip_quiet -e ".[ray,rl]" "gymnasium==1.2.2" "pytest>=8"
fi
"$VENV/bin/python" -c "import ray, gymnasium, ddl_gym; print('ray venv:', '$VENV', '| ray', ray.__version__, '| gymnasium', gymnasium.__version__, '| ddl-gym', ddl_gym.__version__)"
