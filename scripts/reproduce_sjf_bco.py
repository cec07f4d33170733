"""Reproduce SJF-BCO §7 (Figs. 4–7): ``python scripts/reproduce_sjf_bco.py --seeds 3 --out results/sjf-bco --quick``."""
import sys

from ddl_gym.reproduce.sjf_bco import main

if __name__ == "__main__":
    sys.exit(main())
