"""The summary's median and 95th percentile equal numpy's, bit for bit (they replace np.median/np.percentile)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ddl_gym.sim.metrics import median_of_sorted, percentile_of_sorted

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(st.lists(finite, min_size=1, max_size=60),
       st.sampled_from([0, 5, 33.3, 50, 90, 95, 99, 100]))
def test_quantiles_match_numpy_bit_for_bit(values: list[float], q: float) -> None:
    ordered = sorted(values)
    assert percentile_of_sorted(ordered, q) == float(np.percentile(np.array(values), q))
    assert median_of_sorted(ordered) == float(np.median(np.array(values)))


def test_percentile_interpolates_from_the_upper_neighbour_past_one_half() -> None:
    # n = 21: virtual index 19.0 (exact); n = 12: 10.45, fraction 0.45 < 0.5 (from below); n = 15: 13.3.
    assert percentile_of_sorted([float(i) for i in range(21)], 95) == 19.0
    values = [0.1 * i * i for i in range(12)]
    assert percentile_of_sorted(values, 95) == float(np.percentile(values, 95))
    assert median_of_sorted([1.0, 2.0, 4.0, 8.0]) == 3.0
    assert median_of_sorted([5.0]) == 5.0
