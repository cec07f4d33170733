#!/usr/bin/env bash
# README command 1: set up, then compare the reference policies and a briefly trained MaskablePPO
# agent on the embedded default scenario (table printed, CSV + plots in results/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ddl-gym demo --out results/demo "$@"
