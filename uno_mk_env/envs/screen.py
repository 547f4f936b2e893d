"""What an env shows when asked to ``render()``: one home for both front ends (the PettingZoo AEC
env and the Gymnasium wrapper). Text (``"ansi"``) comes from :mod:`uno_mk_env.render.text`, an
image (``"rgb_array"``) from :mod:`uno_mk_env.render.image`, and ``"human"`` shows that image in
a pygame window that :meth:`Screen.close` closes. Which seat's view is shown is the env's choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from ..engine.game import Game
from ..render import text as R

__all__ = ["IMAGE_MODES", "RENDER_MODES", "Screen"]

RENDER_MODES = ("ansi", "rgb_array", "human")
#: The render modes that draw an image (Pillow; ``"human"`` also needs pygame).
IMAGE_MODES = ("rgb_array", "human")


class Screen:
    """The rendering of one env: ``render_mode`` checked once (the image modes' optional
    dependencies are installed), then :meth:`frame` per ``render()`` call.

    Raises:
        ImportError: Pillow (or pygame for ``"human"``) is missing; names the extra to install.
    """

    def __init__(self, render_mode: str | None, fps: float, owner: str) -> None:
        self.mode = render_mode
        self.owner = owner
        self.window: Any = None
        if render_mode in IMAGE_MODES:
            # Pillow and pygame are the optional ``render`` extra: imported only when asked for.
            from ..render.image import Window, require_pillow

            require_pillow(render_mode)
            self.window = Window(fps=fps) if render_mode == "human" else None

    def no_mode(self) -> None:
        """``render()`` without a render mode: Gymnasium's warning, nothing drawn."""
        gymnasium.logger.warn("You are calling render() without a render mode; pass "
                              f"render_mode='ansi', 'rgb_array' or 'human' to {self.owner}")

    def frame(self, game: Game, text_seat: int, image_seat: int | None, names: Sequence[str],
              history: R.RecentDecisions, step: int, done: bool) -> str | np.ndarray | None:
        """The table as text from ``text_seat``'s view (``"ansi"``), as an image from
        ``image_seat``'s view or the spectator's (``"rgb_array"``), or that image shown in the
        window (``"human"``, ``None``)."""
        if self.mode == "ansi":
            return R.render_game(game, text_seat, names, history, step=step, done=done)
        from ..render.image import render_image  # the render extra (see __init__)

        image = render_image(game, image_seat, names, history)
        if self.window is not None:
            self.window.show(image)
            return None
        return image

    def close(self) -> None:
        """Closes the ``"human"`` window, if one is open."""
        if self.window is not None:
            self.window.close()
