"""What happens between PPO updates: periodic evaluation (TensorBoard, ``eval.csv``,
``curve.png``), checkpoints, the ``best.zip`` selection and self-play snapshots.

Everything runs at the start of a rollout, when the weights are exactly those trained on every
step counted so far (stable-baselines3 calls step callbacks during a rollout, *before* the
update on it), so a row at ``timesteps=X``, ``checkpoints/ppo_X_steps.zip`` and
``snapshots/snapshot_X.zip`` all hold the policy after X training steps. :meth:`EvalAndSelfPlay.
finish` does the same once more after the last update.
"""

from __future__ import annotations

import copy
import shutil
import time
from pathlib import Path
from typing import Any

import torch
from stable_baselines3.common.callbacks import BaseCallback

from uno_mk_env.engine.seeding import Stream, derive_seed

from .args import ints, specs
from .curves import eval_line, evaluate, plot_curve, selection_score, write_eval_csv
from .divergence import NonFinite, check_finite
from .policies import SB3Clonable
from .progress import Budget

#: Rows of the latest rollout the divergence check runs the policy on.
CHECK_ROWS = 512


def eval_tables(args: Any) -> list[int]:
    """Table sizes of the periodic evaluation (``--eval-players``, else ``--num-players``)."""
    return ints(args.eval_players) or [args.num_players]


class EvalAndSelfPlay(BaseCallback):
    """Periodic evaluation, checkpoints, ``best.zip`` and self-play snapshots on the learner's
    step count (see the module docstring).

    ``best.zip`` is the checkpoint with the best :func:`~uno_mk_env.training.curves.
    selection_score` against the last ``--eval-opponents`` agent among the evaluations made
    *after* training started (the evaluation at the start step is the curve's origin, never a
    candidate); a run that made none has no ``best.zip`` (``best`` is ``None``).

    Args:
        args: the run's :class:`~uno_mk_env.training.train_ppo.Args`.
        run_dir: the run directory.
        eval_rows: the curve so far (rows of a resumed run's past included); appended to.
        vec_env: the vectorised training env (for ``add_snapshot``).
        budget: the ``--max-minutes`` budget of the whole command: training stops when the
            next update, the final evaluation (at the speed measured so far) and the outputs
            would not fit in the time left.
        start_time: ``time.time()`` at the start of training (``wall_s`` of the rows).
    """

    def __init__(self, args: Any, run_dir: Path, eval_rows: list[dict[str, Any]], vec_env: Any,
                 start_time: float, budget: Budget | None = None) -> None:
        super().__init__()
        self.args = args
        self.run_dir = run_dir
        self.eval_rows = eval_rows
        self.vec_env = vec_env
        self.start_time = start_time
        self.budget = budget if budget is not None else Budget(args.max_minutes)
        self.game_seconds = 0.0  # measured seconds per evaluation game
        self.update_seconds = 0.0  # the last update's (from the end of a rollout to the next)
        self._rollout_end = 0.0
        self.start_steps = 0
        self.next_eval = 0
        self.next_snapshot = 0
        self.next_checkpoint = 0
        self.snapshot_score = -1.0
        self.latest_score = -1.0
        self.best: dict[str, Any] | None = None
        self.n_snapshots = 0
        self.timed_out = False
        #: ``{"reason", "at_timesteps", "kept_timesteps"}`` once the weights became non-finite
        self.diverged: dict[str, Any] | None = None
        self.good: dict[str, Any] | None = None
        self.good_steps = 0

    # ------------------------------------------------------------------ SB3 hooks
    def _on_training_start(self) -> None:
        a = self.args
        now = self.start_steps = self.model.num_timesteps
        self.next_eval = now + a.eval_every if a.eval_every > 0 else 0
        self.next_snapshot = now + a.snapshot_every if a.snapshot_every > 0 else 0
        self.next_checkpoint = now + a.checkpoint_every if a.checkpoint_every > 0 else 0
        if not any(r["timesteps"] == now for r in self.eval_rows):
            self.evaluate(a.eval_games)

    def _on_rollout_start(self) -> None:
        if self._rollout_end:
            self.update_seconds = time.monotonic() - self._rollout_end
        if self.keep_finite():
            self.periodic()

    def _on_rollout_end(self) -> None:
        self._rollout_end = time.monotonic()

    def _on_step(self) -> bool:
        if self.diverged is not None:  # stop the rollout: learn() ends there
            return False
        if self.budget.left() < self.update_seconds + self.final_reserve():
            self.timed_out = True
            return False
        return True

    def final_reserve(self) -> float:
        """Seconds kept at the end of the budget: the final evaluation at the speed measured
        (at most :data:`Budget.EVAL_SHARE` of the budget) and the outputs."""
        evaluation = self.eval_seconds(self.args.final_eval_games)
        return self.budget.write_seconds() + min(evaluation,
                                                 Budget.EVAL_SHARE * self.budget.seconds)

    def eval_seconds(self, games: int) -> float:
        """The measured time of an evaluation of ``games`` per opponent and table size."""
        return self.game_seconds * games * len(specs(self.args.eval_opponents)) * len(
            eval_tables(self.args))

    def final_games(self) -> int:
        """Games per opponent and table size of the final evaluation: ``--final-eval-games``,
        or what fits in the time left (at least one per seat)."""
        fit = self.budget.left() - self.budget.write_seconds()
        if self.game_seconds <= 0 or self.eval_seconds(self.args.final_eval_games) <= fit:
            return int(self.args.final_eval_games)
        per_game = self.eval_seconds(1)
        return max(self.args.num_players, min(self.args.final_eval_games, int(fit / per_game)))

    # ------------------------------------------------------------------ work
    def keep_finite(self) -> bool:
        """After an update: keeps the policy's weights as the last finite ones and returns
        True, or, when they (or its outputs on the latest rollout) are not finite, puts the
        last finite ones back, records :attr:`diverged` and returns False."""
        if self.diverged is not None:
            return False
        model: Any = self.model  # sb3-contrib's MaskablePPO
        policy, now, buffer = model.policy, model.num_timesteps, model.rollout_buffer
        obs = torch.as_tensor(buffer.observations.reshape(-1, buffer.obs_shape[0])[:CHECK_ROWS])
        masks = torch.as_tensor(buffer.action_masks.reshape(-1, buffer.mask_dims)[:CHECK_ROWS]
                                > 0)
        try:
            with torch.no_grad():
                log_p, values = SB3Clonable(policy).log_probs_and_values(obs, masks)
            check_finite(policy.parameters(), log_p[masks], values, "after the update")
        except NonFinite as e:
            if self.good is not None:
                policy.load_state_dict(self.good)
            self.diverged = {"reason": str(e), "at_timesteps": now,
                             "kept_timesteps": self.good_steps}
            return False
        self.good, self.good_steps = copy.deepcopy(policy.state_dict()), now
        return True

    def periodic(self) -> None:
        """What is due at the current step count: evaluation, checkpoint, snapshot."""
        a, now = self.args, self.model.num_timesteps
        if now <= self.start_steps:
            return
        if a.eval_every > 0 and now >= self.next_eval:
            while self.next_eval <= now:
                self.next_eval += a.eval_every
            self.evaluate(a.eval_games)
        if a.checkpoint_every > 0 and now >= self.next_checkpoint:
            while self.next_checkpoint <= now:
                self.next_checkpoint += a.checkpoint_every
            self.model.save(self.run_dir / "checkpoints" / f"ppo_{now}_steps.zip")
        if a.snapshot_every > 0 and now >= self.next_snapshot:
            while self.next_snapshot <= now:
                self.next_snapshot += a.snapshot_every
            self.snapshot()

    def finish(self) -> None:
        """After the last update: what is due at the final step count (:meth:`periodic`)."""
        self.periodic()

    def evaluate(self, games: int, tag: str = "eval") -> list[dict[str, Any]]:
        """Evaluates the current policy against every ``--eval-opponents`` agent at every
        evaluation table size; the same deals at every evaluation of a run (common random
        numbers: differences between points of the curve are about the policy, not the
        cards); ``tag="final_eval"`` uses other deals."""
        a, now = self.args, self.model.num_timesteps
        started = time.time()
        path = self.run_dir / "eval_model.zip"
        self.model.save(path)
        rows = []
        final = int(tag == "final_eval")
        for i, opponent in enumerate(specs(a.eval_opponents)):
            for n in eval_tables(a):
                key = (Stream.EVALUATION, i, final) + (() if n == a.num_players else (n,))
                r = evaluate(str(path), opponent, n, games, seed=derive_seed(a.seed, *key))
                r.update(timesteps=now, kind=tag, wall_s=round(time.time() - self.start_time, 1))
                del r["result"]
                rows.append(r)
                name = opponent.replace(":", "_") + (f"_{n}p" if n != a.num_players else "")
                self.logger.record(f"{tag}/win_rate_vs_{name}", r["win_rate"])
                self.logger.record(f"{tag}/win_ci_low_vs_{name}", r["ci_low"])
                self.logger.record(f"{tag}/win_ci_high_vs_{name}", r["ci_high"])
        self.logger.dump(now)
        self.game_seconds = (time.time() - started) / max(sum(r["games"] for r in rows), 1)
        print(eval_line(tag, now, rows, time.time() - started), flush=True)
        self.eval_rows.extend(rows)
        write_eval_csv(self.eval_rows, self.run_dir / "eval.csv")
        plot_curve(self.eval_rows, a.num_players, self.run_dir / "curve.png", self.run_dir.name)
        self.latest_score = selection_score(rows, specs(a.eval_opponents)[-1])
        if tag == "eval" and now > self.start_steps and (
            self.best is None or self.latest_score > self.best["score"]
        ):
            shutil.copyfile(path, self.run_dir / "best.zip")
            self.best = {"timesteps": now, "score": self.latest_score,
                         "opponent": specs(a.eval_opponents)[-1], "players": eval_tables(a)}
        return rows

    def snapshot(self) -> None:
        """Adds the current policy to the self-play league, if it evaluated at least as well as
        the previous snapshot (so the league only ever gets stronger)."""
        if self.args.eval_every > 0 and self.latest_score < self.snapshot_score:
            return
        self.snapshot_score = self.latest_score
        path = self.run_dir / "snapshots" / f"snapshot_{self.model.num_timesteps}.zip"
        path.parent.mkdir(exist_ok=True)
        self.model.save(path)
        self.add(str(path))

    def add(self, path: str) -> None:
        """Adds the model file ``path`` to every env's league."""
        self.n_snapshots += 1
        sizes = self.vec_env.env_method("add_snapshot", path, derive_seed(
            self.args.seed, Stream.SNAPSHOT, self.n_snapshots))
        if getattr(self, "model", None) is not None:  # not yet set when resuming
            self.logger.record("self_play/snapshots", sizes[0])
