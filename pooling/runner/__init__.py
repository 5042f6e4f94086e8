"""Where the work runs: `local` (this process) or `ray` (a Ray cluster, the `ray` extra).

The runner knows no domain: it joins or starts a cluster (`cluster`) and keeps actors busy
with batches, replacing the ones that die (`actors`). Every entry point that takes `engine=`
keeps its local path as it is; with `engine="ray"` its domain's `distributed` module hands
the units of work (blocks of runs, replay cells, batches of pairs) to the runner, and the
driver process alone reads and writes the store.
"""

from __future__ import annotations

from pooling.errors import PoolingError

ENGINES = ("local", "ray")


class EngineError(PoolingError):
    """The chosen engine cannot run the job (Ray missing, no cluster, a worker failing)."""


def check_engine(engine: str) -> str:
    """The engine's name if it is one of ENGINES; else an error listing them."""
    name = str(getattr(engine, "value", engine))
    if name not in ENGINES:
        raise EngineError(f"unknown engine {name!r}; use one of {', '.join(ENGINES)}")
    return name


__all__ = ["ENGINES", "EngineError", "check_engine"]
