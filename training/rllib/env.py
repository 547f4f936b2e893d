"""``uno_mario_kart_v0`` for RLlib: RLlib's own ``PettingZooEnv`` over the PettingZoo AEC env
(``raw_env``), with the table's seats drawn every episode (the package docstring, "Seats").

``PettingZooEnv`` passes each agent, when it next decides or when the game ends, its
``last()`` reward: the AEC env's cumulative reward since that agent last acted, so each RLlib
agent's return is the env's own (``tests/test_rllib.py`` checks it against the rewards of the
AEC env on seeded 2-, 3- and 4-player games of both reward modes, truncated ones included).
This subclass adds only what the table needs: the seats played inside the env by rule-based
agents (invisible to RLlib) and the league seats' agent ids.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

from uno_mk_env.agents.base import build_agent
from uno_mk_env.engine.seeding import Stream, derive_seed
from uno_mk_env.envs.aec import raw_env
from uno_mk_env.envs.agent import agent_action

from .league import LEAGUE_AGENT, LEARNER_AGENT

__all__ = ["UnoMultiAgentEnv"]


class UnoMultiAgentEnv(PettingZooEnv):
    """``uno_mario_kart_v0`` as an RLlib ``MultiAgentEnv`` (see the module docstring).

    ``config`` (RLlib's ``env_config``, an ``EnvContext`` on env runners): ``num_players``,
    ``reward``, ``max_steps``, ``rules`` (rule options), ``seed``, ``league_prob``,
    ``opponents`` (agent specs), ``opponent_prob``. The env's generator is seeded from
    ``seed`` and the env runner's worker and vector indices; ``reset(seed=s)`` reseeds it. An
    action the mask forbids is refused (the engine raises ``IllegalActionError``; nothing
    changes).
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        worker = int(getattr(config, "worker_index", 0))
        vector = int(getattr(config, "vector_index", 0))
        config = dict(config or {})
        n = self.num_players = int(config.get("num_players", 2))
        super().__init__(raw_env(num_players=n, reward=str(config.get("reward", "win")),
                                 max_steps=int(config.get("max_steps", 2000)),
                                 **dict(config.get("rules") or {})))
        self.league_prob = float(config.get("league_prob", 0.0))
        self.opponent_prob = float(config.get("opponent_prob", 0.0))
        root = int(config.get("seed", 0))
        self._rng = np.random.default_rng(derive_seed(root, Stream.LEAGUE_SEATS, worker, vector))
        specs = [str(s) for s in config.get("opponents") or []]
        # one agent object per seat and spec: rule-based agents remember a game's history
        self._fixed = [[build_agent(spec, seed=derive_seed(root, Stream.FIXED_SEATS, worker,
                                                           vector, seat, i))
                        for i, spec in enumerate(specs)] for seat in range(n)]
        self.learner_ids = [LEARNER_AGENT.format(s) for s in range(n)]
        self.league_ids = [LEAGUE_AGENT.format(s) for s in range(n)]
        names = self.learner_ids + self.league_ids
        self.possible_agents = [*names]  # a list of RLlib's AgentID
        self.agents = []
        pz_agent = self.env.possible_agents[0]
        observation = self.env.observation_space(pz_agent)
        action = self.env.action_space(pz_agent)
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self.action_spaces = dict.fromkeys(self.possible_agents, action)
        self.observation_space = gymnasium.spaces.Dict(dict.fromkeys(names, observation))
        self.action_space = gymnasium.spaces.Dict(dict.fromkeys(names, action))
        self._seat_agent: list[str | None] = [None] * n  # None: a rule-based seat
        self._seat_fixed: list[Any] = [None] * n
        self._seat_of = {a: s for s, a in enumerate(self.env.possible_agents)}

    @property
    def game(self) -> Any:
        """The engine's game of the current episode."""
        return self.env.game

    # -------------------------------------------------------------- episode
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        while True:  # a deal the rule-based seats finish before any RLlib seat decides: redrawn
            self._draw_seats(self._rng)
            obs, _ = super().reset(seed=int(self._rng.integers(2**63)))
            obs, *_ = self._play_fixed((obs, {}, {}, {}, {}))
            if self.env.agents:
                break
        self.agents = [a for a in self._seat_agent if a is not None]
        return self._renamed(obs), {}

    def _draw_seats(self, rng: np.random.Generator) -> None:
        """One guaranteed learner seat; each other seat is a rule-based one with
        ``opponent_prob``, a league seat with ``league_prob``, else a learner seat."""
        learner = int(rng.integers(self.num_players))
        for seat in range(self.num_players):
            self._seat_fixed[seat] = None
            u = rng.random() if seat != learner else 1.0
            if u < self.opponent_prob:
                agents = self._fixed[seat]
                agent = agents[int(rng.integers(len(agents)))]
                agent.reset(int(rng.integers(2**63)))
                self._seat_fixed[seat] = agent
                self._seat_agent[seat] = None
            elif u < self.opponent_prob + self.league_prob:
                self._seat_agent[seat] = self.league_ids[seat]
            else:
                self._seat_agent[seat] = self.learner_ids[seat]

    # RLlib's MultiAgentEnv derives from gymnasium.Env but its step returns five dicts, not
    # Env.step's single-agent tuple; the ignore is unused when ray is not installed (it is Any)
    def step(  # type: ignore[override, unused-ignore]
        self, action_dict: dict[Any, Any]
    ) -> tuple[dict, dict, dict, dict, dict]:
        seat = self.game.current_player
        agent = self._seat_agent[seat]
        if agent not in action_dict or len(action_dict) != 1:
            raise ValueError(f"expected an action for {agent} only (the decider), got "
                             f"{sorted(map(str, action_dict))}")
        out = super().step({self.env.agent_selection: int(action_dict[agent])})
        obs, rewards, terminateds, truncateds, infos = self._play_fixed(out)
        over = not self.env.agents
        terminateds = self._renamed(terminateds)
        truncateds = self._renamed(truncateds)
        terminateds["__all__"] = over and all(terminateds.values())
        truncateds["__all__"] = over and all(truncateds.values())
        return (self._renamed(obs), self._renamed(rewards), terminateds, truncateds,
                self._renamed(infos))

    # -------------------------------------------------------------- internals
    def _play_fixed(self, out: tuple[dict, ...]) -> tuple[dict, ...]:
        """Rule-based seats decide until an RLlib seat does or the game ends; the dicts of
        their steps are merged (each agent appears in the step that reports it)."""
        merged = tuple(dict(d) for d in out)
        env = self.env
        while env.agents and self._seat_agent[self._seat_of[env.agent_selection]] is None:
            if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                break  # the game is over: PettingZooEnv has reported every agent
            agent = self._seat_fixed[self._seat_of[env.agent_selection]]
            step = super().step({env.agent_selection: agent_action(agent, env.game)})
            for mine, new in zip(merged, step):
                mine.update(new)
        return merged

    def _renamed(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` keyed by this episode's agent ids (a rule-based seat's entry dropped)."""
        out = {}
        for key, value in values.items():
            agent = self._seat_agent[self._seat_of[key]] if key in self._seat_of else None
            if agent is not None:
                out[agent] = value
        return out
