"""Writes the README's pictures: ``python docs/images/generate.py`` (from the repository root).

* ``table_4p.png``: ``render_mode="rgb_array"`` of a 4-player game (spectator view) just after
  an item fired, the frame ``env.render()`` returns.
* ``replay_viewer.png``: the page ``uno-mk replay --agents strategic,greedy,ppo:models/ppo_4p.npz
  --players 3 --seed 6`` writes, at a decision of the ``ppo`` seat (its probabilities shown),
  as Debian's headless Chromium draws it.

``ismcts_budget.png`` is not drawn here: ``python -m benchmarks.ismcts_budget --plot
docs/images/ismcts_budget.csv`` draws it from the CSV beside it.

Needs the ``render`` extra (Pillow) and, for the screenshot, ``chromium``
(``apt-get install -y chromium``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from uno_mk_env import uno_mario_kart_v0
from uno_mk_env.agents import make_agent
from uno_mk_env.agents.base import agent_action
from uno_mk_env.cli.app import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PPO = ROOT / "models" / "ppo_4p.npz"


def table_image(path: Path) -> None:
    """The first frame from decision 15 on whose latest decision fired an item."""
    env = uno_mario_kart_v0.env(num_players=4, render_mode="rgb_array")
    env.reset(seed=11)
    agents = [make_agent(spec, seed=s) for s, spec in
              enumerate(["strategic", "greedy", f"ppo:{PPO}", "strategic"])]
    for _agent in env.agent_iter():
        game = env.game
        before = game.event_count
        env.step(agent_action(agents[game.current_player], game))
        fired = any(e[0] == "item" for e in game.events[before - game.events_start:])
        if fired and game.num_steps >= 15 and not game.game_over:
            break
    image = env.render()
    assert image.shape == (800, 1280, 3) and image.dtype == np.uint8
    Image.fromarray(image).save(path, optimize=True)


def viewer_screenshot(path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("the screenshot needs chromium: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "replay.html"
        code = main(["replay", "--agents", "strategic,greedy,ppo:models/ppo_4p.npz",
                     "--players", "3",
                     "--seed", "6", "--out", str(page), "--title", "strategic, greedy and ppo"])
        if code:
            sys.exit(code)
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--hide-scrollbars", f"--user-data-dir={Path(tmp) / 'profile'}",
             "--window-size=1600,900", f"--screenshot={path}",
             page.as_uri() + "#game=0&step=17&view=spectator"],
            check=True, capture_output=True, timeout=120,
        )


if __name__ == "__main__":
    os.chdir(ROOT)  # agent specs name models/ relative to the repository
    table_image(HERE / "table_4p.png")
    viewer_screenshot(HERE / "replay_viewer.png")
    print(f"wrote {HERE / 'table_4p.png'} and {HERE / 'replay_viewer.png'}")
