# MatchTable: one game of the match driver (uno_mk_env.evaluation.match.play_match) on the core,
# the seats whose agents have a compiled twin deciding inside C.
# Included by _core.pyx (one extension module, split by idea: Cython include); the
# declarations and helpers it uses are at the top of _core.pyx.

# --------------------------------------------------------------------------- match table
cdef class MatchTable:
    """One game of the match driver on the compiled core.

    The seats whose agent has a compiled twin (``random``, ``greedy``, ``strategic``) decide
    inside :meth:`advance`, in C; any other seat's decision is asked in Python by the caller
    (:meth:`advance` returns its seat) and applied with :meth:`step`. The step cap is the match
    driver's: ``max_steps`` public decisions of a round (a ``KEEP`` not counted), never inside a
    drawn card's decision.

    Args:
        rules: the table's :class:`uno_mk_env.Rules`.
        game_seed: the deal's seed (``Game(rules, seed=game_seed)``).
        agents: one entry per seat: ``None`` (a Python agent) or the seat's twin as
            ``(slot, kind, setting, rng_state)``: seats sharing one agent object share a
            ``slot`` (its memory and generator); ``kind`` ``"random"``, ``"greedy"`` or
            ``"strategic"``; ``setting`` the greedy agent's ``challenge_hand`` or the strategic
            agent's ``StrategicParams`` (``None`` for random); ``rng_state`` the agent's
            generator state (a PCG64's, as ``bit_generator.state`` shows it).
        max_steps: the cap per round, or ``None``.
    """

    cdef readonly CompiledGame game
    cdef uno_agent agents[10]
    cdef uno_agent_params params[10]
    cdef int agent_of[10]
    cdef int nslots
    cdef int64_t max_steps, in_round
    cdef readonly bint capped

    def __init__(self, rules, game_seed, agents, max_steps=None):
        self.game = CompiledGame(rules, seed=game_seed, event_log="off")
        n = rules.num_players
        if len(agents) != n:
            raise ValueError(f"{len(agents)} agents given for a table of {n}")
        memset(self.agents, 0, sizeof(self.agents))
        self.nslots = 0
        for seat, twin in enumerate(agents):
            if twin is None:
                self.agent_of[seat] = -1
                continue
            slot, kind, setting, state = twin
            if not 0 <= slot < n or kind not in _AGENT_KINDS:
                raise ValueError(f"seat {seat}: twin {ref.quote(twin)} is not allowed")
            self.agent_of[seat] = slot
            if slot >= self.nslots:
                self.nslots = slot + 1
            self.agents[slot].kind = _AGENT_KINDS[kind]
            if state.get("bit_generator") != "PCG64":
                raise ValueError(f"seat {seat}: the twin's generator must be a PCG64's state")
            _set_pcg_state(&self.agents[slot].rng, state)
            self.params[slot] = _c_params(
                setting if kind == "strategic" and setting is not None else STRATEGIC_DEFAULTS,
                setting if kind == "greedy" else GREEDY_CHALLENGE_HAND)
            uno_agent_forget(&self.agents[slot])
        self.max_steps = -1 if max_steps is None else min(max_steps, _CAP)
        self.in_round = 0
        self.capped = False

    cdef inline void _count(self, int action) noexcept nogil:
        if self.game.g.round_over:
            self.in_round = 0
        else:
            self.in_round += action != UNO_KEEP

    def advance(self):
        """Plays the twins' decisions until a Python agent decides: returns its seat, or ``-1``
        when the game is over or capped (:attr:`capped`)."""
        cdef uno_game *g = &self.game.g
        cdef int p, a, action, rc
        while not g.game_over:
            if self.max_steps >= 0 and self.in_round >= self.max_steps and (
                    g.phase != PH_PLAY_DRAWN):
                self.capped = True
                return -1
            p = g.current_player
            a = self.agent_of[p]
            if a < 0:
                return p
            action = uno_agent_act(&self.agents[a], g, &self.params[a])
            rc = uno_step(g, action)
            if rc == -1:
                raise RuntimeError(f"the compiled {ref.quote(a)} agent chose an illegal action "
                                   f"{action}")
            _check(rc)
            self._count(action)
        return -1

    def step(self, action):
        """Applies a Python agent's ``action`` (checked legal by the caller; an illegal one
        raises as :meth:`CompiledGame.step`)."""
        self.game.step(action)
        self._count(int(action))

    def rng_state(self, int slot):
        """The generator state of the twin ``slot`` (to hand back to the Python agent)."""
        if not 0 <= slot < self.nslots:
            raise IndexError(f"slot {slot} out of range 0-{self.nslots - 1}")
        return _pcg_state(&self.agents[slot].rng)
