"""Joining a Ray cluster (or starting one on this machine) without reaching the internet.

Ray is imported here, lazily: without the `ray` extra, `--engine ray` says what to install.
Usage statistics and the dashboard stay off; a cluster started here listens on 127.0.0.1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pooling.runner import EngineError

_LOOPBACK = ("127.0.0.1", "localhost")


def ray_module() -> Any:
    """The `ray` module, imported with usage statistics off; an EngineError without it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as exc:
        raise EngineError("--engine ray needs Ray; install it with `pip install 'pooling[ray]'`"
                          ) from exc
    return ray


@contextmanager
def connected(address: str | None = None) -> Iterator[Any]:
    """Ray, connected for the duration: to `address` (host:port, ray://host:port or auto),
    else to RAY_ADDRESS, else to a Ray started here and stopped at the end.

    A connection made before (`ray.init` by the caller) is used as it is and left open.
    """
    ray = ray_module()
    if ray.is_initialized():
        yield ray
        return
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                               "logging_level": "warning", "configure_logging": False}
    address = address or os.environ.get("RAY_ADDRESS") or None
    host = (address or "").removeprefix("ray://").rsplit(":", 1)[0]
    if address is None or host in _LOOPBACK:
        options["_node_ip_address"] = "127.0.0.1"  # never look up this machine's public address
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = address or "a local Ray"
        raise EngineError(f"cannot connect to {where}: {exc}; check --ray-address (host:port of "
                          "the head node, as `ray start --head` printed it)") from exc
    try:
        yield ray
    finally:
        ray.shutdown()


def cluster_cpus(ray: Any) -> int:
    """The CPUs the cluster offers now (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def cause(exc: BaseException) -> BaseException:
    """The error a task raised (a PoolingError stays itself), not Ray's wrapper around it."""
    inner = getattr(exc, "cause", None)
    return inner if isinstance(inner, BaseException) else exc


def get_all(ray: Any, refs: Sequence[Any]) -> list[Any]:
    """Every result in order; the error of the first failed task in that order re-raised as
    the task raised it, whichever failed first in time: the error the local engine, which
    works in order, raises. (`ray.get` of a list raises whichever error it meets first.)"""
    refs = list(refs)
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError:
        for ref in refs:  # the first failure in order (each waited for in turn)
            try:
                ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                raise cause(exc) from None
        raise
