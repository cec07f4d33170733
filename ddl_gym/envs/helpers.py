"""Action and observation helpers of :class:`~ddl_gym.envs.cluster_env.DDLClusterEnv` (a mixin).

No hand-computed indices: ``env.unwrapped.action_for(slot, rule)`` gives the action that starts
the job in queue slot ``slot`` with placement ``rule`` (an index into ``env.placements`` or a
placement name/alias), :meth:`~ActionObservationHelpers.decode_action` turns an action back into
words, and :meth:`~ActionObservationHelpers.observation_view` names every block and feature of an
observation (``view["jobs"]["est_runtime"][slot]``). Nothing here changes the env's dynamics or
observations.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ddl_gym.sim.model import ConfigError


class DecodedAction(NamedTuple):
    """An action in words: ``kind`` is ``"advance"`` or ``"start"``; for a start, the queue ``slot``,
    the ``placement`` rule's name and the workload row ``job`` now in that slot (``None`` if empty
    or out of range)."""

    kind: str
    slot: int | None = None
    placement: str | None = None
    job: int | None = None


class ActionObservationHelpers:
    """Mixin: needs ``placement_names``, ``max_window``, ``observation``, ``observation_layout``."""

    placement_names: tuple[str, ...]
    max_window: int
    observation: str
    observation_layout: dict[str, Any]

    @property
    def placements(self) -> tuple[str, ...]:
        """The placement rules of the action space, as given to the constructor's ``placements``
        (``placement_names`` is the older name of this attribute)."""
        return self.placement_names

    def _rule_index(self, rule: int | str) -> int:
        names = self.placement_names
        if isinstance(rule, (int, np.integer)) and not isinstance(rule, bool):
            if not 0 <= int(rule) < len(names):
                raise ConfigError(f"placement index {rule} is out of range 0..{len(names) - 1} ({', '.join(names)})")
            return int(rule)
        if isinstance(rule, str):
            from ddl_gym.placement import PLACEMENT_ALIASES

            def canon(name: str) -> str:
                key = name.strip().lower()
                return PLACEMENT_ALIASES.get(key, key)

            wanted = canon(rule)
            for i, name in enumerate(names):
                if canon(name) == wanted:
                    return i
            raise ConfigError(f"placement {rule!r} is not one of this env's placements {names}")
        raise ConfigError(f"placement must be an index or a name, got {rule!r}")

    def action_for(self, slot: int | None, rule: int | str = 0) -> int:
        """The action index that starts the job in queue ``slot`` with placement ``rule``
        (``1 + slot·P + rule``); ``slot=None`` gives the "advance" action 0.

        Raises:
            ConfigError: a slot outside ``0 .. max_window-1`` or an unknown placement.
        """
        if slot is None:
            return 0
        if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)) or not 0 <= int(slot) < self.max_window:
            raise ConfigError(f"slot must be an integer in 0..{self.max_window - 1}, got {slot!r}")
        return 1 + int(slot) * len(self.placement_names) + self._rule_index(rule)

    def decode_action(self, action: int) -> DecodedAction:
        """What ``action`` does: ``DecodedAction("advance")`` or ``DecodedAction("start", slot,
        placement, job)`` (``job``: the workload row in that slot now, if any)."""
        n_rules = len(self.placement_names)
        a = int(action)
        if a == 0:
            return DecodedAction("advance")
        if not 0 < a <= self.max_window * n_rules:
            raise ConfigError(f"action {action!r} is outside 0..{self.max_window * n_rules}")
        slot, rule = divmod(a - 1, n_rules)
        window = list(getattr(self, "_window", ()) or ())
        job = int(window[slot]) if slot < len(window) else None
        return DecodedAction("start", slot, self.placement_names[rule], job)

    def observation_view(self, obs: np.ndarray) -> dict[str, dict[str, Any]]:
        """Named views of an observation of this env (no copies).

        Portable layout: ``{"cluster": {feature: float}, "jobs": {feature: array of K slots},
        "global": {feature: float}}``. Legacy layout: ``{"servers": {feature: array of S servers},
        "jobs": {feature: array of W slots}, "global": {feature: float}}``. Feature names are those
        of the env docstring's tables (``env.observation_layout`` lists them).
        """
        obs = np.asarray(obs)
        size = int(self.observation_space.shape[0])  # type: ignore[attr-defined]
        if obs.shape != (size,):
            raise ConfigError(f"observation has shape {obs.shape}; this env's observations have shape ({size},)")
        layout = self.observation_layout
        view: dict[str, dict[str, Any]] = {}
        offset = 0
        if self.observation == "portable":
            cluster = layout["cluster_features"]
            view["cluster"] = {f: float(obs[offset + i]) for i, f in enumerate(cluster)}
            offset += len(cluster)
            slots = int(layout["slots"])
        else:
            servers = int(layout["servers"])
            features = layout["server_features"]
            block = obs[offset:offset + servers * len(features)].reshape(len(features), servers)  # feature-major
            view["servers"] = {f: block[i] for i, f in enumerate(features)}
            offset += servers * len(features)
            slots = int(layout["window"])
        jobs = layout["job_features"]
        block = obs[offset:offset + slots * len(jobs)].reshape(slots, len(jobs))  # slot-major
        view["jobs"] = {f: block[:, i] for i, f in enumerate(jobs)}
        offset += slots * len(jobs)
        view["global"] = {f: float(obs[offset + i]) for i, f in enumerate(layout["global_features"])}
        return view


def label_frame(image: np.ndarray, *, title: str, t_span_s: float, num_gpus: int,
                gpus_per_server: list[int] | None = None, width_px: int = 640) -> np.ndarray:
    """An ``rgb_array`` frame with axes: ``image`` (GPU rows × time columns) drawn with a time axis
    (seconds since the first arrival), a GPU axis with a line at every server boundary, and ``title``.
    Returns an ``(H, W, 3)`` uint8 array (Agg canvas; no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    dpi = 100
    height_px = max(240, min(640, 140 + 2 * image.shape[0]))
    fig = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.imshow(image, aspect="auto", interpolation="nearest", extent=(0.0, t_span_s, num_gpus, 0.0))
    if gpus_per_server:
        edge = 0
        for gpus in gpus_per_server[:-1]:
            edge += gpus
            ax.axhline(edge, color="0.6", linewidth=0.4)
    ax.set_xlabel("time since first arrival (s)")
    ax.set_ylabel("GPU")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
