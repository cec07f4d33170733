"""One verdict rule for every claim of every reproduced paper: "held", "tie" or "not held".

The rule (:class:`VerdictRule`, default :data:`RULE`: margin ``m`` = 2 %):

* **Directional claims** ("A below B"). Per seed ``s`` the paired difference is
  ``d_s = A_s / B_s − 1`` (relative scale; ``d_s = A_s − B_s`` on the absolute scale, for
  quantities that are already shares). With ``d̄`` the mean over seeds, for "A below B":

  - **held** iff ``d̄ < −m`` *and* ``d_s < 0`` on a strict majority of the seeds;
  - **tie** iff ``|d̄| ≤ m`` (the difference is within the margin, whatever its sign);
  - **not held** otherwise (the opposite direction beyond the margin, or a mean beyond the
    margin that a majority of seeds does not share).

  "A above B" mirrors it. "A lowest of several" compares A, seed by seed, with the best of the
  others on that seed. A claim with several parts (:func:`all_of`) is held iff every part is,
  not held iff some part is not held, and a tie otherwise.
* **Equality claims** ("X = Y", e.g. Lemma 2's ``Ŵ_max = θ̃_u``): **held** iff ``|d̄| ≤ m`` and
  ``|d_s| ≤ m`` on a strict majority of seeds, else **not held** (no tie: a tie is the claim).
* **Shape claims** (a curve's direction changes, e.g. SJF-BCO Fig. 5 "drop → rise → drop", Fig. 7
  "monotone decreasing"). A curve's *significant moves* (:func:`moves`) are found by a zig-zag
  filter with the same relative margin: a move is recorded only when the curve goes beyond ``m``
  from the extreme reached since the last move, so every segment is larger than the margin and
  wiggles within it are ignored. **held** iff the mean curve's moves are exactly the claimed
  pattern *and* so are those of a strict majority of the seeds' curves; **tie** iff the mean curve
  has no significant move (flat within the margin); **not held** otherwise.

The seed count is whatever the reproduction ran (its report header says how many); the majority
condition is what ties the verdict to the seeds rather than to one average. Every
:class:`Verdict` carries the numbers the rule used (``detail``), and :func:`render_claims` prints
them next to the paper's words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Outcome = Literal["held", "tie", "not held"]
Direction = Literal["lower", "higher"]
Scale = Literal["relative", "absolute"]
Move = Literal["drop", "rise"]

OUTCOMES: tuple[Outcome, ...] = ("held", "tie", "not held")


@dataclass(frozen=True)
class VerdictRule:
    """The margin of every verdict (see the module docstring for the rule itself).

    Attributes:
        margin: relative margin ``m`` (fraction; also the absolute margin for share-valued claims).
    """

    margin: float = 0.02
    #: How a seed whose paired difference is exactly 0 counts in the majority condition: ``"against"``
    #: (the rule before issue 32: only seeds in the claimed direction count for it) or ``"neutral"`` (issue
    #: 32: an exact tie is a tie: it counts neither for nor against the claim, so a claim whose seeds
    #: never go the other way cannot be "not held" by the majority condition).
    exact_ties: Literal["against", "neutral"] = "against"

    def __post_init__(self) -> None:
        if not 0 <= self.margin < 1:
            raise ValueError(f"verdict margin must be in [0, 1), got {self.margin}")
        if self.exact_ties not in ("against", "neutral"):
            raise ValueError(f"exact_ties must be 'against' or 'neutral', got {self.exact_ties!r}")

    def describe(self) -> str:
        """The sentence every report header prints."""
        m = f"{self.margin:.0%}"
        return (f"Verdict rule (ddl_gym.reproduce.verdict, one rule for every paper): per seed the paired "
                f"difference d = ours/theirs − 1; **held** iff the mean d is beyond the margin of {m} in the "
                f"claimed direction and d has that sign on a strict majority of seeds; **tie** iff |mean d| ≤ "
                f"{m}; **not held** otherwise. Equality claims: held iff |mean d| ≤ {m} on the mean and a "
                f"majority of seeds. Shape claims: the curve's moves beyond {m} (zig-zag filtered) must be "
                f"exactly the claimed pattern on the mean curve and on a majority of seeds; tie iff the mean "
                f"curve is flat within {m}."
                + (" Exact ties (d = 0 on a seed) count neither for nor against a claim: the majority condition is "
                   "that the seeds in the claimed direction outnumber those in the other. Magnitude claims (\"≥ x% "
                   "lower\", \"x% higher\") are checked against the magnitude: held iff the mean d reaches the "
                   "claimed amount less the claim's margin on the mean and a majority of seeds; tie iff |mean d| is "
                   "within the margin; not held otherwise (the row says whether the sign alone holds). Margins "
                   "are stated in each row." if self.exact_ties == "neutral" else ""))


#: The rule every reproduction uses (the rule before issue 32; kept so that reports made with it regenerate
#: unchanged).
RULE = VerdictRule()

#: Issue 32's rule: exact ties are ties (see :attr:`VerdictRule.exact_ties`); magnitude claims go through
#: :func:`magnitude`. The SJF-BCO, Ada-SRSF and SMD reproductions use it; the others opt in by passing it.
RULE_V2 = VerdictRule(exact_ties="neutral")


@dataclass(frozen=True)
class Verdict:
    """An outcome and the numbers that decided it."""

    outcome: Outcome
    detail: str

    def __str__(self) -> str:
        return self.outcome

    @property
    def held(self) -> bool:
        return self.outcome == "held"


def _as_array(values: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size == 0:
        raise ValueError(f"{name}: need at least one seed")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: values must be finite, got {arr.tolist()}")
    return arr


def _differences(ours: Sequence[float], theirs: Sequence[float], scale: Scale) -> np.ndarray:
    a, b = _as_array(ours, "ours"), _as_array(theirs, "theirs")
    if a.shape != b.shape:
        raise ValueError(f"paired values need the same seeds: {a.size} vs {b.size}")
    if scale == "absolute":
        return a - b
    if np.any(b <= 0):
        raise ValueError(f"relative differences need positive reference values, got {b.tolist()}")
    return a / b - 1.0


def _fmt(d: float, scale: Scale) -> str:
    return f"{d:+.1%}" if scale == "relative" else f"{100 * d:+.1f} pp"


def compare(ours: Sequence[float], theirs: Sequence[float], direction: Direction = "lower", *,
            scale: Scale = "relative", rule: VerdictRule = RULE) -> Verdict:
    """Verdict on "ours is ``direction`` than theirs", paired by seed (same order in both sequences)."""
    d = _differences(ours, theirs, scale)
    sign = -1.0 if direction == "lower" else 1.0
    mean = float(d.mean())
    agree = int((sign * d > 0).sum())
    n = d.size
    detail = f"mean d {_fmt(mean, scale)} (margin ±{_fmt(rule.margin, scale)[1:]}), {direction} in {agree}/{n} seeds"
    if rule.exact_ties == "neutral":
        against = int((sign * d < 0).sum())
        ties = n - agree - against
        if ties:
            detail += f", exact tie in {ties}"
        majority = agree > against
    else:
        majority = 2 * agree > n
    if abs(mean) <= rule.margin:
        return Verdict("tie", detail)
    if sign * mean > rule.margin and majority:
        return Verdict("held", detail)
    return Verdict("not held", detail)


def magnitude(ours: Sequence[float], theirs: Sequence[float], amount: float, direction: Direction = "lower", *,
              scale: Scale = "relative", rule: VerdictRule = RULE_V2) -> Verdict:
    """Verdict on a magnitude claim, "ours is at least ``amount`` ``direction`` than theirs" (``amount`` a
    fraction: 0.30 for "≥ 30% lower", 0.396 for "39.6% higher"), paired by seed.

    **held** iff the mean difference in the claimed direction reaches ``amount − margin`` and so does a strict
    majority of seeds; **tie** iff ``|mean d| ≤ margin`` (no difference at all); **not held** otherwise (the
    detail says whether the sign alone holds, which is not the claim).
    """
    if amount <= 0:
        raise ValueError(f"magnitude: amount must be positive, got {amount}")
    d = _differences(ours, theirs, scale)
    sign = -1.0 if direction == "lower" else 1.0
    mean = float(d.mean())
    need = amount - rule.margin
    reach = int((sign * d >= need).sum())
    n = d.size
    sign_ok = sign * mean > rule.margin
    detail = (f"mean d {_fmt(mean, scale)}; claimed {direction} by ≥ {_fmt(amount, scale)[1:]} less the margin "
              f"{_fmt(rule.margin, scale)[1:]}; reached in {reach}/{n} seeds"
              + ("" if sign * mean >= need else f"; the sign alone {'holds' if sign_ok else 'does not hold'}"))
    if abs(mean) <= rule.margin:
        return Verdict("tie", detail)
    if sign * mean >= need and 2 * reach > n:
        return Verdict("held", detail)
    return Verdict("not held", detail)


def best_of(ours: Sequence[float], others: Mapping[str, Sequence[float]], direction: Direction = "lower", *,
            scale: Scale = "relative", rule: VerdictRule = RULE) -> Verdict:
    """Verdict on "ours is the ``direction``-most": compared per seed with the best of ``others``."""
    if not others:
        raise ValueError("best_of: need at least one other")
    stack = np.vstack([_as_array(v, name) for name, v in others.items()])
    best = stack.min(axis=0) if direction == "lower" else stack.max(axis=0)
    v = compare(ours, best, direction, scale=scale, rule=rule)
    which = "lowest" if direction == "lower" else "highest"
    return Verdict(v.outcome, v.detail + f" (vs the {which} of {', '.join(others)} per seed)")


def equal(values: Sequence[float], reference: Sequence[float], *, scale: Scale = "relative",
          rule: VerdictRule = RULE) -> Verdict:
    """Verdict on "values = reference" (paired by seed); no tie outcome."""
    d = _differences(values, reference, scale)
    mean = float(d.mean())
    close = int((np.abs(d) <= rule.margin).sum())
    detail = f"mean d {_fmt(mean, scale)} (margin ±{_fmt(rule.margin, scale)[1:]}), within margin in {close}/{d.size} seeds"
    if abs(mean) <= rule.margin and 2 * close > d.size:
        return Verdict("held", detail)
    return Verdict("not held", detail)


def moves(values: Sequence[float], margin: float = RULE.margin) -> list[Move]:
    """The significant moves of a curve: zig-zag filter with relative threshold ``margin``.

    Before the first move the filter tracks the curve's running minimum and maximum; a drop is
    recorded when a value falls more than ``margin`` below the running maximum (a rise: above the
    running minimum). After a drop it tracks the running minimum and records a rise only when a
    value exceeds it by more than ``margin`` (and symmetrically after a rise). Consecutive moves
    therefore alternate and each segment is larger than the margin.
    """
    v = _as_array(values, "curve")
    if np.any(v <= 0):
        raise ValueError("moves: curve values must be positive (relative margins)")
    out: list[Move] = []
    lo = hi = float(v[0])
    for x in v[1:].tolist():
        last = out[-1] if out else None
        if last is None:
            if x < hi * (1 - margin):
                out.append("drop")
                lo = x
            elif x > lo * (1 + margin):
                out.append("rise")
                hi = x
            else:
                lo, hi = min(lo, x), max(hi, x)
        elif last == "drop":
            if x > lo * (1 + margin):
                out.append("rise")
                hi = x
            else:
                lo = min(lo, x)
        else:
            if x < hi * (1 - margin):
                out.append("drop")
                lo = x
            else:
                hi = max(hi, x)
    return out


def _arrow(ms: Sequence[str]) -> str:
    return "→".join(ms) if ms else "flat"


def shape(mean_curve: Sequence[float], seed_curves: Sequence[Sequence[float]], pattern: Sequence[Move], *,
          rule: VerdictRule = RULE) -> Verdict:
    """Verdict on "the curve's moves are exactly ``pattern``" (mean curve and a majority of seeds)."""
    want = list(pattern)
    got = moves(mean_curve, rule.margin)
    per_seed = [moves(c, rule.margin) for c in seed_curves]
    matching = sum(1 for m in per_seed if m == want)
    n = len(per_seed)
    detail = f"mean curve {_arrow(got)} (moves beyond {rule.margin:.0%}); {_arrow(want)} in {matching}/{n} seeds"
    if got == want and 2 * matching > n:
        return Verdict("held", detail)
    if not got:
        return Verdict("tie", detail)
    return Verdict("not held", detail)


def monotone(mean_curve: Sequence[float], seed_curves: Sequence[Sequence[float]],
             direction: Literal["decreasing", "increasing"] = "decreasing", *, rule: VerdictRule = RULE) -> Verdict:
    """Verdict on "the curve is monotone" (one significant move, no reversal beyond the margin)."""
    return shape(mean_curve, seed_curves, ["drop" if direction == "decreasing" else "rise"], rule=rule)


def all_of(*verdicts: Verdict) -> Verdict:
    """A claim made of several parts: held iff every part is held; not held iff any part is not held;
    tie otherwise (some part is within the margin and none is contradicted)."""
    if not verdicts:
        raise ValueError("all_of: need at least one verdict")
    outcomes = [v.outcome for v in verdicts]
    outcome: Outcome = ("not held" if "not held" in outcomes else "held" if all(o == "held" for o in outcomes)
                        else "tie")
    return Verdict(outcome, "; ".join(f"{v.outcome}: {v.detail}" for v in verdicts))


# ----------------------------------------------------------------------------- claims table
@dataclass(frozen=True)
class Claim:
    """One row of a claims table.

    Attributes:
        where: figure / table / section of the paper.
        paper: the paper's words (quoted or closely paraphrased).
        ours: our numbers.
        verdict: the verdict from this module.
    """

    where: str
    paper: str
    ours: str
    verdict: Verdict


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_claims(claims: Sequence[Claim]) -> str:
    """Markdown table: where | paper's words | our numbers | verdict | rule applied."""
    lines = ["| where | paper's words | our numbers | verdict | rule applied |", "|---|---|---|---|---|"]
    for c in claims:
        lines.append(f"| {_cell(c.where)} | {_cell(c.paper)} | {_cell(c.ours)} | **{c.verdict.outcome}** | "
                     f"{_cell(c.verdict.detail)} |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- change log
@dataclass(frozen=True)
class Change:
    """A check removed or replaced, or a verdict that changed (issue 32's list, printed in each report).

    Attributes:
        where: the claim (figure / section and the paper's words, short).
        kind: ``"removed"``, ``"replaced"`` or ``"verdict"``.
        old: the old check or verdict (as the previous report printed it).
        new: the new check or verdict (as this report prints it).
        why: one line.
    """

    where: str
    kind: Literal["removed", "replaced", "verdict"]
    old: str
    new: str
    why: str


CHANGES_HEADING = "## Checks removed or replaced, verdicts changed (issue 32)"


def render_changes(changes: Sequence[Change]) -> str:
    """The generated section every issue-32 report carries: one row per removed/replaced check or changed verdict."""
    lines = [CHANGES_HEADING, "", "| claim | change | old | new | why |", "|---|---|---|---|---|"]
    for c in changes:
        lines.append(f"| {_cell(c.where)} | {c.kind} | {_cell(c.old)} | {_cell(c.new)} | {_cell(c.why)} |")
    return "\n".join(lines)


__all__ = [
    "CHANGES_HEADING", "Change", "RULE_V2", "magnitude", "render_changes",
    "Claim", "Direction", "Move", "OUTCOMES", "Outcome", "RULE", "Verdict", "VerdictRule", "all_of", "best_of", "compare",
    "equal", "monotone", "moves", "render_claims", "shape",
]
