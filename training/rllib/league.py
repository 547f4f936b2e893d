"""The league (``--league-size``, ``--league-prob``, ``--snapshot-every``): the agent and module
ids, the policy mapping function, the league's state and its snapshots. Imports nothing of Ray:
the algorithm is passed in."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Module id of the learner; league modules are ``league_0`` ... (see :class:`LeagueMapping`).
MAIN = "main"
LEAGUE_MODULE = "league_{}"
#: Agent ids: a learner seat and a league seat (see the package docstring).
LEARNER_AGENT = "player_{}"
LEAGUE_AGENT = "league_{}"


class LeagueMapping:
    """RLlib's ``policy_mapping_fn`` (agent id, episode) -> module id: a learner seat
    (``player_<seat>``) is always ``main``; a league seat (``league_<seat>``) is one of the
    ``league`` modules, drawn for the episode and seat from a generator seeded by the episode's
    id (``main`` while the league is empty). A plain class, so that Ray can ship it to env
    runners."""

    def __init__(self, league: Sequence[str] = ()) -> None:
        self.league = list(league)

    def __call__(self, agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
        name = str(agent_id)
        if not self.league or not name.startswith("league_"):
            return MAIN
        seat = int(name.rsplit("_", 1)[1])
        episode_id = getattr(episode, "id_", "0")
        rng = np.random.default_rng([int(str(episode_id), 16) % 2**63, seat])
        return self.league[int(rng.integers(len(self.league)))]

    def __repr__(self) -> str:
        return f"LeagueMapping({self.league!r})"


@dataclass
class League:
    """The league's state: ``slots`` (module ids filled so far, in the order they were first
    filled), ``snapshots`` (snapshots taken), ``score`` (the evaluation score when the last one
    was taken) and ``steps`` (env steps of each filled slot's snapshot)."""

    size: int
    slots: list[str] = dataclasses.field(default_factory=list)
    snapshots: int = 0
    score: float = -1.0
    steps: dict[str, int] = dataclasses.field(default_factory=dict)

    def next_slot(self) -> str:
        return LEAGUE_MODULE.format(self.snapshots % self.size)

    @classmethod
    def from_checkpoint(cls, size: int, meta: dict[str, Any] | None) -> League:
        """The league saved in a checkpoint's metadata (an empty one without)."""
        saved = (meta or {}).get("league") or {}
        return cls(size, list(saved.get("slots", [])), int(saved.get("snapshots", 0)),
                   float(saved.get("score", -1.0)), dict(saved.get("steps", {})))


def league_modules(size: int) -> list[str]:
    """The module ids of a league of ``size`` slots."""
    return [LEAGUE_MODULE.format(i) for i in range(size)]


def set_league(algo: Any, league: Sequence[str]) -> None:
    """Points the policy mapping function of the algorithm and of every env runner at the
    filled league slots (as ``Algorithm.add_module(new_agent_to_module_mapping_fn=...)`` does);
    episodes already running keep their mapping."""
    mapping = LeagueMapping(league)
    config = algo.config
    config._is_frozen = False  # as Algorithm.add_module does
    config.multi_agent(policy_mapping_fn=mapping)
    config.freeze()

    def update(runner: Any) -> None:
        runner.config.multi_agent(policy_mapping_fn=mapping)

    algo.env_runner_group.foreach_env_runner(update)


def take_snapshot(algo: Any, league: League, steps: int) -> str:
    """Copies ``main``'s weights into the next league slot (learners and env runners) and
    maps league seats over the filled slots; returns the slot."""
    slot = league.next_slot()
    weights = algo.learner_group.get_weights([MAIN])[MAIN]
    algo.learner_group.set_weights({slot: weights})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       policies=[slot], inference_only=True,
                                       timeout_seconds=60.0)
    if slot not in league.slots:
        league.slots.append(slot)
    league.snapshots += 1
    league.steps[slot] = int(steps)
    set_league(algo, league.slots)
    return slot
