# BatchedTables: N tables stepped in C with the GIL released, opponents inside the core.
# Included by _core.pyx (one extension module, split by idea: Cython include); the
# declarations and helpers it uses are at the top of _core.pyx.

# ------------------------------------------------------------------------ batched tables
_AGENT_KINDS = {"random": AG_RANDOM, "greedy": AG_GREEDY, "strategic": AG_STRATEGIC}
#: StrategicParams of uno_mk_env.agents.rule_based (the agents' layer is above the core, which
#: cannot import it; tests/test_compiled_agents.py checks these are its defaults).
STRATEGIC_DEFAULTS = {
    "points": 0.005, "follow_any": 0.5, "follow_each": 0.2, "draw": -1.5, "keep": -0.5,
    "threat": (0.0, 3.0, 1.5, 0.6), "skip": 0.6, "chain": 2.0, "reverse": 1.0,
    "hold_action": 0.3, "hold_w4": 9.0, "hold_wb": 4.0, "finisher": 1.0, "extra_turn": 0.8,
    "unblock": 0.5, "bluff": True, "bluff_margin": 0.0, "trust": 0.25, "turn_value": 1.0,
    "void": 2.0, "void_colour": 3.0, "w4_void": 0.7, "void_decay": 0.75, "colour_unseen": 0.5,
}
#: GreedyAgent's default challenge_hand.
GREEDY_CHALLENGE_HAND = 5


cdef uno_agent_params _c_params(object params, int challenge_hand) except *:
    cdef uno_agent_params p
    memset(&p, 0, sizeof(p))
    get = params.get if isinstance(params, dict) else (lambda name: getattr(params, name))
    p.points, p.follow_any, p.follow_each = get("points"), get("follow_any"), get("follow_each")
    p.draw, p.keep, p.skip, p.chain = get("draw"), get("keep"), get("skip"), get("chain")
    p.reverse, p.hold_action, p.hold_w4 = get("reverse"), get("hold_action"), get("hold_w4")
    p.hold_wb, p.finisher, p.extra_turn = get("hold_wb"), get("finisher"), get("extra_turn")
    p.unblock, p.bluff, p.bluff_margin = get("unblock"), get("bluff"), get("bluff_margin")
    p.trust, p.turn_value, p.void_ = get("trust"), get("turn_value"), get("void")
    p.void_colour, p.w4_void = get("void_colour"), get("w4_void")
    p.void_decay, p.colour_unseen = get("void_decay"), get("colour_unseen")
    threat = tuple(get("threat"))
    if len(threat) != 4:
        raise ValueError(f"strategic params: threat must hold 4 numbers, got {ref.quote(threat)}")
    for i in range(4):
        p.threat[i] = threat[i]
    p.greedy_challenge_hand = challenge_hand
    return p


def _pool(spec):
    """A pool spec ``("pool", kinds, cdf)`` as ``(kind codes, cdf)``, checked."""
    _, kinds, cdf = spec
    kinds, cdf = tuple(kinds), tuple(float(x) for x in cdf)
    if (not 1 <= len(kinds) <= UNO_POOL_MAX or len(cdf) != len(kinds)
            or any(k not in _AGENT_KINDS for k in kinds) or any(not 0.0 <= x <= 1.0 for x in cdf)
            or list(cdf) != sorted(cdf) or cdf[len(cdf) - 1] != 1.0):
        raise ValueError(f"opponent pool {ref.quote(spec)} is not allowed: 1-{UNO_POOL_MAX} "
                         f"kinds of {tuple(_AGENT_KINDS)} and their cumulative weights, "
                         "ending at 1.0")
    return [_AGENT_KINDS[k] for k in kinds], list(cdf)


def _opponent_specs(opponents, int n):
    """``opponents`` as ``(slot -> agent index or -1, kinds of the distinct agents)``; a
    kind is a code, or a pool's ``(codes, cdf)``."""
    allowed = (None, *_AGENT_KINDS)
    if opponents is None or isinstance(opponents, str):
        if opponents not in allowed:
            raise ValueError(f"opponent {ref.quote(opponents)} is not allowed; allowed: "
                             f"{allowed}")
        if opponents is None:
            return [-1] * (n - 1), []
        return [0] * (n - 1), [_AGENT_KINDS[opponents]]  # one agent for every seat
    specs = list(opponents)
    if len(specs) != n - 1:
        raise ValueError(f"opponents must name num_players - 1 = {n - 1} opponents, got "
                         f"{len(specs)}")
    slots, kinds = [], []
    for spec in specs:
        if isinstance(spec, tuple) and len(spec) == 3 and spec[0] == "pool":
            slots.append(len(kinds))
            kinds.append(_pool(spec))
            continue
        if spec not in allowed:
            raise ValueError(f"opponent {ref.quote(spec)} is not allowed; allowed: {allowed} "
                             "or a pool (\"pool\", kinds, cdf)")
        if spec is None:
            slots.append(-1)
        else:
            slots.append(len(kinds))
            kinds.append(_AGENT_KINDS[spec])
    return slots, kinds


cdef class BatchedTables:
    """``num_envs`` tables on the compiled core, stepped in one C loop without the GIL.

    Two modes, the two vector envs of :mod:`uno_mk_env.envs.vector`:

    * a learner seat at each table (``self_play=False``): the other seats are played inside
      :meth:`step` by ``opponents`` until the learner decides again (``UnoMarioKartVectorEnv``,
      seed for seed);
    * every seat is the learner (``self_play=True``): :meth:`step` applies the decider's
      action and returns every seat's reward (``SelfPlayVectorEnv``).

    Args:
        num_envs: tables.
        num_players: seats per table (2-10).
        opponents: ``None`` (uniform over the legal actions from the table's generator, as the
            vector env's ``None``), ``"random"``, ``"greedy"`` or ``"strategic"`` (one agent of
            that kind for every opponent seat, as the vector env given one agent), or a
            sequence of ``num_players - 1`` of those (one agent per seat, ``opponents[k]``
            ``k + 1`` seats clockwise from the learner), where a seat may also be an opponent
            pool without self-play, ``("pool", kinds, cdf)``: at every reset it draws from its
            own generator which of ``kinds`` plays (``cdf``: numpy's ``Generator.choice``
            cumulative weights) and that agent's seed (``training/opponents.py``).
        learner_seat: a seat, or ``None`` (drawn at every deal from the table's generator).
        reward: ``"win"`` or ``"points"``.
        illegal_action_penalty: the learner's reward for an illegal action (the episode ends).
        max_steps: truncation after that many decisions of all seats (``KEEP`` not counted,
            never inside a ``play_drawn`` decision), or ``None``.
        self_play: see above.
        same_step: auto-reset an ended table inside the step it ends (``SAME_STEP``); else
            the table shows its ended episode's last observation and an all-``False`` mask, and
            the next :meth:`step` deals it again, ignoring its action (``NEXT_STEP``; a caller
            that wants ``DISABLED`` deals it with :meth:`reset` ``indices`` instead).
        strategic_params: the ``strategic`` agents' weights (a ``StrategicParams`` or a
            mapping of its fields); default :data:`STRATEGIC_DEFAULTS`.
        **rule_options: the rule options (:class:`uno_mk_env.Rules`).

    The buffers (``obs``, ``masks``, ``rewards``, ``terminated``, ``truncated``, ``seats`` and
    the ended episodes' ``ended``, ``final_obs``, ``final_winner``, ``final_scores``,
    ``final_seat``, ``final_illegal``, ``episode_return``, ``episode_length``,
    ``episode_place``) are numpy arrays owned by this object and rewritten by every
    :meth:`reset` and :meth:`step`: copy what must outlive the next call.
    """

    cdef uno_batch b
    cdef uno_outputs out
    cdef readonly object rules
    cdef readonly int num_envs
    cdef readonly bint self_play
    cdef readonly object obs, masks, rewards, terminated, truncated, seats, ended, final_obs
    cdef readonly object final_winner, final_scores, final_seat, final_illegal
    cdef readonly object episode_return, episode_length, episode_place
    cdef object _actions
    cdef bint _started

    def __cinit__(self):
        memset(&self.b, 0, sizeof(uno_batch))

    def __dealloc__(self):
        if self.b.tables != NULL:
            for i in range(self.b.num):
                uno_game_free(&self.b.tables[i].g)
            free(self.b.tables)

    def __init__(self, num_envs, num_players=2, opponents=None, learner_seat=None,
                 reward="win", illegal_action_penalty=-1.0, max_steps=None, self_play=False,
                 strategic_params=None, same_step=True, **rule_options):
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or not 1 <= num_envs:
            raise ValueError(f"num_envs must be a positive int, got {ref.quote(num_envs)}")
        self.rules = ref.Rules(num_players=num_players, **rule_options)
        n = self.rules.num_players
        if reward not in ref.REWARD_MODES:
            raise ValueError(f"reward={ref.quote(reward)} is not allowed; allowed: "
                             f"{ref.REWARD_MODES}")
        if max_steps is not None and (not isinstance(max_steps, int)
                                      or isinstance(max_steps, bool) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive int or None, got "
                             f"{ref.quote(max_steps)}")
        if learner_seat is not None and (not isinstance(learner_seat, int)
                                         or isinstance(learner_seat, bool)
                                         or not 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None or a seat 0-{n - 1}, got "
                             f"{ref.quote(learner_seat)}")
        if (isinstance(illegal_action_penalty, bool)
                or not isinstance(illegal_action_penalty, (int, float, np.integer, np.floating))
                or not math.isfinite(float(illegal_action_penalty))):
            raise ValueError("illegal_action_penalty must be a finite number, got "
                             f"{ref.quote(illegal_action_penalty)}")
        slots, kinds = _opponent_specs(opponents, n)
        if self_play and (opponents is not None or learner_seat is not None):
            raise ValueError("self_play tables have no opponents and no learner seat")
        self.num_envs = num_envs
        self.self_play = self_play
        self.b.rules = _c_rules(self.rules)
        self.b.params = _c_params(STRATEGIC_DEFAULTS if strategic_params is None
                                  else strategic_params, GREEDY_CHALLENGE_HAND)
        self.b.num = num_envs
        self.b.learner_seat = -1 if learner_seat is None else learner_seat
        self.b.self_play = self_play
        self.b.same_step = bool(same_step) or self_play
        self.b.points_mode = reward == "points"
        self.b.penalty = float(illegal_action_penalty)
        self.b.max_steps = -1 if max_steps is None else min(max_steps, _CAP)
        self.b.tables = <uno_table *>calloc(num_envs, sizeof(uno_table))
        if self.b.tables == NULL:
            raise MemoryError(f"no memory for {num_envs} tables")
        cdef uno_table *t
        for i in range(num_envs):
            t = &self.b.tables[i]
            uno_game_init(&t.g, &self.b.rules, 0)
            t.nagents = len(kinds)
            for a, kind in enumerate(kinds):
                if isinstance(kind, tuple):  # a pool: its agent is drawn at every reset
                    codes, cdf = kind
                    t.agents[a].npool = len(codes)
                    for j in range(len(codes)):
                        t.agents[a].pool_kinds[j] = codes[j]
                        t.agents[a].pool_cdf[j] = cdf[j]
                    t.agents[a].kind = codes[0]
                else:
                    t.agents[a].kind = kind
            for slot in range(n - 1):
                t.agent_of[slot] = slots[slot] if slot < len(slots) else -1
        self._allocate(n)
        self._started = False

    def _allocate(self, int n):
        num = self.num_envs
        self.obs = np.zeros((num, UNO_OBS_SIZE), np.float32)
        self.masks = np.zeros((num, UNO_NUM_ACTIONS), bool)
        shape = [num, n] if self.self_play else [num]
        self.rewards = np.zeros(shape, np.float64)
        self.terminated = np.zeros(num, bool)
        self.truncated = np.zeros(num, bool)
        self.seats = np.zeros(num, np.int64)
        self.ended = np.zeros(num, bool)
        self.final_obs = np.zeros((num, UNO_OBS_SIZE), np.float32)
        self.final_winner = np.full(num, -1, np.int64)
        self.final_scores = np.zeros((num, n), np.int64)
        self.final_seat = np.zeros(num, np.int64)
        self.final_illegal = np.zeros(num, bool)
        self.episode_return = np.zeros(num, np.float64)
        self.episode_length = np.zeros(num, np.int64)
        self.episode_place = np.zeros(num, np.int64)
        self._actions = np.zeros(num, np.int64)
        cdef float[:, ::1] obs = self.obs
        cdef uint8_t[:, ::1] masks = self.masks.view(np.uint8)
        cdef double[::1] rewards = self.rewards.reshape(-1)
        cdef uint8_t[::1] terminated = self.terminated.view(np.uint8)
        cdef uint8_t[::1] truncated = self.truncated.view(np.uint8)
        cdef int64_t[::1] seats = self.seats
        cdef uint8_t[::1] ended = self.ended.view(np.uint8)
        cdef float[:, ::1] final_obs = self.final_obs
        cdef int64_t[::1] final_winner = self.final_winner
        cdef int64_t[::1] final_scores = self.final_scores.reshape(-1)
        cdef int64_t[::1] final_seat = self.final_seat
        cdef uint8_t[::1] final_illegal = self.final_illegal.view(np.uint8)
        cdef double[::1] episode_return = self.episode_return
        cdef int64_t[::1] episode_length = self.episode_length
        cdef int64_t[::1] episode_place = self.episode_place
        self.out.obs = &obs[0, 0]
        self.out.masks = &masks[0, 0]
        self.out.rewards = &rewards[0]
        self.out.terminated = &terminated[0]
        self.out.truncated = &truncated[0]
        self.out.seats = &seats[0]
        self.out.ended = &ended[0]
        self.out.final_obs = &final_obs[0, 0]
        self.out.final_winner = &final_winner[0]
        self.out.final_scores = &final_scores[0]
        self.out.final_seat = &final_seat[0]
        self.out.final_illegal = &final_illegal[0]
        self.out.episode_return = &episode_return[0]
        self.out.episode_length = &episode_length[0]
        self.out.episode_place = &episode_place[0]

    def reset(self, seed=None, indices=None):
        """Deals a new game at every table (or at the tables ``indices``, a sequence of table
        numbers, once every table has been dealt): ``seed`` reseeds table ``i`` with
        ``seed + i`` (or ``seed[i]`` for a list; ``None`` entries keep the table's generators),
        as the vector envs' ``reset``; writes those tables' ``obs``, ``masks`` and ``seats``."""
        seeds = _table_seeds(seed, self.num_envs)
        chosen = range(self.num_envs) if indices is None else [int(i) for i in indices]
        if not self._started and len(chosen) != self.num_envs:
            raise RuntimeError("the first reset() deals every table")
        for i in chosen:
            if not 0 <= i < self.num_envs:
                raise IndexError(f"table {i} out of range 0-{self.num_envs - 1}")
        for i in chosen:
            s = seeds[i]
            if s is None and not self._started:
                s = np.random.SeedSequence().entropy  # a table never seeded: fresh entropy
            if s is None:
                uno_table_seed(&self.b, i, NULL, 0)
            else:
                self._seed_table(i, s)
            uno_table_deal(&self.b, i)
            uno_table_observe(&self.b, i, &self.out)
        self._started = True

    cdef _seed_table(self, int i, object seed):
        words = _words(seed)
        cdef uint32_t buf[16]
        if len(words) > 16:
            raise ValueError(f"seed {ref.quote(seed)} is larger than 512 bits")
        for j, w in enumerate(words):
            buf[j] = w
        uno_table_seed(&self.b, i, buf, len(words))

    def step(self, actions):
        """Steps every table with ``actions`` (``(num_envs,)`` ints), the GIL released.

        Raises:
            TypeError: ``actions`` is not an integer array of shape ``(num_envs,)``.
            ValueError: an id outside 0-72. Nothing is changed in either case.
            IllegalActionError: (self-play only) an illegal action, naming the table; nothing
                is changed. With a learner seat an illegal action ends its episode with the
                penalty instead.
        """
        if not self._started:
            raise RuntimeError("reset() needs to be called before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise TypeError(f"actions must be an integer array of shape ({self.num_envs},), "
                            f"got {a.dtype} of shape {a.shape}")
        cdef int64_t[::1] acts = self._actions
        cdef int64_t[::1] given
        cdef int bad, i
        if a.dtype == np.int64 and a.flags.c_contiguous:  # the usual case: checked in C
            given = a
            for i in range(self.num_envs):
                if not 0 <= given[i] < UNO_NUM_ACTIONS:
                    break
                acts[i] = given[i]
            else:
                i = -1
            if i >= 0:
                self._out_of_range(a)
        else:
            if a.min() < 0 or a.max() >= UNO_NUM_ACTIONS:
                self._out_of_range(a)
            self._actions[:] = a
        if self.self_play:
            bad = uno_batch_check(&self.b, &acts[0])
            if bad >= 0:
                legal = self._legal(bad)
                raise ref.IllegalActionError(
                    f"table {bad}: illegal action {acts[bad]} "
                    f"({ref.ACTION_NAMES[acts[bad]]}); legal: {list(legal)}")
        with nogil:
            uno_batch_step(&self.b, &acts[0], &self.out)

    def _out_of_range(self, a):
        raise ValueError(f"actions must be ids 0-{UNO_NUM_ACTIONS - 1}, got values "
                         f"{a.min()}..{a.max()}")

    cdef tuple _legal(self, int i):
        cdef int count
        cdef const uint8_t *ids = uno_legal(&self.b.tables[i].g, &count)
        return tuple([ids[j] for j in range(count)])

    def pending(self):
        """``(num_envs,)`` bool: the tables whose episode ended and that are not dealt again
        yet (``same_step=False``)."""
        return np.array([self.b.tables[i].pending for i in range(self.num_envs)], bool)

    def game(self, int i):
        """A :class:`CompiledGame` copy of table ``i``'s current game (hidden state included)."""
        if not 0 <= i < self.num_envs:
            raise IndexError(f"table {i} out of range 0-{self.num_envs - 1}")
        cdef CompiledGame c = CompiledGame.__new__(CompiledGame)
        c.rules = self.rules
        _copy(&c.g, &self.b.tables[i].g)
        return c

    def table_rng_state(self, int i):
        """The state of table ``i``'s generator (``np_random``), as numpy shows a PCG64's."""
        return _pcg_state(&self.b.tables[i].rng)


def _table_seeds(seed, int n):
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {ref.quote(seed)}")
        return [int(seed) + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"seed must be an int, None or {n} seeds (one per table), got "
                         f"{len(seeds)}")
    for s in seeds:
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer))
                              or s < 0):
            raise ValueError(f"each seed must be a non-negative int or None, got "
                             f"{ref.quote(s)}")
    return [None if s is None else int(s) for s in seeds]
