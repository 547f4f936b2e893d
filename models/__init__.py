"""The shipped policies as package data (installed as ``uno_mk_env.models``): the ``NAME.npz``
policy files and their ``NAME.json`` provenance. Use them by name (``ppo:ppo_2p``); see
:mod:`uno_mk_env.agents.shipped`."""
