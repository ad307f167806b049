"""Example counts for the heavy property tests, from the Hypothesis profile that
``tests/conftest.py`` loaded (``ci`` by default, ``slow`` with ``pytest --slow``)."""

from __future__ import annotations

from hypothesis import settings


def long_run() -> bool:
    """Whether this run is the long one (``pytest --slow``)."""
    return settings.get_current_profile_name() == "slow"


def heavy(share: float, least: int = 5) -> int:
    """Examples for a heavy test: `share` of the profile's count (100 in ``ci``, 1,000 in
    ``slow``), at least `least`.

    >>> heavy(0.25) == max(5, round(settings.default.max_examples * 0.25))
    True
    """
    return max(least, round(settings.default.max_examples * share))
