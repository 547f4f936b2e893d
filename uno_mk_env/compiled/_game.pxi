# CompiledGame: one game in flat C state, bit-identical with the Python Game.
# Included by _core.pyx (one extension module, split by idea: Cython include); the
# declarations and helpers it uses are at the top of _core.pyx.

# ------------------------------------------------------------------------------ one game
cdef class CompiledGame:
    """One game on the compiled core: :class:`uno_mk_env.Game`'s interface and trajectories.

    Args:
        rules: the rule options (default ``Rules()``).
        seed: an int (the game's own PCG64, seeded as ``numpy.random.default_rng(seed)``), a
            ``numpy.random.Generator`` (borrowed, as ``Game`` borrows it: its state advances),
            or ``None`` (fresh entropy).
        event_log: ``"recent"`` or ``"all"`` as ``Game``, or ``"off"`` (no log: ``events`` is
            empty; the fastest).
    """

    cdef uno_game g
    cdef readonly object rules
    cdef object _ext  # the numpy Generator whose bit generator g.ext_rng borrows

    def __cinit__(self):
        memset(&self.g, 0, sizeof(uno_game))

    def __dealloc__(self):
        uno_game_free(&self.g)

    def __init__(self, rules=None, seed=None, event_log="recent"):
        self._setup(ref.Rules() if rules is None else rules, event_log)
        self._seed(seed)
        _check(uno_new_game(&self.g))

    cdef _setup(self, object rules, object event_log):
        if not isinstance(rules, ref.Rules):
            raise TypeError(f"rules must be a uno_mk_env.Rules, got {type(rules).__name__}")
        if event_log not in EVENT_LOGS:
            raise ValueError(f"event_log={ref.quote(event_log)} is not allowed; allowed: "
                             f"{EVENT_LOGS}")
        self.rules = rules
        cdef uno_rules r = _c_rules(rules)
        uno_game_free(&self.g)
        uno_game_init(&self.g, &r, EVENT_LOGS.index(event_log))
        self._ext = None

    cdef _setup_as(self, CompiledGame other, object event_log):
        """:meth:`_setup` with ``other``'s rules (checked and converted already)."""
        if event_log not in EVENT_LOGS:
            raise ValueError(f"event_log={ref.quote(event_log)} is not allowed; allowed: "
                             f"{EVENT_LOGS}")
        self.rules = other.rules
        uno_game_free(&self.g)
        uno_game_init(&self.g, &other.g.r, EVENT_LOGS.index(event_log))
        self._ext = None

    cdef _seed(self, object seed):
        if isinstance(seed, np.random.Generator):
            self._borrow(seed)
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
            _seed_pcg(&self.g.pcg, int(seed))
        elif seed is None:
            _seed_pcg(&self.g.pcg, np.random.SeedSequence().entropy)
        else:  # what numpy accepts (or refuses) beyond ints, as Game
            self._borrow(np.random.default_rng(seed))

    cdef _borrow(self, object generator):
        self._ext = generator
        self.g.ext_rng = _bitgen_of(generator)

    cdef _set_rng_state(self, object state):
        """A copy of a bit generator's ``state``: PCG64 in C, any other in a numpy object."""
        if state["bit_generator"] == "PCG64":
            self._ext = None
            self.g.ext_rng = NULL
            _set_pcg_state(&self.g.pcg, state)
        else:
            generator = np.random.Generator(getattr(np.random, state["bit_generator"])())
            generator.bit_generator.state = state
            self._borrow(generator)

    cdef object _rng_state(self):
        if self._ext is not None:
            return self._ext.bit_generator.state
        return _pcg_state(&self.g.pcg)

    # ---------------------------------------------------------------- state
    @property
    def num_players(self):
        return self.g.n

    @property
    def current_player(self):
        """The decider, ``-1`` when the game is over."""
        return self.g.current_player

    @property
    def phase(self):
        return _PHASES[self.g.phase]

    @property
    def phase_name(self):
        return ref.PHASE_NAMES[self.g.phase]

    @property
    def direction(self):
        return self.g.direction

    @property
    def dealer(self):
        return self.g.dealer

    @property
    def round(self):
        return self.g.round

    @property
    def scores(self):
        return [self.g.scores[s] for s in range(self.g.n)]

    @property
    def sizes(self):
        return [self.g.sizes[s] for s in range(self.g.n)]

    @property
    def top_card(self):
        return self.g.discard[self.g.ndiscard - 1]

    @property
    def active_colour(self):
        return self.g.colour

    @property
    def winner(self):
        return None if self.g.winner < 0 else self.g.winner

    @property
    def round_winner(self):
        return None if self.g.round_winner < 0 else self.g.round_winner

    @property
    def round_hand_points(self):
        if not self.g.has_round_hand_points:
            return None
        return tuple(self.g.round_hand_points[s] for s in range(self.g.n))

    @property
    def round_over(self):
        return bool(self.g.round_over)

    @property
    def game_over(self):
        return bool(self.g.game_over)

    @property
    def num_steps(self):
        return self.g.num_steps

    @property
    def num_keeps(self):
        return self.g.num_keeps

    @property
    def public_steps(self):
        """Decisions every seat can count (``num_steps`` without ``KEEP``s), as ``Game``."""
        return self.g.num_steps - self.g.num_keeps

    @property
    def event_log(self):
        return EVENT_LOGS[self.g.event_log]

    @property
    def events_start(self):
        return self.g.events_start

    @property
    def event_count(self):
        return self.g.events_start + self.g.ev.count

    def rollout_action(self, SearchRandom rnd, double epsilon):
        """``agents.ismcts_playout.rollout_action(self, rnd, epsilon)`` on the core (``rnd``
        drawn as the ``random.Random`` it stands for)."""
        return uno_rollout_action(&self.g, &rnd.m, epsilon)

    def simulate(self, SearchRandom rnd, int depth_cap, double epsilon, weights,
                 double exponent):
        """The search's simulation (``ISMCTSAgent``'s ``_simulate`` with the fast rollout) on
        the core: ``rollout_action`` until the round ends or ``depth_cap`` decisions (0: no
        cap); returns every seat's reward (``win_reward``, or at the cap ``logit_rewards`` with
        ``weights``, or the hand-size model ``size ** -exponent`` when ``weights`` is None)."""
        cdef uno_leaf_model leaf
        leaf.logit = weights is not None
        leaf.exponent = exponent
        if weights is not None:
            if len(weights) != 7:
                raise ValueError("weights must hold 7 numbers")
            for i in range(7):
                leaf.weights[i] = weights[i]
        cdef double rewards[10]
        uno_simulate(&self.g, &rnd.m, depth_cap, epsilon, &leaf, rewards)
        return [rewards[s] for s in range(self.g.n)]

    @property
    def hands(self):
        """Every seat's hand as counts per kind (``bytes``; ``Game.hands``' layout), for the
        search's playout policy, which reads its own determinizations."""
        return [(<char *>self.g.hands[s])[:UNO_NUM_KINDS] for s in range(self.g.n)]

    @property
    def colour(self):
        return self.g.colour

    def hand(self, int seat):
        """A copy of ``seat``'s hand as counts per kind."""
        self._check_seat(seat)
        return [self.g.hands[seat][k] for k in range(UNO_NUM_KINDS)]

    def hand_points(self, int seat):
        self._check_seat(seat)
        return uno_hand_points(&self.g, seat)

    def next_seat(self, int seat, int steps=1):
        return (seat + self.g.direction * steps) % self.g.n

    cdef _check_seat(self, int seat):
        if not 0 <= seat < self.g.n:
            raise ValueError(f"seat {seat} out of range 0-{self.g.n - 1}")

    # ---------------------------------------------------------------- play
    def legal_action_ids(self):
        """Legal action ids, ascending (empty when the game is over)."""
        cdef int count
        cdef const uint8_t *ids = uno_legal(&self.g, &count)
        return tuple([ids[i] for i in range(count)])

    def legal_actions(self):
        """Bool mask of shape ``(73,)`` over action ids."""
        mask = np.zeros(UNO_NUM_ACTIONS, dtype=np.uint8)
        cdef uint8_t[::1] view = mask
        uno_mask(&self.g, &view[0])
        return mask.view(bool)

    def step(self, action):
        """Applies the decider's ``action``.

        Raises:
            IllegalActionError: ``action`` is not legal now (nothing is changed), with the
                reference's message.
        """
        if type(action) is not int:
            action = _as_action_id(action)
        cdef int rc = -1
        if 0 <= action < UNO_NUM_ACTIONS:
            rc = uno_step(&self.g, action)
        if rc == -1:
            self._raise_illegal(action)
        _check(rc)

    cdef _raise_illegal(self, object a):
        in_range = 0 <= a < ref.NUM_ACTIONS
        name = ref.ACTION_NAMES[a] if in_range else f"out of 0-{ref.NUM_ACTIONS - 1}"
        if self.g.game_over:
            raise ref.IllegalActionError(
                f"action {a} ({name}): the game is over, no action is legal")
        legal = self.legal_action_ids()
        raise ref.IllegalActionError(
            f"illegal action {a} ({name}) for player {self.g.current_player} in phase "
            f"'{self.phase_name}'; legal: {list(legal)} "
            f"({', '.join(ref.ACTION_NAMES[x] for x in legal)})")

    def round_rewards(self, reward):
        """``uno_mk_env.engine.rewards.round_rewards(game, reward)``: every seat's reward of the step
        that just ended a round (``reward``: ``"win"`` or ``"points"``)."""
        if reward not in ref.REWARD_MODES:
            raise ValueError(f"reward={ref.quote(reward)} is not allowed; allowed: "
                             f"{ref.REWARD_MODES}")
        cdef double out[10]
        uno_round_rewards(&self.g, reward == "points", out)
        return [out[s] for s in range(self.g.n)]

    # ---------------------------------------------------------------- what a seat sees
    def observation(self, int seat, float[::1] out=None):
        """``uno_mk_env.engine.observation.encode(game.view(seat))``, written in C (into ``out``, a
        float32 array of 437, when given; else a new array)."""
        self._check_seat(seat)
        result = None
        if out is None:
            result = np.empty(UNO_OBS_SIZE, np.float32)
            out = result
        if out.shape[0] != UNO_OBS_SIZE:
            raise ValueError(f"out must hold {UNO_OBS_SIZE} float32, got {out.shape[0]}")
        uno_encode(&self.g, seat, &out[0])
        return result if result is not None else np.asarray(out)

    def view(self, int seat):
        """What ``seat`` may know, as the reference's :class:`~uno_mk_env.PlayerView`."""
        self._check_seat(seat)
        cdef uno_game *g = &self.g
        cdef int n = g.n
        decider = g.current_player == seat
        shown = uno_revealed_to(g, seat)
        revealed = None
        revealed_by = -1
        if shown >= 0:
            revealed = bytes([g.reveal_hand[shown][k] for k in range(UNO_NUM_KINDS)])
            revealed_by = g.reveal_player[shown]
        return ref.PlayerView(
            seat, n, self.rules, _PHASES[g.phase], g.current_player,
            bytes([g.hands[seat][k] for k in range(UNO_NUM_KINDS)]),
            g.discard[g.ndiscard - 1], g.colour, g.drawn if decider else ref.NO_CARD,
            g.direction, tuple([g.sizes[s] for s in range(n)]),
            tuple([bool(g.uno_called[s]) for s in range(n)]),
            tuple([g.scores[s] for s in range(n)]), g.ndraw, g.ndiscard,
            bytes([g.discard_counts[k] for k in range(UNO_NUM_KINDS)]), g.w4_player,
            g.w4_prev_colour, revealed, revealed_by, g.last_item, uno_uno_catchable(g),
            g.uno_miss, g.dealer, g.round, g.colour_context, g.idle_turns, g.turn_player,
            g.previous_turn_player,
            bytes([g.void_evidence[s][c] for s in range(n) for c in range(4)]),
            g.w4_hand_size, g.w4_illegal if seat == g.w4_player else -1,
            self.legal_action_ids() if decider else (),
        )

    # ---------------------------------------------------------------- events
    cdef object _event(self, int64_t i):
        cdef int64_t *rec = self.g.ev.data + self.g.ev.offsets[i]
        cdef int64_t kind = rec[0], length = rec[1]
        cdef int64_t *f = rec + 2
        name = EVENT_TYPES[kind]
        if name == "draw":
            return (name, f[0], tuple([f[j] for j in range(2, length)]), ref.DRAW_REASONS[f[1]])
        if name == "reveal":
            return (name, f[0], f[1], tuple([f[j] for j in range(2, length)]))
        if name == "challenge":
            return (name, f[0], f[1], bool(f[2]))
        if name == "round_end":
            return (name, None if f[0] < 0 else f[0], f[1],
                    tuple([f[j] for j in range(3, length)]))
        return (name, *[f[j] for j in range(length)])

    @property
    def events(self):
        """The omniscient event log, as the reference's tuples."""
        return [self._event(i) for i in range(self.g.ev.count)]

    def events_since(self, int64_t number):
        """The events numbered ``number`` on (``event_count`` counts every event so far)."""
        start = max(number - self.g.events_start, 0)
        return [self._event(i) for i in range(start, self.g.ev.count)]

    def events_for(self, seat):
        """The event log as ``seat`` may see it (``None``: the full log)."""
        if seat is None:
            return self.events
        return [seen for e in self.events if (seen := ref.event_for(e, seat)) is not None]

    cdef _append_event(self, tuple event):
        """Appends a reference event tuple to the C log (state dict interchange)."""
        name = event[0]
        fields, cards = [], []
        if name == "draw":
            fields, cards = [event[1], _DRAW_REASON_CODE[event[3]]], list(event[2])
        elif name == "reveal":
            fields, cards = [event[1], event[2]], list(event[3])
        elif name == "round_end":
            fields = [-1 if event[1] is None else event[1], event[2], len(event[3])]
            cards = list(event[3])
        else:
            fields = [int(x) for x in event[1:]]
        cdef int64_t buf[128]
        values = fields + cards
        if len(values) > 128:
            raise ref.StateError(f"event {ref.quote(event)} is longer than any game's")
        for j, v in enumerate(values):
            buf[j] = v
        _check(uno_event_append(&self.g, _EVENT_CODE[name], len(fields), buf, len(cards),
                                buf + len(fields)))

    # ---------------------------------------------------------------- interchange
    def to_game(self):
        """The same position as a reference :class:`~uno_mk_env.Game` (its generator a copy)."""
        cdef uno_game *g = &self.g
        cdef int n = g.n
        game = ref.Game.__new__(ref.Game)
        game._setup(self.rules, None, "all" if g.event_log == 2 else "recent")
        game._rng_source = self._rng_state()  # a state dict: Game builds its generator from it
        game.hands = [bytearray([g.hands[s][k] for k in range(UNO_NUM_KINDS)]) for s in range(n)]
        game.held = [g.held[s] for s in range(n)]
        game.sizes = [g.sizes[s] for s in range(n)]
        game.draw_pile = [g.draw_pile[i] for i in range(g.ndraw)]
        game.discard = [g.discard[i] for i in range(g.ndiscard)]
        game.discard_counts = bytearray([g.discard_counts[k] for k in range(UNO_NUM_KINDS)])
        game.colour = g.colour
        game.current_player = g.current_player
        game.direction = g.direction
        game.phase = _PHASES[g.phase]
        game.dealer = g.dealer
        game.scores = self.scores
        game.round = g.round
        game.drawn = g.drawn
        game.uno_called = [bool(g.uno_called[s]) for s in range(n)]
        game.uno_miss = g.uno_miss
        game.w4_player = g.w4_player
        game.w4_prev_colour = g.w4_prev_colour
        game.w4_illegal = bool(g.w4_illegal)
        game.w4_hand_size = g.w4_hand_size
        game.colour_context = g.colour_context
        game.reveals = tuple([(g.reveal_player[i], g.reveal_to[i], _kinds(g.reveal_hand[i]))
                              for i in range(g.nreveals)])
        game.last_item = g.last_item
        game.idle_turns = g.idle_turns
        game.turn_player = g.turn_player
        game.previous_turn_player = g.previous_turn_player
        game.void_evidence = [bytearray([g.void_evidence[s][c] for c in range(4)])
                              for s in range(n)]
        game.round_over = bool(g.round_over)
        game.game_over = bool(g.game_over)
        game.winner = self.winner
        game.round_winner = self.round_winner
        game.round_hand_points = self.round_hand_points
        game.num_steps = g.num_steps
        game.num_keeps = g.num_keeps
        game.events = self.events
        game.events_start = g.events_start
        game._round_start = g.round_start
        game._legal = () if g.game_over else None
        return game

    @classmethod
    def from_game(cls, game, event_log=None):
        """The position of a reference ``game`` (its generator's state copied, never shared)."""
        if not isinstance(game, ref.Game):
            raise TypeError(f"from_game needs a uno_mk_env.Game, got {type(game).__name__}")
        cdef CompiledGame c = cls.__new__(cls)
        c._setup(game.rules, game.event_log if event_log is None else event_log)
        c._set_rng_state(game.rng.bit_generator.state)
        cdef uno_game *g = &c.g
        n = g.n
        for s in range(n):
            for k in range(UNO_NUM_KINDS):
                g.hands[s][k] = game.hands[s][k]
            g.held[s] = game.held[s]
            g.sizes[s] = game.sizes[s]
            g.scores[s] = game.scores[s]
            g.uno_called[s] = game.uno_called[s]
            for col in range(4):
                g.void_evidence[s][col] = game.void_evidence[s][col]
        g.ndraw = len(game.draw_pile)
        for i, k in enumerate(game.draw_pile):
            g.draw_pile[i] = k
        g.ndiscard = len(game.discard)
        for i, k in enumerate(game.discard):
            g.discard[i] = k
        for k in range(UNO_NUM_KINDS):
            g.discard_counts[k] = game.discard_counts[k]
        g.colour = game.colour
        g.current_player = game.current_player
        g.direction = game.direction
        g.phase = int(game.phase)
        g.dealer = game.dealer
        g.round = game.round
        g.drawn = game.drawn
        g.uno_miss = game.uno_miss
        g.w4_player = game.w4_player
        g.w4_prev_colour = game.w4_prev_colour
        g.w4_illegal = game.w4_illegal
        g.w4_hand_size = game.w4_hand_size
        g.colour_context = game.colour_context
        g.nreveals = len(game.reveals)
        for i, (w4p, to, shown) in enumerate(game.reveals):
            g.reveal_player[i] = w4p
            g.reveal_to[i] = to
            memset(g.reveal_hand[i], 0, UNO_NUM_KINDS)
            for k in shown:
                g.reveal_hand[i][k] += 1
        g.last_item = game.last_item
        g.idle_turns = game.idle_turns
        g.turn_player = game.turn_player
        g.previous_turn_player = game.previous_turn_player
        g.round_over = game.round_over
        g.game_over = game.game_over
        g.winner = -1 if game.winner is None else game.winner
        g.round_winner = -1 if game.round_winner is None else game.round_winner
        g.has_round_hand_points = game.round_hand_points is not None
        if game.round_hand_points is not None:
            for s in range(n):
                g.round_hand_points[s] = game.round_hand_points[s]
        g.num_steps = game.num_steps
        g.num_keeps = game.num_keeps
        g.legal_valid = 0
        if g.event_log > 0:
            for event in game.events:
                c._append_event(event)
            g.events_start = game.events_start
            g.round_start = game._round_start
        return c

    def to_dict(self, include_events=False):
        """The reference's state dict (``Game.to_dict``) of this position."""
        return self.to_game().to_dict(include_events)

    @classmethod
    def from_dict(cls, d, seed=None, event_log=None):
        """A game from a state dict, validated by the reference (``Game.from_dict``)."""
        return cls.from_game(ref.Game.from_dict(d, seed), event_log)

    def clone(self):
        """An independent deep copy (generator included)."""
        cdef CompiledGame c = CompiledGame.__new__(CompiledGame)
        c.rules = self.rules
        _copy(&c.g, &self.g)
        c.g.ext_rng = NULL
        if self._ext is not None:
            c._set_rng_state(self._ext.bit_generator.state)
        return c

    def determinize(self, int seat, rng, event_log="off", voids=None):
        """``Game.determinize(seat, rng)`` on the core: the same game drawn with the same draws
        from ``rng`` (a numpy Generator), from what ``seat`` sees only. Its event log is off
        unless asked (``"recent"``: the reference's empty log, for comparisons).

        ``voids`` (``num_players`` rows of 4 beliefs that a seat holds no card of a colour; a
        float64 array of shape ``(num_players, 4)`` is read as it is): then the IS-MCTS
        agent's condition (``agents/ismcts.py``, ``ISMCTSAgent._deal``), as
        ``Game.from_view(view, rng, condition)`` applies it."""
        self._check_seat(seat)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        cdef double[:, ::1] beliefs
        cdef const double *given = NULL
        if voids is not None:
            array = np.ascontiguousarray(voids, dtype=np.float64)  # a no-op for such an array
            if array.shape != (self.g.n, 4):
                raise ValueError(f"voids must hold {self.g.n} rows of 4 beliefs, got shape "
                                 f"{array.shape}")
            beliefs = array
            given = &beliefs[0, 0]
        cdef CompiledGame c = CompiledGame.__new__(CompiledGame)
        c._setup_as(self, event_log)
        cdef bitgen_t *bitgen = _bitgen_of(rng)
        cdef int rc
        with rng.bit_generator.lock:
            rc = uno_determinize_voids(&self.g, seat, bitgen, given, &c.g)
        if rc < 0:
            raise ref.StateError("determinize: no unseen card could be the playable card the "
                                 "deciding seat drew")
        return c

    def __eq__(self, other):
        if isinstance(other, (CompiledGame, ref.Game)):
            return self.to_dict() == other.to_dict()
        return NotImplemented

    __hash__ = None

    def __reduce__(self):
        return (CompiledGame.from_game, (self.to_game(), EVENT_LOGS[self.g.event_log]))

    def __repr__(self):
        return (f"CompiledGame(players={self.g.n}, round={self.g.round}, "
                f"phase={self.phase_name!r}, current_player={self.g.current_player})")


