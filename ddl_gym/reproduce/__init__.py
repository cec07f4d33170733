"""Paper reproductions: ``ddl-gym reproduce NAME [ARGS...]`` runs ``ddl_gym.reproduce.<module>.main(ARGS)``.

Registry (:data:`REGISTRY`): reproduction name → module of this package. Adding a paper is one
module plus one line here.

Contract every reproduction module follows:

* ``main(argv: Sequence[str] | None = None) -> int`` — parses its own arguments, returns the exit
  status (0 on success);
* ``--quick`` — a reduced grid (small seeds/grid, possibly a reduced workload) that runs in seconds
  and whose claims table is committed under ``docs/reproductions/<paper>/`` (:mod:`ddl_gym.report_paths`) and checked by a test;
* ``--seeds N|A:B|a,b,c`` — the seeds, read by :func:`ddl_gym.cliargs.add_seeds_argument` like
  ``ddl-gym eval``: ``N`` = seeds ``0..N-1`` (so ``--seeds N`` runs what it always ran), ``A:B`` = seeds
  ``A..B-1``, ``a,b,c`` = exactly these; every experiment loops over that list (``sjf-bco`` also keeps
  ``--first-seed F``, which shifts ``0..N-1`` to ``F..F+N-1``);
* ``--workers K`` — parallel processes (:func:`ddl_gym.cliargs.add_workers_argument`; ``--jobs K``
  is its older, hidden spelling and still works);
* ``build_parser()`` / ``parse_args(argv)`` — the parser, and the parsed arguments with the seed list
  the run will use (tests check the seeds reach the module without running it);
* ``--out DIR`` — writes its data (CSV), figures, ``report.md`` and ``claims.md`` there;
* ``--report PATH`` / ``--claims PATH`` — also write the Markdown report / the claims table to
  these paths (how ``docs/reproductions/`` is regenerated; reports there are never edited by hand);
* every verdict comes from :mod:`ddl_gym.reproduce.verdict` (one rule for every paper), and the
  report's header states that rule; our numbers are printed beside the paper's, never asserted.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType

from ddl_gym.sim.model import ConfigError

#: Reproduction name (as typed after ``ddl-gym reproduce``) → module in :mod:`ddl_gym.reproduce`.
REGISTRY: dict[str, str] = {
    "sjf-bco": "sjf_bco",  # Yu et al., MobiHoc'22, §7 Figs. 4-7
    "ada-srsf": "ada_srsf",  # Wang et al. 2020, §V Tables IV-V, Fig. 5
    "a-srpt": "a_srpt",  # Luo et al., §V Figs. 4-9, Table II
    "smd": "smd",  # Yu, Wu, Ji, Liu, INFOCOM'21, §V Figs. 7-12
    "a-online": "a_online",  # Zhou et al., §7 Figs. 2-12, §5.3
}

#: Reproduction name → importable module path (what the CLI imports).
REPRODUCTIONS: dict[str, str] = {name: f"{__name__}.{module}" for name, module in REGISTRY.items()}


def load(name: str) -> ModuleType:
    """The module of reproduction ``name``; a :class:`ConfigError` names the known ones."""
    if name not in REGISTRY:
        raise ConfigError(f"unknown reproduction {name!r}; choose one of {', '.join(REGISTRY)}")
    return importlib.import_module(REPRODUCTIONS[name])


def run(name: str, argv: Sequence[str] | None = None) -> int:
    """Run reproduction ``name`` with command-line arguments ``argv``; returns its exit status."""
    return int(load(name).main(list(argv or [])))


__all__ = ["REGISTRY", "REPRODUCTIONS", "load", "run"]
