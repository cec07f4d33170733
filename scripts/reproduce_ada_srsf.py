"""Reproduce Ada-SRSF (Wang et al. 2020) §V: Tables IV-V, κ study, η sensitivity, probe defect (see --help)."""
from ddl_gym.reproduce.ada_srsf import main
if __name__ == "__main__": raise SystemExit(main())
