"""The manual stays true: README.md and every docs/*.md page are checked like code.

Every `pooling …` line of a bash block names a real command and only that command's options
(read from the command-line app itself, not from --help); every relative link reaches its
page and heading; the measure table is the registry's wherever it lives; every Python block
compiles, and the blocks marked `<!-- runnable -->` run on the demo collection.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import pooling.cli  # noqa: F401  (registers every command)
from pooling.cli.app import app
from pooling.measures.catalog import measure_markdown

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
RUNNABLE = "<!-- runnable -->"
MEASURES = re.compile(r"<!-- measures:begin[^>]*-->\n(.*?)\n<!-- measures:end -->", re.S)


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, first line number, text and the comment before it."""

    page: Path
    lang: str
    line: int
    text: str
    marker: str

    def where(self) -> str:
        return f"{page_id(self.page)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks, each with the HTML comment line just before it (if any)."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        marker = before if before.startswith("<!--") else ""
        found.append(Block(page, fence.group(1), i + 2, "\n".join(lines[i + 1:end]), marker))
        i = end + 1
    return found


def prose(page: Path) -> str:
    """The page without its fenced blocks and inline code (where links are not links)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def command_lines(block: Block) -> list[list[str]]:
    """The `pooling …` lines of a bash block as words (continuations joined, comments,
    `&`, optional-part brackets and leading VAR=value assignments dropped)."""
    joined = re.sub(r"\\\n\s*", " ", block.text)
    lines = []
    for raw in joined.splitlines():
        words = [w.strip("[]") for w in shlex.split(raw, comments=True)]
        words = [w for w in words if w and w != "&"]
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words.pop(0)
        if words and words[0] == "pooling":
            lines.append(words[1:])
    return lines


def table_commands(page: Path) -> list[tuple[str, list[str]]]:
    """`pooling …` spans of the first cell of every table row, each as (span, words): one
    entry per alternative of the last command word (`batch export\\|import`), with the
    options the span names (`[--depth k]`, `-c\\|--shared-topics`)."""
    found = []
    for cell in re.findall(r"^\| (.*?) \| ", page.read_text(encoding="utf-8"), re.M):
        for span in re.findall(r"`(pooling [^`]*)`", cell):
            text = span.replace("\\|", "|")
            words = re.match(r"pooling((?: [a-z][a-z-]*(?:\|[a-z][a-z-]*)*)*)", text).group(1).split()
            options = re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text)
            for last in words[-1].split("|"):
                found.append((span, [*words[:-1], last, *options]))
    return found


def is_group(command: Any) -> bool:
    return hasattr(command, "commands")


def option_names(command: Any) -> set[str]:
    names = {"--help"}
    for param in command.params:
        if param.param_type_name == "option":
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def takes_value(command: Any, name: str) -> bool:
    for param in command.params:
        if param.param_type_name == "option" and name in (*param.opts, *param.secondary_opts):
            return not param.is_flag and not param.count
    return False


def is_option(word: str) -> bool:
    return word.startswith("-") and word != "-" and not re.match(r"^-\.?\d", word)


def check_command(words: list[str]) -> list[str]:
    """What is wrong with `pooling WORDS` (nothing: an empty list)."""
    command = typer.main.get_command(app)
    rest = list(words)
    while rest and is_option(rest[0]):  # options of `pooling` itself: --token T, --verbose
        word = rest.pop(0)
        name = word.split("=", 1)[0]
        if name not in option_names(command):
            return [f"`{name}` is not an option of `pooling`"]
        if takes_value(command, name) and "=" not in word and rest:
            rest.pop(0)
    path = ["pooling"]
    while is_group(command):
        if not rest or rest[0] not in command.commands:
            named = rest[0] if rest else "nothing"
            return [f"`{' '.join(path)} {named}` is not a command "
                    f"(commands: {', '.join(sorted(command.commands))})"]
        word = rest.pop(0)
        path.append(word)
        command = command.commands[word]
    known = option_names(command)
    return [f"`{name}` is not an option of `{' '.join(path)}`"
            for name in (w.split("=", 1)[0] for w in rest if is_option(w)) if name not in known]


def slug(heading: str) -> str:
    """The anchor a heading gets on GitHub: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]{2,}|`", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


# -- the pages ---------------------------------------------------------------------------


def test_the_index_lists_every_page():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    assert listed == {p.name for p in DOCS.glob("*.md")} - {"index.md"}


def test_the_measure_table_is_the_registry_wherever_it_lives():
    tables = {page_id(p): m.group(1) for p in PAGES
              for m in MEASURES.finditer(p.read_text(encoding="utf-8"))}
    assert tables, "no page holds the generated measure table"
    for page, table in tables.items():
        assert table.strip() == measure_markdown().strip(), f"{page}: measure table is stale"


def test_every_command_in_the_tables_has_help():
    named = {m for p in PAGES
             for m in re.findall(r"^\| `pooling ([a-z-]+(?: [a-z-]+)?)", p.read_text("utf-8"), re.M)}
    assert len(named) > 15
    runner = CliRunner()
    for command in sorted(named):
        words = command.split()
        result = runner.invoke(app, [*words, "--help"])
        if result.exit_code != 0 and len(words) == 2:  # "import runs" vs "init STORE"
            result = runner.invoke(app, [words[0], "--help"])
        assert result.exit_code == 0, f"`pooling {command}` is in the docs but has no --help"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_pooling_line_names_a_command_and_its_own_options(page):
    problems = [f"{b.where()}: {problem}" for b in blocks(page) if b.lang == "bash"
                for words in command_lines(b) for problem in check_command(words)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_command_in_a_table_names_its_own_options(page):
    problems = [f"{page_id(page)}: `{span}`: {problem}" for span, words in table_commands(page)
                for problem in check_command(words)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_reaches_its_page_and_heading(page):
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(page)):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            problems.append(f"{target}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            problems.append(f"{target}: no heading #{anchor} in {goal.name}")
    assert not problems, f"{page_id(page)}: " + "; ".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_python_block_compiles(page):
    for block in blocks(page):
        if block.lang == "python":
            compile(block.text, block.where(), "exec")


RUNNABLE_BLOCKS = [b for p in PAGES for b in blocks(p) if b.lang == "python" and b.marker == RUNNABLE]


def test_some_python_blocks_are_run():
    assert RUNNABLE_BLOCKS


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE_BLOCKS, ids=Block.where)
def test_runnable_python_blocks_run_on_the_demo_collection(block, tmp_path):
    (tmp_path / "collections").symlink_to(ROOT / "collections")
    script = tmp_path / "block.py"
    script.write_text(block.text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{block.where()}:\n{done.stderr}"


# -- the checks themselves -----------------------------------------------------------------


def test_a_misspelt_command_or_option_is_caught():
    assert check_command(["import", "runs", "s.duckdb", "a.run", "--meta", "m.tsv"]) == []
    assert check_command(["--token", "T", "info", "s.duckdb"]) == []
    assert check_command(["eval", "q", "r", "-m", "map", "-c", "-l", "2"]) == []
    assert check_command(["import", "run", "s.duckdb"])[0].startswith("`pooling import run` is")
    assert check_command(["eval", "q", "r", "--measures", "map"]) == [
        "`--measures` is not an option of `pooling eval`"]
    assert check_command(["info", "s.duckdb", "--round", "r1"]) == [
        "`--round` is not an option of `pooling info`"]


def test_headings_become_github_anchors():
    assert slug("cal and the learned judge on Cranfield") == "cal-and-the-learned-judge-on-cranfield"
    assert slug("trec_eval 9 and pytrec_eval") == "trec_eval-9-and-pytrec_eval"
    assert slug("Serving: the `pooling serve` app") == "serving-the-pooling-serve-app"


def test_every_citation_of_a_docs_page_in_the_code_resolves():
    """Docstrings and comments that cite a page of the manual (and its heading) reach it."""
    problems = []
    for source in [*ROOT.glob("pooling/**/*.py"), *ROOT.glob("tests/**/*.py")]:
        text = source.read_text(encoding="utf-8")
        if "SEMANTICS.md" in text and source.name != "test_docs.py":
            problems.append(f"{source.relative_to(ROOT)} cites SEMANTICS.md, which is not here")
        for path, anchor in re.findall(r"\b(docs/[\w.-]+\.md)(?:#([\w-]+))?", text):
            if not (ROOT / path).exists():
                problems.append(f"{source.relative_to(ROOT)}: no {path}")
            elif anchor and anchor not in anchors(ROOT / path):
                problems.append(f"{source.relative_to(ROOT)}: no heading #{anchor} in {path}")
    assert not problems, "\n".join(problems)
