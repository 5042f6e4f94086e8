"""The README stays true: its measure table is the registry's, and every command it names exists."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from pooling.cli.app import app
from pooling.measures.catalog import measure_markdown

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_measure_table_is_the_registry():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- measures:begin[^>]*-->\n(.*?)\n<!-- measures:end -->", text, re.S)
    assert block, "README lacks the generated measure table"
    assert block.group(1).strip() == measure_markdown().strip()


def test_readme_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["scripts/demo", "scripts/test"]


def test_every_command_in_the_readme_tables_has_help():
    import pooling.cli  # noqa: F401  (registers every command)

    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `pooling ([a-z-]+(?: [a-z-]+)?)", text, re.M))
    assert len(named) > 15
    runner = CliRunner()
    for command in sorted(named):
        words = command.split()
        result = runner.invoke(app, [*words, "--help"])
        if result.exit_code != 0 and len(words) == 2:  # "import runs" vs "init STORE"
            result = runner.invoke(app, [words[0], "--help"])
        assert result.exit_code == 0, f"`pooling {command}` is in the README but has no --help"
