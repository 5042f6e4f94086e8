"""Automatic judging on a Ray cluster: batches of pairs go to judge actors.

One actor per CPU the cluster offers (or per endpoint, GPU or model replica: `actors`), each
holding one backend built as the local path builds it. Actors only compute verdicts: the
batches come back to the driver, which stores each one in a commit, exactly as the local
path does, so the cache, resume and failure accounting are the local ones. An actor that
dies loses only the batch it held (`pooling.runner.actors`): nothing of it was stored.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from pooling.errors import PoolingError
from pooling.runner.actors import ActorPool
from pooling.runner.cluster import cluster_cpus, connected


class JudgeActor:
    """A backend in an actor process; a backend that cannot be built says why on each call."""

    def __init__(self, name: str, options: dict[str, Any], training: Any = None):
        from pooling.judges.backends import backend

        self.error: PoolingError | None = None
        self.model = None
        try:
            self.model = backend(name, **options, training=training)
        except PoolingError as exc:
            self.error = exc

    def ready(self) -> bool:
        if self.error is not None:
            raise self.error
        return True

    def judge(self, pairs: list[Any]) -> list[Any]:
        """The backend's verdicts for one batch of pairs, in order."""
        if self.error is not None:
            raise self.error
        return list(self.model.judge(pairs))

    def close(self) -> None:
        if self.model is not None:
            self.model.close()


def judge_on_ray(name: str, options: dict[str, Any], pairs: Sequence[Any], batch: int, *,
                 ray_address: str | None = None, actors: int | None = None,
                 actor_cpus: float = 1.0) -> Iterator[list[Any]]:
    """Each batch's verdicts, in the order the actors finish them; every pair is in exactly
    one yielded batch, however many actors die on the way."""
    queue = deque(list(pairs[i:i + batch]) for i in range(0, len(pairs), max(batch, 1)))
    if not queue:
        return
    with connected(ray_address) as ray:
        Actor = ray.remote(num_cpus=actor_cpus, max_restarts=0, max_task_retries=0)(JudgeActor)
        options = dict(options)
        training = options.pop("training", None)
        if training is not None:
            training = ray.put(training)  # broadcast once; each actor resolves it on start
        wanted = min(actors or max(1, int(cluster_cpus(ray) / actor_cpus)), len(queue))
        pool = ActorPool(ray, lambda: Actor.remote(name, options, training), "judge", "judge actor")
        for _ in range(wanted):
            pool.start()
        try:
            yield from pool.run(queue)
        finally:
            pool.stop()
