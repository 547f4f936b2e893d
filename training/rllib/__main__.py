"""``python -m uno_mk_env.training.rllib``: the RLlib backend's command line."""

import sys

from .loop import main

sys.exit(main())
