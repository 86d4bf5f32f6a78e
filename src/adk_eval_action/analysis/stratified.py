"""The stratified permutation test of a mean per-case change: each eval case's baseline and
head runs exchanged within the case. Pure functions of their inputs and a seed.

**The data** of one test are, per matched eval case ``i`` (a *stratum*), its ``m_i`` head
scores and ``n_i`` baseline scores. The statistic is the same as the sign-flip test's
(:mod:`adk_eval_action.analysis.signflip`): the mean over cases of ``d_i = mean(head runs)
− mean(baseline runs)``.

**The test** (a permutation test stratified by case; Good, *Permutation, Parametric and
Bootstrap Tests of Hypotheses*, 3rd ed. 2005, §3.5 and §5.2; Pesarin & Salmaso,
*Permutation Tests for Complex Data*, 2010, §1.10). When nothing changed, a case's
``m_i + n_i`` runs are draws of the same agent on the same case, so any ``m_i`` of them are
as likely to be the head's as the observed ones: each of the ``C(m_i + n_i, m_i)`` ways to
label them is equally likely, independently across cases. The p-value of "the change is
below ``θ``" counts the joint labellings whose statistic is at most the observed one, with
``θ`` subtracted from every head score first (a shift). With one run on each side a case
has two labellings, the observed one and the swap, which negates ``d_i``: the test is then
exactly the paired sign-flip test, which :mod:`adk_eval_action.analysis.paired` keeps for
that shape. With more runs it uses them: one case of three dropping from all-pass to
all-fail over 5 runs per side has ``p = 1 / C(10, 5) = 1/252`` when the other cases do not
move, where the sign flip over three cases can never go below ``1/8``.

**The bounds** invert the same test, as the sign flip's do. A labelling that moves ``k_i``
runs of case ``i`` from each side to the other changes the case's term by ``−u_i`` with
``u_i = g_i (Σ head scores moved − Σ baseline scores moved)``, ``g_i = 1/m_i + 1/n_i``, and
shifting the head by ``θ`` adds ``θ k_i g_i`` to it. So the labelling counts against ``θ``
exactly when ``θ <= c = Σ u_i / Σ k_i g_i`` (the identity, all ``k_i = 0``, counts against
every ``θ``), and each bound is a (weighted) order statistic of the ``c``.

**Exact or drawn.** With at most :func:`exact_up_to` cases, the joint distribution of
``(Σ u_i, Σ k_i g_i)`` is built one case at a time (a convolution: each case's labellings
enumerated, equal points merged with their counts), and every labelling is counted, when
it has at most :data:`MAX_STATES` distinct points (scores on a lattice, such as pass/fail
or thirds of a pass rate, keep it small). Otherwise ``n_resamples`` joint labellings are
drawn from ``numpy.random.default_rng(seed)`` and the observed one is counted once more
(Phipson & Smyth 2010), as the sign flip does.

**Assumption** (beyond the sign flip's): the runs of a case are independent draws, on
either side, so that nothing but the agent differs between a baseline run and a head run of
the same case. A model that answers the same case alike within one evaluation but
differently in another (a model update between the baseline's and the head's evaluation,
a cache) is a change to this test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from threadpoolctl import threadpool_limits

from adk_eval_action.analysis.signflip import BLOCK_ELEMENTS, TIE, FlipDistribution

MAX_SUBSETS = 1 << 14
"""Most labellings of one case drawn from a table (8 runs a side: 12,870; with more, 9 runs
a side: 48,620, they are drawn by sorting random keys instead), and most subsets of one
side's runs an exact distribution enumerates (14 runs)."""
MAX_STATES = 1 << 14
"""Most distinct ``(Σ u, Σ k g)`` points an exact distribution may hold."""
_MAX_CANDIDATES = 1 << 18
# A case with at most this many labellings is enumerated from its table, one product (the
# subset sums' many small steps cost more there); with more, by its sides' subset sums.
_TABLED = 1024
# Points are merged on a grid of 2**-36 of the scaled scores (|z| <= 1): far below any
# difference of two scores, far above the rounding of sums in different orders.
_GRID = 2.0**36


@dataclass(frozen=True, slots=True)
class Strata:
    """One test's matched eval cases: case ``i`` has ``head_runs[i]`` head scores then
    ``base_runs[i]`` baseline scores in ``values[start[i]:start[i + 1]]`` (metric units,
    finite). Build with :func:`strata`."""

    head_runs: np.ndarray
    base_runs: np.ndarray
    values: np.ndarray
    start: np.ndarray

    @property
    def size(self) -> int:
        """Number of cases."""
        return int(self.head_runs.size)

    @property
    def shape_key(self) -> bytes:
        """Equal for strata with the same runs per case and side (they share draws)."""
        return self.head_runs.tobytes() + b"|" + self.base_runs.tobytes()

    @property
    def labellings(self) -> int:
        """``Π C(m_i + n_i, m_i)``: how many joint labellings the test counts among."""
        return math.prod(
            math.comb(m + n, m)
            for m, n in zip(self.head_runs.tolist(), self.base_runs.tolist(), strict=True)
        )

    def diffs(self) -> np.ndarray:
        """Per case ``mean(head) − mean(baseline)`` (metric units; infinite when that
        difference is beyond the float range)."""
        if not self.values.size:
            return np.zeros(0)
        scale = _scale(self.values)
        bounds = np.column_stack([self.start[:-1], self.start[:-1] + self.head_runs]).ravel()
        sums = np.add.reduceat(self.values / scale, bounds)
        with np.errstate(over="ignore"):
            diffs: np.ndarray = (sums[0::2] / self.head_runs - sums[1::2] / self.base_runs) * scale
        return diffs


def strata(head: tuple[np.ndarray, np.ndarray], base: tuple[np.ndarray, np.ndarray]) -> Strata:
    """Strata from each side's scores of the matched cases, in case order: ``(values,
    runs)`` with case ``i``'s ``runs[i]`` scores next in ``values`` (every ``runs[i] >=
    1``). Raises ValueError when the lengths disagree."""
    (h, m), (b, n) = head, base
    m, n = np.asarray(m, dtype=np.int64), np.asarray(n, dtype=np.int64)
    if int(m.sum()) != h.size or int(n.sum()) != b.size or m.size != n.size:
        raise ValueError("the scores do not match the runs per case")
    lengths = m + n
    start = np.zeros(m.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    values = np.empty(int(start[-1]), dtype=np.float64)
    values[positions(start[:-1], m)] = h
    values[positions(start[:-1] + m, n)] = b
    return Strata(head_runs=m, base_runs=n, values=values, start=start)


def positions(first: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``first[i], first[i] + 1, …`` (``counts[i]`` of them) for every ``i``, concatenated."""
    total = int(counts.sum())
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    positions: np.ndarray = np.repeat(first, counts) + offsets
    return positions


@dataclass(slots=True)
class SubsetTables:
    """Labellings of a case shape ``(m, n)``, made once per comparison: ``moved`` is
    ``(C(m + n, m), m + n)`` of −1 (a head run labelled baseline), +1 (a baseline run
    labelled head) or 0, and ``k`` how many runs each labelling moves to each side."""

    tables: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def get(self, m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The table of shape ``(m, n)`` (at most :data:`MAX_SUBSETS` labellings)."""
        key = (m, n)
        if key not in self.tables:
            chosen = np.array(list(combinations(range(m + n), m)), dtype=np.intp)
            head = np.zeros((chosen.shape[0], m + n), dtype=np.int8)
            np.put_along_axis(head, chosen, 1, axis=1)
            moved = head.copy()
            moved[:, :m] -= 1
            self.tables[key] = (moved, head[:, m:].sum(axis=1, dtype=np.int64))
        return self.tables[key]


def _scale(values: np.ndarray) -> float:
    """A power of two above half of ``max |values|`` (1 for all zeros): dividing by it is
    exact and leaves every score within ±2, so sums of scores stay finite."""
    top = float(np.abs(values).max()) if values.size else 0.0
    return 1.0 if top == 0.0 else math.ldexp(1.0, math.frexp(top)[1] - 1)


def _merge(u: np.ndarray, d: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """Equal ``(u, d)`` points merged (on the grid), their weights summed."""
    qu, qd = np.rint(u * _GRID).astype(np.int64), np.rint(d * _GRID).astype(np.int64)
    order = np.lexsort((qu, qd))
    qu, qd = qu[order], qd[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (qu[1:] != qu[:-1]) | (qd[1:] != qd[:-1])
    group = np.cumsum(new) - 1
    return u[order][new], d[order][new], np.bincount(group, weights=w[order])


def _subset_sums(z: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """For ``k = 0 .. len(z)``: the distinct sums of the ``k``-subsets of ``z`` and how
    many subsets have each. Built over the distinct scores: taking ``t`` of a score held
    ``c`` times adds ``t`` times it, in ``C(c, t)`` ways (pass/fail scores: two steps)."""
    values, counts = np.unique(z, return_counts=True)
    levels = [(np.zeros(1), np.ones(1))]
    for value, count in zip(values.tolist(), counts.tolist(), strict=True):
        grown: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(len(levels) + count)]
        for k, (sums, weights) in enumerate(levels):
            for t in range(count + 1):
                grown[k + t].append((sums + t * value, weights * math.comb(count, t)))
        levels = [_merge1(parts) for parts in grown]
    return levels


def _merge1(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Sums with their counts, equal sums (on the grid) merged."""
    sums = np.concatenate([p[0] for p in parts])
    weights = np.concatenate([p[1] for p in parts])
    if sums.size == 1:
        return sums, weights
    keys, first, index = np.unique(
        np.rint(sums * _GRID).astype(np.int64), return_index=True, return_inverse=True
    )
    return sums[first], np.bincount(index.ravel(), weights=weights, minlength=keys.size)


def _case_points(head: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """One case's labellings as distinct ``(u, k g)`` points with their counts: moving
    ``k`` runs each way, ``u = g (Σ head moved − Σ baseline moved)``, for every pair of a
    ``k``-subset of the head's runs and one of the baseline's. None when a side has more
    than :data:`MAX_SUBSETS` subsets or the pairs are too many to count."""
    if 2 ** max(head.size, base.size) > MAX_SUBSETS:
        return None
    g = 1.0 / head.size + 1.0 / base.size
    moved_head, moved_base = _subset_sums(head), _subset_sums(base)
    shared = range(min(head.size, base.size) + 1)
    pairs = sum(moved_head[k][0].size * moved_base[k][0].size for k in shared)
    if pairs > _MAX_CANDIDATES:
        return None
    u, d, w = [], [], []
    for k in shared:
        (hs, hw), (bs, bw) = moved_head[k], moved_base[k]
        u.append(((hs[:, None] - bs[None, :]) * g).ravel())
        d.append(np.full(hs.size * bs.size, k * g))
        w.append(np.outer(hw, bw).ravel())
    return _merge(np.concatenate(u), np.concatenate(d), np.concatenate(w))


def _tabled_points(
    case: np.ndarray, m: int, n: int, tables: SubsetTables
) -> tuple[np.ndarray, ...]:
    """One case's labellings as distinct ``(u, k g)`` points with their counts, from its
    shape's table (every labelling once)."""
    moved, k = tables.get(m, n)
    g = 1.0 / m + 1.0 / n
    return _merge(-(moved @ case) * g, k * g, np.ones(k.size))


def exact_distribution(
    s: Strata, delta: float, tables: SubsetTables | None = None
) -> FlipDistribution | None:
    """Every joint labelling of ``s`` counted (module docstring); None when a case has more
    than 14 runs a side (:data:`MAX_SUBSETS` subsets) or the distribution more than
    :data:`MAX_STATES` points. ``delta`` is the observed mean change, recorded on the
    result."""
    scale = _scale(s.values)
    z = s.values / scale
    tables = tables if tables is not None else SubsetTables()
    u_all, d_all, w_all = np.zeros(1), np.zeros(1), np.ones(1)
    for i, (m, n) in enumerate(zip(s.head_runs.tolist(), s.base_runs.tolist(), strict=True)):
        case = z[s.start[i] : s.start[i + 1]]
        if math.comb(m + n, m) <= _TABLED:
            points: tuple[np.ndarray, ...] | None = _tabled_points(case, m, n, tables)
        else:
            points = _case_points(case[:m], case[m:])
        if points is None:
            return None
        u, d, w = points
        if u_all.size * u.size > _MAX_CANDIDATES:
            return None
        u_all, d_all, w_all = _merge(
            (u_all[:, None] + u).ravel(), (d_all[:, None] + d).ravel(), np.outer(w_all, w).ravel()
        )
        if u_all.size > MAX_STATES:
            return None
    moves = d_all > 0.0
    with np.errstate(over="ignore"):
        crit = u_all[moves] / d_all[moves] * scale
    order = np.argsort(crit, kind="stable")
    tolerance = TIE * _spread(z) * scale
    return FlipDistribution(
        delta=delta,
        high=crit[order] + tolerance,
        low=crit[order] - tolerance,
        always=1,
        total=s.labellings,
        exact=True,
        cumulative=np.cumsum(w_all[moves][order]),
    )


def _spread(z: np.ndarray) -> float:
    """The range of scaled scores (finite: each is within ±2)."""
    return float(z.max() - z.min()) if z.size else 0.0


@dataclass(frozen=True, slots=True)
class Drawn:
    """``rows`` random joint labellings of strata of one shape: per group of cases with the
    same ``(m, n)`` (``groups``, their case indices), the labelling drawn for each case,
    as an index into that shape's table (``picks``, ``(rows, cases)``) or, for shapes with
    more than :data:`MAX_SUBSETS` labellings, as the ``(rows, cases, m + n)`` moved signs."""

    rows: int
    groups: list[tuple[int, int, np.ndarray]]
    picks: list[np.ndarray]


def draw(s: Strata, *, n_resamples: int, seed: int, tables: SubsetTables) -> Drawn:
    """``n_resamples`` joint labellings of strata shaped like ``s``, from
    ``numpy.random.default_rng(seed)``: the same shapes and seed give the same draws."""
    rng = np.random.default_rng(seed)
    shapes = sorted(set(zip(s.head_runs.tolist(), s.base_runs.tolist(), strict=True)))
    groups, picks = [], []
    for m, n in shapes:
        cases = np.flatnonzero((s.head_runs == m) & (s.base_runs == n))
        groups.append((m, n, cases))
        count = math.comb(m + n, m)
        if count <= MAX_SUBSETS:
            picks.append(rng.integers(0, count, size=(n_resamples, cases.size), dtype=np.int16))
            continue
        ranks = np.argsort(rng.random((n_resamples, cases.size, m + n)), axis=2).argsort(axis=2)
        moved = (ranks < m).astype(np.int8)
        moved[:, :, :m] -= 1
        picks.append(moved)
    return Drawn(rows=n_resamples, groups=groups, picks=picks)


def drawn_distributions(
    members: list[Strata], deltas: list[float], drawn: Drawn, tables: SubsetTables
) -> list[FlipDistribution]:
    """The drawn distribution of each of ``members`` (strata of one shape, the one
    ``drawn`` was made for). Cost: one product of the moved signs with the scores per
    block of labellings, for all members at once (~20 ms for 1,000 cases x 3 runs x 8
    tests x 2000 labellings)."""
    u, d, scales = _drawn_sums(members, drawn, tables)
    identity = d == 0.0
    always = int(identity.sum()) + 1
    out = []
    for j, s in enumerate(members):
        scale = scales[j]
        with np.errstate(over="ignore"):
            crit = np.sort(u[~identity, j] / d[~identity] * scale)
        tolerance = TIE * _spread(s.values / scale) * scale
        out.append(
            FlipDistribution(
                delta=deltas[j],
                high=crit + tolerance,
                low=crit - tolerance,
                always=always,
                total=drawn.rows + 1,
                exact=False,
            )
        )
    return out


def _layout(members: list[Strata], drawn: Drawn) -> tuple[np.ndarray, np.ndarray]:
    """The matrix the moved signs are multiplied with, ``(slots, members + 1)``, rows in
    the drawn groups' order (cases of a shape together): each member's scores divided by
    its scale, times its case's ``g``; the last column ``g`` on baseline runs (so the
    product's last column is ``Σ k g``). Also each member's scale."""
    first = members[0]
    slots, g, base = [], [], []
    for m, n, cases in drawn.groups:
        slots.append(positions(first.start[cases], np.full(cases.size, m + n)))
        g.append(np.full(cases.size * (m + n), 1.0 / m + 1.0 / n))
        base.append(np.tile(np.r_[np.zeros(m), np.ones(n)], cases.size))
    order, weight = np.concatenate(slots), np.concatenate(g)
    scales = np.array([_scale(s.values) for s in members])
    columns = np.empty((order.size, len(members) + 1))
    for j, s in enumerate(members):
        columns[:, j] = s.values[order] / scales[j] * weight
    columns[:, -1] = np.concatenate(base) * weight
    return np.asfortranarray(columns), scales


def _drawn_sums(
    members: list[Strata], drawn: Drawn, tables: SubsetTables
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per drawn labelling: ``Σ u`` of each member (``(rows, members)``, in units of the
    member's scale, returned third) and ``Σ k g`` (``(rows,)``): the moved signs of a
    block of labellings (gathered from each shape's table, a case's signs as one record)
    times :func:`_layout`'s matrix."""
    columns, scales = _layout(members, drawn)
    packed = []
    for m, n, _ in drawn.groups:
        moved = tables.get(m, n)[0] if math.comb(m + n, m) <= MAX_SUBSETS else None
        packed.append(None if moved is None else moved.view(np.dtype((np.void, m + n))).ravel())
    out = np.empty((drawn.rows, len(members) + 1))
    step = max(16, BLOCK_ELEMENTS // max(1, columns.shape[0]))
    with threadpool_limits(limits=1, user_api="blas"):
        for lo in range(0, drawn.rows, step):
            hi = min(drawn.rows, lo + step)
            parts = [
                (pick[lo:hi] if table is None else table[pick[lo:hi]])
                .view(np.int8)
                .reshape(hi - lo, -1)
                for table, pick in zip(packed, drawn.picks, strict=True)
            ]
            block = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
            out[lo:hi] = block.astype(np.float64) @ columns
    return -out[:, :-1], out[:, -1], scales
