"""Start-up: the CLI, its help and the package import load no data library until a command
needs one, and what loads later is still what was exported before."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

DATA_LIBRARIES = ("numpy", "pyarrow", "duckdb", "pandas", "pooling.store", "pooling.evaluation",
                  "pooling.strategies", "pooling.formats")


def _python(code: str) -> str:
    """Run `code` in a fresh interpreter (imports are per process) and return its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _loaded_after(code: str) -> list[str]:
    """Which of DATA_LIBRARIES a fresh interpreter has imported after running `code`."""
    probe = (f"import sys\n{code}\n"
             f"print(__import__('json').dumps([m for m in {DATA_LIBRARIES!r} if m in sys.modules]))")
    return json.loads(_python(probe).splitlines()[-1])


def test_importing_the_cli_loads_no_data_library():
    assert _loaded_after("import pooling.cli") == []


def test_importing_the_package_loads_no_data_library():
    assert _loaded_after("import pooling") == []


def test_help_builds_every_command_without_a_data_library():
    code = ("import typer.main, pooling.cli\n"
            "group = typer.main.get_command(pooling.cli.app)\n"
            "assert 'simulate' in group.commands and 'eval' in group.commands")
    assert _loaded_after(code) == []


def test_help_from_the_shell_lists_the_commands_without_a_data_library():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pooling", "--help"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert "simulate" in done.stdout and "eval" in done.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    assert loaded.isdisjoint(DATA_LIBRARIES)


def test_package_exports_load_on_first_use_and_are_the_library_objects():
    out = _python(
        "import sys, pooling\n"
        "assert 'pooling.store' not in sys.modules\n"
        "from pooling import Store, evaluate\n"
        "import pooling.store, pooling.evaluation\n"
        "assert Store is pooling.store.Store and pooling.Store is Store\n"
        "assert evaluate is pooling.evaluation.evaluate and pooling.evaluate is evaluate\n"
        "assert all(hasattr(pooling, name) for name in pooling.__all__)\n"
        "assert {'Store', 'evaluate'} <= set(dir(pooling))\n"
        "print('ok')")
    assert out.strip() == "ok"


def test_an_unknown_package_attribute_is_an_attribute_error():
    import pooling

    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        pooling.nothing_here  # noqa: B018


def test_simulate_help_lists_exactly_the_strategies_the_registry_says_replay():
    from pooling.cli.simulate_cmds import REPLAYABLE, _strategy_help
    from pooling.strategies import REGISTRY

    assert list(REPLAYABLE) == sorted(n for n, cls in REGISTRY.items() if cls.replays())
    listed = _strategy_help().split("(")[1].split(";")[0].split(", ")
    assert listed == list(REPLAYABLE) and "uncertain" not in listed


def test_ir_datasets_docs_choices_are_the_library_modes():
    from pooling.cli.store_cmds import DocsOpt
    from pooling.store.ir_datasets import DocsMode

    assert [m.value for m in DocsOpt] == [m.value for m in DocsMode]


def _pooling(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pooling", *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done


def _loaded_by(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")}


def test_evaluate_scores_a_stored_run_without_pandas_and_still_writes_csv(shared_dir, tmp_path):
    golden = shared_dir / "golden" / "trec_eval"
    store = str(tmp_path / "s.duckdb")
    _pooling("init", store)
    _pooling("import", "qrels", store, str(golden / "qrels.test"), "--name", "q")
    _pooling("import", "runs", store, str(golden / "results.test"))
    scored = _pooling("evaluate", store, "-m", "map")  # the table: no pandas anywhere
    # A refused import leaves one `pandas` line; a loaded pandas brings its submodules.
    assert not {m for m in _loaded_by(scored) if m.startswith("pandas.")}
    assert "0.1785" in scored.stdout
    as_csv = _pooling("evaluate", store, "-m", "map", "--format", "csv")  # CSV goes via pandas
    header, *rows = as_csv.stdout.splitlines()
    assert header.startswith("run_id,query_id,measure,value")
    assert "STANDARD,all,map,0.1785" in [",".join(r.split(",")[:3]) + "," + r.split(",")[3][:6]
                                        for r in rows]
