"""The module paths of 0.9.0 (uno_mk_env/_moved.py): each still imports, as the very module at
its new path (not a copy), with one DeprecationWarning naming the new path; the module keeps its
own spec; ``from uno_mk_env import <old module>`` works too."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from uno_mk_env._moved import MOVED


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_an_old_path_is_the_module_at_its_new_path_with_a_warning(old: str, new: str) -> None:
    if new.endswith("openspiel"):
        pytest.importorskip("pyspiel")
    code = (f"import warnings, importlib, sys\nwarnings.simplefilter('error', DeprecationWarning)\n"
            f"import uno_mk_env\ntry:\n    importlib.import_module({old!r})\n"
            f"except DeprecationWarning as e:\n    print(e)\n"
            f"warnings.simplefilter('ignore')\nm = importlib.import_module({old!r})\n"
            f"print(m is importlib.import_module({new!r}), m.__name__, m.__spec__.name)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    warning, same = out.stdout.splitlines()
    assert warning == f"{old} moved to {new} in uno-mk-env 0.10.0; the old path goes in 1.0"
    assert same == f"True {new} {new}"


def test_from_imports_of_old_paths_work() -> None:
    """(The warning: the subprocess test above; here the old module may be imported already.)"""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from uno_mk_env import legality  # type: ignore[attr-defined]
        from uno_mk_env.vector import (  # type: ignore[import-not-found]
            SelfPlayVectorEnv,
            UnoMarioKartVectorEnv,
        )
    vector = importlib.import_module("uno_mk_env.envs.vector")
    self_play = importlib.import_module("uno_mk_env.envs.self_play")
    assert UnoMarioKartVectorEnv is vector.UnoMarioKartVectorEnv
    assert SelfPlayVectorEnv is self_play.SelfPlayVectorEnv
    assert legality is importlib.import_module("uno_mk_env.engine.legality")


def test_render_is_a_package_that_keeps_the_text_renderers_names() -> None:
    from uno_mk_env.render import text
    from uno_mk_env.render import text as render

    assert render.render_game is text.render_game and render.events_text is text.events_text


def test_an_unknown_module_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("uno_mk_env.no_such_module")
