#!/usr/bin/env bash
# README command 2 (and CI): set up, then run the whole test suite.
# Without arguments it then runs the Ray tests (a real three-node Ray cluster on this machine, RLlib
# with action masking) in their own venv, .venv-ray (scripts/setup_ray.sh; ray[rllib] pins
# gymnasium==1.2.2): if that venv cannot be installed (no network), the run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The docs test opens the built site in headless Chromium (Debian's package); install it where missing.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
    || echo "test.sh: could not install chromium (tests/test_docs_site.py needs it)"
fi
export PYTHONHASHSEED=0
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
if [ "$#" -eq 0 ]; then
  bash scripts/setup_ray.sh
  DDL_GYM_RAY_TESTS=1 .venv-ray/bin/python -m pytest -q -p no:cacheprovider tests/ray_cluster
fi
