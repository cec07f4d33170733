#!/usr/bin/env bash
# README command 2 (and CI): set up, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYTHONHASHSEED=0
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
