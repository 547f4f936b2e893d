"""Sequential probability ratio tests on duplicate deals: stop a match as soon as the answer
to "is A at least ``elo1`` better than B, or at most ``elo0``?" is known.

The unit is the deal, not the game
    A duplicate deal is played once per seat rotation (:mod:`~uno_mk_env.evaluation.scheduling`),
    and the games of a deal are strongly correlated (the same cards). As fishtest does for the
    two games of a chess opening (its *pentanomial* model), the test counts one outcome per
    deal: the share of the other seats that entrant 0 finished ahead of, averaged over the
    deal's games (ties half). At two players a deal is a pair of games and its score is one of
    ``0, 1/4, 1/2, 3/4, 1`` (LL, LD, WL or DD, WD, WW; a game without winner is a draw): the
    pentanomial. At ``n`` players the score is a multiple of ``1/K`` with
    ``K = 2 n (n - 1)`` (:func:`score_units`), a multinomial of ``K + 1`` outcomes, tested the
    same way.

The test (fishtest's generalized SPRT, logistic Elo)
    ``elo`` maps to an expected score ``s = 1 / (1 + 10 ** (-elo / 400))``. With the empirical
    distribution ``p`` of the deals' scores (a count of 0 replaced by ``1e-3``), the maximum
    likelihood distribution with mean ``s`` is ``p_i / (1 + x (a_i - s))``, ``x`` the root of
    ``sum_i p_i (a_i - s) / (1 + x (a_i - s)) = 0`` (the secular equation; Van den Bergh,
    "support_MLE_multinomial", Proposition 1.1). The log-likelihood ratio of ``s1`` against
    ``s0`` is ``N sum_i p_i log(pdf1_i / pdf0_i)`` (:func:`llr`). H1 is accepted when it reaches
    ``log((1 - beta) / alpha)``, H0 when it falls to ``log(beta / (1 - alpha))``.

When it is checked
    After every deal, in the order of the schedule: deal ``d`` counts once every deal before it
    is complete, whichever worker played it and whenever it arrived. So the deal at which the
    test stops, and with it the result, depends only on the seed, not on the number of workers
    or the backend; games of later deals that were already played are dropped. The test never
    stops before ``min_games`` games, and a run that reaches its game budget undecided ends
    *inconclusive*.

Validation
    :func:`simulate` runs many tests on deals drawn from a known distribution (numpy only); at
    ``elo0`` the share accepting H1 estimates ``alpha``, at ``elo1`` the share accepting H0
    estimates ``beta`` (``tests/test_sprt.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from uno_mk_env.errors import UnoMkError, quote


class GameRecord(Protocol):
    """What the test reads of a game's record (:class:`~uno_mk_env.evaluation.results.GameRecord`,
    which imports this module)."""

    @property
    def index(self) -> int: ...
    @property
    def deal(self) -> int: ...
    @property
    def seats(self) -> tuple[int, ...]: ...
    @property
    def places(self) -> tuple[int, ...]: ...

__all__ = ["DEFAULT_MIN_GAMES", "Sprt", "SprtError", "SprtSpec", "deal_score", "elo_to_score",
           "llr", "outcome", "parse_bounds", "score_units", "simulate"]

#: Games played before the test may stop (a few deals are no evidence of a distribution).
DEFAULT_MIN_GAMES = 200
#: Count given to an outcome never seen, so the likelihoods stay finite (fishtest's value).
_PRIOR = 1e-3
#: Bisection steps on the secular equation's root (its interval has length < 1/(s(1-s)) < 10^3
#: for the scores allowed, so 60 halvings leave it far below float precision of the LLR).
_BISECTIONS = 60
#: Elo bounds allowed (a score of 0.9997 is beyond any useful question).
MAX_ELO = 1400
#: Deals :func:`simulate` steps at once.
_SIM_STEPS = 100


class SprtError(UnoMkError, ValueError):
    """Bad SPRT parameters (one line naming the value and what is allowed)."""


def elo_to_score(elo: float) -> float:
    """The expected score of an Elo difference (logistic Elo, as fishtest's ``L_``)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclass(frozen=True)
class SprtSpec:
    """A test's parameters: H0 ``elo <= elo0`` against H1 ``elo >= elo1`` (logistic Elo of
    entrant 0 against the others), error rates ``alpha`` (accepting H1 at ``elo0``) and ``beta``
    (accepting H0 at ``elo1``), and the games before any stop."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_games: int = DEFAULT_MIN_GAMES

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not -MAX_ELO <= value <= MAX_ELO:
                raise SprtError(f"SPRT {name} must be a number from {-MAX_ELO} to {MAX_ELO}, "
                                f"got {quote(value)}")
        if not self.elo0 < self.elo1:
            raise SprtError(f"SPRT bounds need elo0 < elo1, got {self.elo0:g} and "
                            f"{self.elo1:g}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 < value < 0.5:
                raise SprtError(f"SPRT {name} must be above 0 and below 0.5, got "
                                f"{quote(value)}")
        if (not isinstance(self.min_games, int) or isinstance(self.min_games, bool)
                or self.min_games < 0):
            raise SprtError(f"SPRT min_games must be an int >= 0, got {quote(self.min_games)}")

    @property
    def bounds(self) -> tuple[float, float]:
        """``(lower, upper)``: the LLR at which H0, respectively H1, is accepted."""
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SprtSpec:
        return cls(**{k: d[k] for k in ("elo0", "elo1", "alpha", "beta", "min_games")})


def parse_bounds(text: str, flag: str = "--sprt") -> tuple[float, float]:
    """``"0,20"`` -> ``(0.0, 20.0)``.

    Raises:
        SprtError: not two comma-separated numbers with the first below the second.
    """
    parts = str(text).split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        elo0, elo1 = (float(p) for p in parts)
        if not all(math.isfinite(v) for v in (elo0, elo1)):
            raise ValueError
    except ValueError:
        raise SprtError(f"{flag} takes ELO0,ELO1 (two numbers in logistic Elo, e.g. 0,20), got "
                        f"{quote(text)}") from None
    SprtSpec(elo0, elo1)  # the bounds' own checks, one line
    return elo0, elo1


# ----------------------------------------------------------------------------- outcomes
def score_units(num_players: int) -> int:
    """``K``: a deal's score is a multiple of ``1/K`` (``K = 2 n (n - 1)``; 4 at 2 players)."""
    return 2 * num_players * (num_players - 1)


def deal_score(games: Sequence[GameRecord], entrant: int = 0) -> int:
    """The score of ``entrant`` over the games of one deal, in units of ``1/K``
    (:func:`score_units`): two units for each other seat it finished ahead of, one for each it
    tied with."""
    units = 0
    for g in games:
        mine = g.places[g.seats.index(entrant)]
        units += sum(2 if p > mine else 1 if p == mine else 0
                     for s, p in enumerate(g.places) if g.seats[s] != entrant)
    return units


def llr(counts: np.ndarray, s0: float, s1: float) -> np.ndarray:
    """The generalized log-likelihood ratio of mean score ``s1`` against ``s0`` (module
    docstring) for each row of ``counts`` (``(..., K + 1)``: deals per score ``i / K``)."""
    c = np.asarray(counts, dtype=float)
    c = np.where(c == 0, _PRIOR, c)
    n = c.sum(axis=-1, keepdims=True)
    p = c / n
    a = np.linspace(0.0, 1.0, c.shape[-1])
    return n[..., 0] * ((p * _log_ratio(p, a, s0)).sum(-1) - (p * _log_ratio(p, a, s1)).sum(-1))


def _log_ratio(p: np.ndarray, a: np.ndarray, s: float) -> np.ndarray:
    """``log(p_i / pdf_i)`` for the maximum-likelihood ``pdf`` of mean ``s``:
    ``log(1 + x (a_i - s))`` with ``x`` the secular equation's root, found by bisection on
    ``(-1/(1-s), 1/s)`` where the left side decreases from +inf to -inf."""
    d = a - s
    lo = np.full(p.shape[:-1], -1.0 / (1.0 - s))
    hi = np.full(p.shape[:-1], 1.0 / s)
    for _ in range(_BISECTIONS):
        x = 0.5 * (lo + hi)
        f = (p * d / (1.0 + x[..., None] * d)).sum(-1)
        lo = np.where(f > 0, x, lo)
        hi = np.where(f > 0, hi, x)
    return np.log1p(0.5 * (lo + hi)[..., None] * d)


# ------------------------------------------------------------------------------ the test
class Sprt:
    """The test as a tournament runs it: :meth:`add` the finished games in any order; deals are
    counted in schedule order (module docstring) and :attr:`decision` is set at the first deal
    where the LLR leaves its bounds (never before ``min_games``)."""

    def __init__(self, spec: SprtSpec, num_players: int, entrant: int = 0):
        self.spec = spec
        self.num_players = num_players
        self.entrant = entrant
        self.s0, self.s1 = elo_to_score(spec.elo0), elo_to_score(spec.elo1)
        self.counts = np.zeros(score_units(num_players) + 1, dtype=np.int64)
        self.deals = 0  #: deals counted (the first ``deals`` of the schedule)
        self.llr = 0.0
        self.decision: str | None = None  #: ``"H0"``, ``"H1"`` or ``None``
        self._waiting: dict[int, GameRecord] = {}

    @property
    def games(self) -> int:
        """Games counted: those of the first :attr:`deals` deals."""
        return self.deals * self.num_players

    def add(self, records: Iterable[GameRecord]) -> bool:
        """Takes finished games; returns whether the test has decided."""
        for r in records:
            if r.index >= self.games:
                self._waiting[r.index] = r
        n = self.num_players
        lower, upper = self.spec.bounds
        while self.decision is None and all(self.games + i in self._waiting for i in range(n)):
            block = [self._waiting.pop(self.games + i) for i in range(n)]
            self.counts[deal_score(block, self.entrant)] += 1
            self.deals += 1
            if self.games >= max(self.spec.min_games, 1):
                self.llr = float(llr(self.counts, self.s0, self.s1))
                if self.llr >= upper:
                    self.decision = "H1"
                elif self.llr <= lower:
                    self.decision = "H0"
        if self.decision is not None:
            self._waiting.clear()
        return self.decision is not None

    def outcome(self) -> dict[str, Any]:
        """The test's state as a JSON-safe dict (the result's ``sprt``)."""
        lower, upper = self.spec.bounds
        k = len(self.counts) - 1
        mean = (float(self.counts @ np.arange(k + 1)) / (k * self.deals) if self.deals
                else None)
        return {
            **self.spec.to_dict(),
            "decision": self.decision or "inconclusive",
            "llr": round(self.llr, 6), "lower_bound": round(lower, 6),
            "upper_bound": round(upper, 6), "games": self.games, "deals": self.deals,
            "deal_scores": [int(c) for c in self.counts], "mean_score": mean,
        }

    def summary(self) -> str:
        """One line: the decision, the LLR and its bounds, the games used."""
        o = self.outcome()
        what = {"H1": f"H1 accepted (elo >= {self.spec.elo1:g})",
                "H0": f"H0 accepted (elo <= {self.spec.elo0:g})",
                None: "inconclusive: the game budget ended before a decision"}[self.decision]
        return (f"SPRT [{self.spec.elo0:g}, {self.spec.elo1:g}] alpha={self.spec.alpha:g} "
                f"beta={self.spec.beta:g}: {what}; LLR {o['llr']:.2f}, bounds "
                f"[{o['lower_bound']:.2f}, {o['upper_bound']:.2f}] after {o['games']:,} games "
                f"({o['deals']:,} deals)")


def outcome(spec: SprtSpec, records: Iterable[GameRecord], num_players: int) -> dict[str, Any]:
    """The outcome of the test over ``records`` (what :class:`Sprt` reached when it ran)."""
    test = Sprt(spec, num_players)
    test.add(records)
    return test.outcome()


# -------------------------------------------------------------------------- simulation
def simulate(pdf: Sequence[float], spec: SprtSpec, runs: int, max_deals: int,
             rng: np.random.Generator, games_per_deal: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``runs`` tests on deals whose scores ``i / K`` are drawn with probabilities ``pdf``,
    checked after every deal like :class:`Sprt` (numpy only: the runs still undecided are
    stepped :data:`_SIM_STEPS` deals at a time, the LLR of every deal of the stretch at once).

    Returns:
        ``(decisions, deals)``: per run +1 (H1), -1 (H0) or 0 (undecided after ``max_deals``),
        and the deals it used.
    """
    probs = np.asarray(pdf, dtype=float)
    s0, s1 = elo_to_score(spec.elo0), elo_to_score(spec.elo1)
    lower, upper = spec.bounds
    draws = rng.choice(len(probs), size=(runs, max_deals), p=probs / probs.sum())
    counts = np.zeros((runs, len(probs)), dtype=np.int64)
    decisions = np.zeros(runs, dtype=np.int64)
    used = np.full(runs, max_deals, dtype=np.int64)
    active = np.arange(runs)
    min_deals = max(-(-spec.min_games // games_per_deal), 1)
    eye = np.eye(len(probs), dtype=np.int64)
    for start in range(0, max_deals, _SIM_STEPS):
        stop = min(start + _SIM_STEPS, max_deals)
        # counts after each deal of the stretch, for every run still undecided
        path = counts[active, None, :] + np.cumsum(eye[draws[active, start:stop]], axis=1)
        ratio = llr(path, s0, s1)
        ratio[:, : max(min_deals - start - 1, 0)] = 0.0  # before min_games: no stop
        up, down = ratio >= upper, ratio <= lower
        crossed = up | down
        hit = crossed.any(axis=1)
        first = crossed.argmax(axis=1)
        rows = np.flatnonzero(hit)
        decisions[active[rows]] = np.where(up[rows, first[rows]], 1, -1)
        used[active[rows]] = start + first[rows] + 1
        counts[active] = path[:, -1, :]
        active = active[~hit]
        if not len(active):
            break
    return decisions, used


def tilt(pdf: Sequence[float], score: float) -> np.ndarray:
    """The distribution nearest ``pdf`` (maximum likelihood, as in :func:`llr`) whose mean
    score is ``score``: a known pentanomial moved to a boundary strength."""
    p = np.asarray(pdf, dtype=float)
    p = p / p.sum()
    a = np.linspace(0.0, 1.0, len(p))
    return p / np.exp(_log_ratio(p, a, score))
