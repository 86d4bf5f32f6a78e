"""The paired sign-flip test of a mean per-case change, its confidence bounds, and the
false-discovery correction across every metric and rubric of a run.

Pure functions of their inputs and a seed; no I/O, no global state.

The data of one test are the per-case differences ``d_i = mean(head runs) −
mean(baseline runs)`` over the ``n`` eval cases scored on both sides (each case's runs are
averaged first), in metric units. The statistic is their mean ``d̄``.

**The test** (Fisher's randomisation test for paired data; Good, *Permutation, Parametric
and Bootstrap Tests of Hypotheses*, 3rd ed. 2005, §3.6.2). When nothing changed between
baseline and head, a case's baseline and head runs are exchangeable, so each ``d_i`` is as
likely to be ``+|d_i|`` as ``−|d_i|`` (with the same number of runs on both sides), and
``d̄`` is distributed as ``mean(s_i d_i)`` over random signs ``s_i = ±1``. The p-value of
"the change is below ``θ``" is the share of sign vectors ``s`` (the identity included) with
``mean(s_i (d_i − θ)) <= mean(d_i − θ)``. With ``2**n <= n_resamples`` every sign vector
is enumerated and the test is exact; otherwise ``n_resamples`` random vectors are drawn
and the observed one is counted once more (Phipson & Smyth 2010, "Permutation p-values
should never be zero"), which keeps the test valid. Unlike the percentile bootstrap (3.6%
false regressions instead of 2.5% at 20 cases x 3 runs in
``benchmarks/bench_calibration.py``, docs/gating.md), the level holds at
every number of cases.

**The bounds** are the inversion of the same test: the upper bound at one-sided level
``α`` is the smallest ``θ`` the test rejects "the change is at least ``θ``" at, so a bound
beyond ``±min_effect`` and a test rejecting at ``±min_effect`` are one statement. For sign
vector ``j`` with mean sign ``s̄_j < 1``, the vector counts against ``θ`` exactly when
``θ <= c_j = (d̄ − mean(s_j d)) / (1 − s̄_j)``, so each bound is an order statistic of the
``c_j``. Away from ``θ = 0`` the test assumes the differences are symmetric about ``θ``
(a shift), which is approximate.

**The correction**: every metric and rubric of a run is one test per direction
(worse / better). Benjamini, Krieger & Yekutieli's two-stage step-up procedure (2006,
*Biometrika* 93:491; :func:`two_stage_level`) over each direction's p-values gives the
one-sided level each bound of that direction is drawn at (Benjamini & Hochberg's
``k α / m`` with the number of true nulls estimated), so a call is a rejection of the
corrected test. With no real change a false call needs a rejection at the first stage,
Benjamini & Hochberg at ``α / (1 + α)``, so the chance of any false call in a direction
per run stays below ``α``; with real changes, the expected share of false calls among a
direction's calls is at most ``α`` (independent tests), and the second stage recovers the
power that a fixed ``k α / m`` loses when many metrics really moved (66% instead of 58%
per metric for a 10-point drop of every metric at 50 cases x 3 runs, in
``benchmarks/bench_calibration.py``). The intervals are then the false-coverage-rate
adjusted intervals of Benjamini & Yekutieli (2005, *JASA* 100:71).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from adk_eval_action.results.scoretable import exact_mean

CORRECTION = "Benjamini–Krieger–Yekutieli two-stage step-up"

# Elements (rows x cases) multiplied per block: a block's float64 copy (2 MB) stays
# cache-resident (32 MB blocks measured ~5x slower), and per-block overhead is negligible.
BLOCK_ELEMENTS = 262_144
# Relative slack when turning a level into a count of sign vectors, so that alpha * total
# landing a rounding error below an integer does not lose that vector.
_SLACK = 1e-9
# Critical values closer to θ than this share of the largest |difference| tie with it.
TIE = 1e-9


@dataclass(frozen=True, slots=True)
class SignFlips:
    """Sign vectors for ``n`` cases: ``signs`` is ``(rows, n)`` of ±1 (int8).

    ``exact``: every one of the ``2**n`` vectors (the identity among them); else
    ``rows`` random vectors to which the observed one is added when counting
    (``extra`` = 1). ``total`` is the denominator of a p-value."""

    signs: np.ndarray
    exact: bool

    @property
    def extra(self) -> int:
        """1 for random vectors (the observed vector is counted too), 0 when exact."""
        return 0 if self.exact else 1

    @property
    def total(self) -> int:
        """Number of vectors a p-value counts among."""
        return int(self.signs.shape[0]) + self.extra


def sign_flips(n_cases: int, *, n_resamples: int, seed: int) -> SignFlips:
    """All ``2**n_cases`` sign vectors when there are at most ``n_resamples`` of them, else
    ``n_resamples`` drawn from ``numpy.random.default_rng(seed)``.

    Raises:
        ValueError: ``n_cases`` or ``n_resamples`` below 1.
    """
    if n_cases < 1:
        raise ValueError(f"n_cases must be >= 1, got {n_cases}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if n_cases < 31 and 2**n_cases <= n_resamples:
        codes = np.arange(2**n_cases, dtype=np.int64)[:, None] >> np.arange(n_cases)
        return SignFlips(signs=(1 - 2 * (codes & 1)).astype(np.int8), exact=True)
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(n_resamples, n_cases), dtype=np.int8)
    return SignFlips(signs=(1 - 2 * bits).astype(np.int8), exact=False)


@dataclass(frozen=True, slots=True)
class FlipDistribution:
    """One test's permutation distribution, as the ``c_j`` of the module docstring.

    ``delta`` is ``d̄``. ``high``/``low`` are the ``c_j`` of the non-identity vectors,
    sorted ascending, moved up/down by a tie tolerance (a billionth of the largest
    |difference|): with scores on a lattice (thirds of a pass rate) a ``c_j`` often equals
    ``θ`` exactly, and such a tie must count against ``θ`` (as the enumeration does) even
    when rounding puts it a hair to the other side. ``always`` counts the vectors that
    count against every ``θ`` (the identity, a drawn vector of all +1, and the observed one
    when drawn); ``total`` is the p-value denominator; ``exact``: every pattern was
    enumerated. ``cumulative``: when the ``c_j`` stand for several patterns each (an exact
    distribution with equal points merged, :mod:`adk_eval_action.analysis.stratified`),
    the running total of their counts in the same order; None: one pattern each."""

    delta: float
    high: np.ndarray
    low: np.ndarray
    always: int
    total: int
    exact: bool
    cumulative: np.ndarray | None = None

    def _beyond(self, index: int) -> float:
        """How many patterns the ``c_j`` from ``index`` on stand for."""
        if self.cumulative is None:
            return self.high.size - index
        before = float(self.cumulative[index - 1]) if index else 0.0
        return float(self.cumulative[-1]) - before if self.cumulative.size else 0.0

    def _before(self, index: int) -> float:
        """How many patterns the ``c_j`` before ``index`` stand for."""
        if self.cumulative is None:
            return index
        return float(self.cumulative[index - 1]) if index else 0.0

    def p_less(self, theta: float) -> float:
        """p-value of "the mean change is below ``theta``" (H0: at least ``theta``)."""
        above = self._beyond(int(np.searchsorted(self.high, theta, side="left")))
        return (self.always + above) / self.total

    def p_greater(self, theta: float) -> float:
        """p-value of "the mean change is above ``theta``" (H0: at most ``theta``)."""
        below = self._before(int(np.searchsorted(self.low, theta, side="right")))
        return (self.always + below) / self.total

    @property
    def p_min(self) -> float:
        """The smallest p-value the test can give: patterns that count against every
        ``θ`` over all patterns."""
        return self.always / self.total

    def _budget(self, alpha: float) -> float:
        """How many patterns may lie beyond a rejected ``θ`` at level ``alpha``."""
        if self.cumulative is None:
            return math.floor(alpha * self.total * (1.0 + _SLACK)) - self.always
        return alpha * self.total * (1.0 + _SLACK) - self.always

    def upper(self, alpha: float) -> float | None:
        """One-sided upper bound at level ``alpha``: ``p_less(θ) <= alpha`` exactly when
        ``θ > upper``. None when no ``θ`` is rejected at that level."""
        budget = self._budget(alpha)
        if self.cumulative is None:
            rank = budget if 0 <= budget < self.high.size else None
            return None if rank is None else float(self.high[self.high.size - 1 - int(rank)])
        total = float(self.cumulative[-1]) if self.cumulative.size else 0.0
        if budget < 0 or budget >= total:
            return None
        index = int(np.searchsorted(self.cumulative, total - budget, side="left"))
        return float(self.high[min(index, self.high.size - 1)])

    def lower(self, alpha: float) -> float | None:
        """One-sided lower bound: ``p_greater(θ) <= alpha`` exactly when ``θ < lower``."""
        budget = self._budget(alpha)
        if self.cumulative is None:
            rank = budget if 0 <= budget < self.low.size else None
            return None if rank is None else float(self.low[int(rank)])
        index = int(np.searchsorted(self.cumulative, budget, side="right"))
        if budget < 0 or index >= self.low.size:
            return None
        return float(self.low[index])


def flip_distributions(diffs: np.ndarray, flips: SignFlips) -> list[FlipDistribution]:
    """The distribution of each column of ``diffs`` (``(n_cases, tests)``, finite, in the
    row order ``flips`` was made for), one matrix product per block of sign vectors.

    Cost: ``O(rows x n_cases x tests)``; ~0.16 s for 2000 x 10,000 x 11. The products
    run on one BLAS thread: these blocks are small, and on a busy 2-core machine OpenBLAS's
    two spinning threads took 2.5-5 s for the same work (load 15, measured here)."""
    n, k = diffs.shape
    with threadpool_limits(limits=1, user_api="blas"):
        return _distributions(diffs, flips, n, k)


def _distributions(diffs: np.ndarray, flips: SignFlips, n: int, k: int) -> list[FlipDistribution]:
    # Column-major: each column (one test) is contiguous for the block products, ~5x
    # faster here than row-major at 10,000 cases x 8 tests.
    # Divided by n first, so a sum of n scores near the float limit cannot overflow.
    columns = np.asfortranarray(diffs / n, dtype=np.float64)
    signs = flips.signs
    rows = signs.shape[0]
    flipped = np.empty((rows, k), dtype=np.float64)
    step = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, rows, step):
        block = signs[start : start + step].astype(np.float64)
        flipped[start : start + block.shape[0]] = block @ columns
    mean_sign = signs.sum(axis=1, dtype=np.int64)
    identity = mean_sign == n
    denominator = (1.0 - mean_sign[~identity] / n)[:, None]
    delta = np.array([exact_mean(diffs[:, j].tolist()) for j in range(k)])
    with np.errstate(over="ignore", invalid="ignore"):
        crit = np.sort((delta[None, :] - flipped[~identity]) / denominator, axis=0)
    # A vector that only flips zero differences ties with the observed mean; missed by a
    # rounding error, such ties made the test anti-conservative (0.8% instead of <= 0.4%
    # at p <= 1/256 over 8 simulated cases).
    tolerance = TIE * np.abs(diffs).max(axis=0)
    always = int(identity.sum()) + flips.extra
    return [
        FlipDistribution(
            delta=float(delta[j]),
            high=crit[:, j] + tolerance[j],
            low=crit[:, j] - tolerance[j],
            always=always,
            total=flips.total,
            exact=flips.exact,
        )
        for j in range(k)
    ]


def benjamini_hochberg(p_values: Sequence[float], alpha: float) -> float:
    """The level ``α* = k α / m`` of Benjamini & Hochberg's step-up procedure: ``k`` is the
    largest rank with ``p_(k) <= k α / m``; every p-value ``<= α*`` is rejected. With no
    rejection, ``α / m`` (the level of the bounds shown when nothing is called). ``m`` is
    ``len(p_values)``; an empty family gives ``alpha``.

    Raises:
        ValueError: ``alpha`` outside (0, 1).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    m = len(p_values)
    if m == 0:
        return alpha
    ordered = sorted(p_values)
    k = max(
        (rank for rank, p in enumerate(ordered, start=1) if p <= rank * alpha / m * (1 + _SLACK)),
        default=0,
    )
    return max(k, 1) * alpha / m


def two_stage_level(p_values: Sequence[float], alpha: float) -> float:
    """The level each p-value of a family is rejected at by the two-stage step-up procedure
    of Benjamini, Krieger & Yekutieli (2006, *Biometrika* 93:491, definition 6): Benjamini
    & Hochberg at ``q = alpha / (1 + alpha)`` rejects ``r`` of ``m``; none rejected: none
    is (level ``q / m``, for the bounds shown); all rejected: all are; otherwise Benjamini &
    Hochberg again at ``q m / (m - r)``, which estimates the ``m - r`` true nulls instead of
    assuming ``m``. Controls the false discovery rate at ``alpha`` for independent tests;
    when every null is true, a false call needs a stage-one rejection, so the chance of any
    is at most ``q`` (also under positive dependence, where Benjamini & Hochberg holds).

    Raises:
        ValueError: ``alpha`` outside (0, 1).
    """
    q = alpha / (1.0 + alpha)
    first = benjamini_hochberg(p_values, q)
    m = len(p_values)
    rejected = sum(p <= first * (1 + _SLACK) for p in p_values)
    if rejected == 0:
        return q / max(m, 1)
    if rejected == m:
        return first
    return benjamini_hochberg(p_values, min(q * m / (m - rejected), 1.0 - _SLACK))
