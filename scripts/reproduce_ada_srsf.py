"""Reproduce Ada-SRSF (Wang et al. 2020) §V: Tables IV-V, κ study, η sensitivity, probe defect (see --help)."""
from ddl_gym.baselines.ada_srsf_repro import main
if __name__ == "__main__": raise SystemExit(main())
