"""The leaderboard commands declare their shared options once: same flags, same help."""

from __future__ import annotations

import pytest
import typer

from pooling.cli.app import app
from pooling.cli.leaderboard_options import scoring
from pooling.errors import PoolingError

COMMANDS = ("leaderboard", "compare", "topic-report", "pool-bias", "folds")


def _options(command: str) -> dict[str, tuple[tuple[str, ...], str | None]]:
    import pooling.cli  # noqa: F401  (registers every command)

    cmd = typer.main.get_command(app).commands[command]
    return {p.name: (tuple(p.opts), p.help) for p in cmd.params}


def test_each_shared_option_reads_the_same_in_every_command_that_has_it():
    seen: dict[str, tuple[tuple[str, ...], str | None]] = {}
    shared = {"qrels", "topics", "zero", "shared_topics", "relevance_level", "output"}
    for command in COMMANDS:
        for name, option in _options(command).items():
            if name in shared and not (command == "compare" and name == "qrels"):
                assert seen.setdefault(name, option) == option, (command, name)
    assert set(seen) == shared
    assert seen["zero"][0] == ("-c",) and seen["relevance_level"][0] == ("-l",)


def test_the_topic_block_becomes_the_library_keywords():
    assert scoring("601-650", False, False, 2) == {
        "topics": "601-650", "missing_topics": "zero", "relevance_level": 2}
    assert scoring(None, False, True, 1)["missing_topics"] == "skip"
    with pytest.raises(PoolingError, match="-c and --shared-topics are two different"):
        scoring(None, True, True, 1)


RANKING = ("leaderboard", "compare", "topic-report", "pool-bias", "folds", "agreement",
           "report runs")


def _params(command: str):
    import pooling.cli  # noqa: F401  (registers every command)

    group = typer.main.get_command(app)
    for word in command.split():
        group = group.commands[word]
    return {p.name: p for p in group.params}


@pytest.mark.parametrize("command", RANKING)
def test_every_ranking_command_takes_repeated_m_and_primary(command):
    params = _params(command)
    assert params["measure"].multiple and params["measure"].opts[0] == "-m", command
    assert params["primary"].opts == ["--primary"], command
