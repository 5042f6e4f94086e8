"""Batches of work kept flowing through actors on a Ray cluster, whatever dies on the way.

An actor class has `ready()` (True once it can work; raises to stop the job) and one method
that takes a batch; `ActorPool.run` yields each batch's result in the order actors finish.
An actor that dies (its process or its node killed) loses only the batch it held: that batch
goes back to the front of the queue for a live actor, and a replacement actor is started.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from pooling.runner import EngineError
from pooling.runner.cluster import cause

# How long a job waits for an actor to start when none is alive (a cluster without room).
START_TIMEOUT = 120.0


class ActorPool:
    """Actors starting, idle and busy; a dead one's batch is queued again and it is replaced.

    make: a new actor handle; work: the name of the actor method that takes a batch; what:
    the actors' name in the message when none can start.
    """

    def __init__(self, ray: Any, make: Callable[[], Any], work: str = "judge",
                 what: str = "judge actor"):
        self.ray = ray
        self.make = make
        self.work = work
        self.what = what
        self.starting: dict[Any, Any] = {}  # ready() ref -> actor
        self.idle: list[Any] = []
        self.busy: dict[Any, tuple[Any, list[Any]]] = {}  # work() ref -> (actor, batch)
        self.all: list[Any] = []
        self.lost_since: float | None = None

    def start(self) -> None:
        actor = self.make()
        self.all.append(actor)
        self.starting[actor.ready.remote()] = actor

    def run(self, queue: deque) -> Iterator[list[Any]]:
        ray = self.ray
        while queue or self.busy:
            while queue and self.idle:
                actor = self.idle.pop()
                batch = queue.popleft()
                self.busy[getattr(actor, self.work).remote(batch)] = (actor, batch)
            if not self.busy and not self.idle:
                self._check_room()
            waiting = list(self.busy) + list(self.starting)
            done, _ = ray.wait(waiting, num_returns=1, timeout=5.0)
            for ref in done:
                if ref in self.starting:
                    actor = self.starting.pop(ref)
                    if self._alive(ref):
                        self.idle.append(actor)
                        self.lost_since = None
                    else:
                        self.start()
                    continue
                actor, batch = self.busy.pop(ref)
                try:
                    verdicts = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    raise cause(exc) from None
                except ray.exceptions.RayActorError:
                    queue.appendleft(batch)  # never stored: judged again by a live actor
                    self.start()
                    continue
                self.idle.append(actor)
                yield verdicts

    def _alive(self, ref: Any) -> bool:
        """Whether the actor behind a ready() call started; its backend's error is raised."""
        ray = self.ray
        try:
            ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            raise cause(exc) from None
        except ray.exceptions.RayActorError:
            return False
        return True

    def _check_room(self) -> None:
        """No actor alive: give the starting ones START_TIMEOUT, then say why the job stops."""
        now = time.monotonic()
        self.lost_since = self.lost_since or now
        if now - self.lost_since > START_TIMEOUT:
            raise EngineError(f"no {self.what} could start on the cluster in {START_TIMEOUT:.0f} s; "
                              "check that its nodes are up and have a free CPU (`ray status`)")

    def stop(self) -> None:
        for actor in self.idle:
            try:
                self.ray.get(actor.close.remote(), timeout=30)
            except Exception:  # noqa: BLE001 - a backend that fails to close loses nothing
                pass
        for actor in self.all:
            try:
                self.ray.kill(actor)
            except Exception:  # noqa: BLE001 - an actor already gone needs no stopping
                pass
