"""LETOR/SVMlight files into the store: labels as a qrels version, features as runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pooling.errors import StoreError
from pooling.formats import letor
from pooling.formats.source import display_name, sha256_file
from pooling.store.core import Store
from pooling.store.qrels import QrelsImport, save_qrels
from pooling.store.runs import ImportedRun, RunMeta, import_run_table


@dataclass
class LetorImport:
    qrels: QrelsImport
    runs: list[ImportedRun] = field(default_factory=list)


def import_letor(
    store: Store, path: str | Path, *, name: str | None = None, feature_runs: str | None = None
) -> LetorImport:
    """Labels become qrels version `name` (default: file stem); `feature_runs` ('all' or '1,5')
    imports each listed feature column as a run ranking documents by that feature."""
    data = letor.read_letor(path)
    version = name or Path(path).name.split(".")[0]
    known = [c for c in data.features.column_names if c not in ("query_id", "doc_id")]
    wanted: list[str] = []
    if feature_runs:
        wanted = known if feature_runs.strip() == "all" else [f.strip() for f in feature_runs.split(",")]
        missing = [f for f in wanted if f not in known]
        if missing:
            raise StoreError(f"{display_name(path)} has no feature(s) {', '.join(missing)}; "
                             f"features are {', '.join(known)}")
    existing = {r for r in store.qrels_versions()}
    if version in existing:
        raise StoreError(f"qrels version {version!r} already exists; choose another --name")
    with store.transaction():  # labels and feature runs: all or nothing
        return _save(store, data, path, version, wanted)


def _save(store: Store, data, path, version: str, wanted: list[str]) -> LetorImport:
    result = LetorImport(
        save_qrels(store, data.qrels, version, method="letor labels", source=display_name(path),
                   sha256=sha256_file(path))
    )
    for feature in wanted:
        run = letor.feature_run(data, feature, tag=f"{version}_f{feature}")
        report = import_run_table(
            store, run.append_column("line", _rows(run.num_rows)) if "line" not in run.column_names else run,
            f"{version}_f{feature}",
            meta=RunMeta(description=f"LETOR feature {feature} of {display_name(path)}"),
            source=display_name(path),
        )
        result.runs += report.items
    return result


def _rows(n: int):
    import pyarrow as pa

    return pa.array(range(1, n + 1), pa.int64())
