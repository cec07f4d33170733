#!/usr/bin/env bash
# README command 1: set up, then `ddl-gym demo`: the teacher srsf+ca, an agent cloned from it now and the
# shipped agent agent-transfer on held-out seeds of the default scenario (table, CSV, Gantt charts in results/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ddl-gym demo --out results/demo "$@"
