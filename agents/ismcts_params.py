"""The search agent's settings: :class:`SearchParams` and the ``ismcts`` spec that sets them
(``ismcts:200:c=0.5``, :func:`parse_spec`; options :data:`SPEC_OPTIONS`, number ranges
:data:`SPEC_LIMITS`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

from .base import AgentSpecError

__all__ = [
    "CHOICES", "DEFAULT_SIMULATIONS", "MAX_POLICY_CHARS", "PPO_PRIORS", "SPEC_LIMITS",
    "SPEC_OPTIONS", "SearchParams", "parse_spec",
]

#: Iterations per decision of the plain ``ismcts`` spec.
DEFAULT_SIMULATIONS = 100


@dataclass(frozen=True)
class SearchParams:
    """The search's settings (spec options in brackets, see :data:`SPEC_OPTIONS`).

    Attributes:
        simulations: iterations per decision when ``milliseconds`` is ``None``.
        milliseconds: wall-clock search time per decision instead (not reproducible) [ms].
        exploration: UCB1 constant ``c``; rewards lie in ``[-1/(N-1), 1]`` [c].
        max_depth: default-policy decisions per simulation before it is scored by the
            ``value`` model; ``0``: play every simulation to the end of the round [depth].
        epsilon: randomness of the default policy
            (:func:`~uno_mk_env.agents.ismcts_playout.rollout_action`) [eps].
        prior_bonus: added at the root to the UCB value of the prior's choice [bonus].
        prior: whose choice gets the bonus: ``"strategic"`` (the rule agent) or ``"ppo"`` (the
            shipped PPO policy for the table size, :data:`PPO_PRIORS`: ``ppo_2p`` at two
            players, ``ppo_4p``, trained at four, at three to ten; package data,
            :mod:`uno_mk_env.agents.shipped`) [prior].
        policy: the policy of ``prior="ppo"`` instead of :data:`PPO_PRIORS`: a shipped policy's
            name or a policy file's path, as ``ppo:NAME|PATH`` takes it (in a spec, a path
            without ``:``); needs ``prior="ppo"`` [policy].
        significance: ``z`` of the test that lets the search overrule the prior: the most
            visited root action is played instead of the prior's only if its mean exceeds the
            prior's by more than ``z`` standard errors of the difference (the prior then gets at
            least a quarter of the iterations, so that both means are measured); ``0``: no
            test [z].
        value: the model that scores a simulation cut off at ``max_depth``: ``"size"``
            (``P(win) ∝ size ** -k``) or ``"logit"``
            (:func:`~uno_mk_env.agents.ismcts_playout.logit_rewards`: a conditional logit on
            hand size, wilds, action cards, colours held and turn) [value].
        value_exponent: ``k`` of the hand-size model ``P(win) ∝ size ** -k``; ``None``: 0.5 at
            two players, 1.0 at more (maximum-likelihood fits on games of the rule agents) [k].
        use_voids: bias determinizations by the ``strategic`` agent's void beliefs [voids].
        rollout: the default policy: ``"fast"``
            (:func:`~uno_mk_env.agents.ismcts_playout.rollout_action`) or ``"strategic"``
            (the ``strategic`` agent, without its table memory, for every seat; slower)
            [rollout].
        crn: common random numbers at the root: the root action is chosen before the
            determinization, and the ``m``-th visit of every root action plays the same
            ``m``-th sampled deal and rollout seed [crn].
    """

    simulations: int = DEFAULT_SIMULATIONS
    milliseconds: float | None = None
    exploration: float = 0.7
    max_depth: int = 4
    epsilon: float = 0.1
    prior_bonus: float = 0.1
    value_exponent: float | None = None
    use_voids: bool = True
    rollout: str = "fast"
    crn: bool = False
    prior: str = "strategic"
    policy: str = ""
    significance: float = 0.0
    value: str = "logit"


#: The longest ``policy`` option a spec takes (a path).
MAX_POLICY_CHARS = 4096
#: Values of the string options.
CHOICES = {"rollout": ("fast", "strategic"), "prior": ("strategic", "ppo"),
           "value": ("size", "logit")}
#: The shipped PPO policies (:mod:`uno_mk_env.agents.shipped`) used by ``prior="ppo"``, by
#: table size: the key 2 at two players, the key 4 at every larger table.
PPO_PRIORS = {2: "ppo_2p", 4: "ppo_4p"}
#: Spec option names (``ismcts:200:c=0.5``) and the :class:`SearchParams` field each sets.
SPEC_OPTIONS = {
    "c": "exploration", "depth": "max_depth", "eps": "epsilon", "bonus": "prior_bonus",
    "prior": "prior", "policy": "policy", "z": "significance", "value": "value",
    "k": "value_exponent", "voids": "use_voids", "rollout": "rollout",
    "crn": "crn",
}
#: The range (inclusive) of every number a spec or
#: :class:`~uno_mk_env.agents.ismcts.ISMCTSAgent` takes, by :class:`SearchParams` field: the
#: budget stops at 100,000 iterations (seconds to a minute per move) or 60,000 ms per move, so
#: that every move ends.
SPEC_LIMITS: dict[str, tuple[float, float]] = {
    "simulations": (1, 100_000), "milliseconds": (1, 60_000), "exploration": (0, 100),
    "max_depth": (0, 10_000), "epsilon": (0, 1), "prior_bonus": (0, 100),
    "significance": (0, 100), "value_exponent": (0, 100),
}
_SPEC_HELP = ("'ismcts', 'ismcts:N' (N iterations per move, 1-100000), 'ismcts:Tms' (T "
              "milliseconds per move, 1-60000), optionally followed by :key=value options ("
              + ", ".join(SPEC_OPTIONS) + "), as in 'ismcts:200' or 'ismcts:100ms:c=0.5'")


def _spec_number(name: str, text: str) -> float:
    """The number ``text`` for the :class:`SearchParams` field ``name``: an int or a float as
    the field is, within ``SPEC_LIMITS[name]`` (read only up to 20 characters, so Python's
    integer-string limit is never met).

    Raises:
        ValueError: (no message) anything else.
    """
    is_int = "int" in str({f.name: f.type for f in fields(SearchParams)}[name])
    if len(text) > 20 or (is_int and not text.isdigit()):
        raise ValueError
    value = int(text) if is_int else float(text)
    low, high = SPEC_LIMITS[name]
    if not low <= value <= high:  # also NaN
        raise ValueError
    return value


def _allowed(name: str) -> str:
    """What the spec option for the field ``name`` takes (for error messages)."""
    if name == "policy":
        return f"a shipped policy's name or a policy file's path (1-{MAX_POLICY_CHARS} characters)"
    if name in CHOICES:
        return " or ".join(CHOICES[name])
    if name not in SPEC_LIMITS:
        return "0, 1, true or false"
    kind = "an int" if "int" in str({f.name: f.type for f in fields(SearchParams)}[name]) else (
        "a number")
    return f"{kind} from {SPEC_LIMITS[name][0]:g} to {SPEC_LIMITS[name][1]:g}"


def parse_spec(arg: str | None) -> SearchParams:
    """:class:`SearchParams` from the text after ``ismcts:`` (``None``: the defaults); every
    number within :data:`SPEC_LIMITS`.

    Raises:
        AgentSpecError: (a ``ValueError``) one line naming the bad part and what is allowed.
    """
    params = SearchParams()
    if arg is None:
        return params
    budget, *options = [part.strip() for part in arg.split(":")]
    m = re.fullmatch(r"(\d{1,20})(ms)?", budget)
    try:
        if not m:
            raise ValueError
        field = "milliseconds" if m.group(2) else "simulations"
        budget_value: Any = _spec_number(field, m.group(1))  # an int or a float
        params = replace(params, **{field: budget_value})
    except ValueError:
        raise AgentSpecError(f"agent 'ismcts': bad budget {budget[:40]!r}; allowed: "
                             f"{_SPEC_HELP}") from None
    types = {f.name: f.type for f in fields(SearchParams)}
    for option in options:
        key, sep, text = option.partition("=")
        if not sep or key not in SPEC_OPTIONS:
            raise AgentSpecError(f"agent 'ismcts': bad option {option[:40]!r}; allowed: "
                                 f"{_SPEC_HELP}")
        name = SPEC_OPTIONS[key]
        value: Any  # str, bool or a number, as the field is
        try:
            if name in CHOICES:
                if text not in CHOICES[name]:
                    raise ValueError
                value = text
            elif name == "policy":
                if not text or len(text) > MAX_POLICY_CHARS:
                    raise ValueError
                value = text
            elif "bool" in str(types[name]):
                if text not in ("0", "1", "true", "false"):
                    raise ValueError
                value = text in ("1", "true")
            else:
                value = _spec_number(name, text)
        except ValueError:
            raise AgentSpecError(f"agent 'ismcts': bad value in {option[:40]!r}; {key} takes "
                                 f"{_allowed(name)}") from None
        params = replace(params, **{name: value})
    if params.policy and params.prior != "ppo":
        raise AgentSpecError(f"agent 'ismcts': policy={params.policy[:40]!r} needs prior=ppo "
                             "(the policy is the PPO prior's)")
    return params
