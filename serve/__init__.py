"""``uno-mk serve``: play the agents in a browser (docs/serve.md).

A server-authoritative web table (Starlette, uvicorn, WebSockets; a plain-JS page with no
build step): the server holds every game and sends each browser only what its seat may know.
Needs the ``serve`` extra (``pip install 'uno-mk-env[serve]'``).

Modules: :mod:`~uno_mk_env.serve.frames` (every payload), :mod:`~uno_mk_env.serve.table` (one
table, its games through the match driver), :mod:`~uno_mk_env.serve.app` (routes and the
protocol), :mod:`~uno_mk_env.serve.dataset` (the people's decisions as rows) and
:mod:`~uno_mk_env.serve.scoring` (duplicate scoring against a reference agent); tests build a
game's twin for one seat with :mod:`~uno_mk_env.serve.twins`.
"""
