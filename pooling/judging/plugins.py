"""The judging core's registries, which packages above it fill: item types, queue policies,
may-judge extensions, derivation rules and strategy inputs.

The core never imports a package above it. A package plugs in by registering its entries
when it is imported, and declares itself in `pyproject.toml` under the registry's entry-point
group (`[project.entry-points."pooling.queue_policies"]`, for instance), so that the first
time the core is asked for a name it does not hold it loads the declared packages, once,
without knowing them. A name nobody registers is refused with the names there are.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from pooling.errors import StoreError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one concept (`what`, for messages), filled by `register` and by the
    packages its entry-point `group` declares."""

    def __init__(self, group: str, what: str):
        self.group = group
        self.what = what
        self._entries: dict[str, T] = {}
        self._loaded = False

    def register(self, name: str, entry: T) -> T:
        """Add an entry; registering a name again with another entry is a programming error
        (two packages claiming one name), so it raises."""
        known = self._entries.get(name)
        if known is not None and known is not entry:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def _load_declared(self) -> None:
        """Import every package the entry-point group declares (each registers on import)."""
        if self._loaded:
            return
        self._loaded = True
        for point in entry_points(group=self.group):
            point.load()

    def get(self, name: str) -> T:
        """The entry named `name` (`StoreError` naming the known ones when there is none)."""
        if name not in self._entries:
            self._load_declared()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise StoreError(
                f"no {self.what} {name!r} is known (known: {known}); a package that provides "
                f"it declares the entry-point group {self.group!r}: reinstall pooling "
                "(`pip install -e .`) if it is one of pooling's own") from None

    def __contains__(self, name: object) -> bool:
        self._load_declared()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        """Every name, the declared packages loaded first, in registration order."""
        self._load_declared()
        return iter(list(self._entries))

    def items(self) -> list[tuple[str, T]]:
        """Every (name, entry), the declared packages loaded first."""
        self._load_declared()
        return list(self._entries.items())
