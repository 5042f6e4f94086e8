"""Writing participant reports to a folder: one HTML (and PDF) per run, and `index.html`.

A run tag may hold anything (`/`, spaces, `..`, unicode, a name Windows reserves), so a
file name is never the tag itself: `report_file_stem` keeps the tag's safe ASCII characters
and, whenever that changed anything or could collide on a case-insensitive file system,
adds a short hash of the whole tag. The page itself shows the tag as given.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from pooling.leaderboard.participant_html import index_html, report_html
from pooling.leaderboard.participant_report import ParticipantReports, participant_reports
from pooling.output_files import write_text
from pooling.store.core import Store
from pooling.terminal.progress import NoProgress, Progress

INDEX = "index.html"
_MAX_STEM = 60
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)),
                     *(f"LPT{i}" for i in range(10))}


@dataclass
class WrittenReports:
    """What was written: the index, each run's HTML and PDF, and the seconds each part took
    (gather: scoring and tests; html: rendering and writing the pages; pdf: printing them)."""

    folder: Path
    index: Path
    pages: dict[str, Path]
    pdfs: dict[str, Path] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    reports: ParticipantReports | None = None


def report_file_stems(run_ids: list[str]) -> dict[str, str]:
    """run_id -> a file name stem safe on every file system, distinct even ignoring case."""
    slugs = {r: _slug(r) for r in run_ids}
    folded: dict[str, int] = {}
    for s in slugs.values():
        folded[s.casefold()] = folded.get(s.casefold(), 0) + 1
    out = {}
    for r, s in slugs.items():
        plain = (s == r and folded[s.casefold()] == 1 and s.upper() not in _WINDOWS_RESERVED
                 and s.casefold() != Path(INDEX).stem)
        out[r] = s if plain else f"{s}-{hashlib.sha256(r.encode('utf-8')).hexdigest()[:10]}"
    return out


def _slug(run_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", run_id).strip(".-")[:_MAX_STEM].strip(".-")
    return slug or "run"


def write_participant_reports(
    store: Store,
    folder: str | Path,
    *,
    pdf: bool = True,
    title: str | None = None,
    progress: Progress | None = None,
    **options,
) -> WrittenReports:
    """Gather the reports (options as for `participant_reports`) and write them to folder:
    `<stem>.html` (and `<stem>.pdf`) per run, and `index.html` linking them all. progress
    hears of each run scored, then of each PDF printed."""
    from pooling.leaderboard.pdf import require_pdf_support, write_pdf

    if pdf:
        require_pdf_support()  # before any work: a missing library is said at once
    clock = time.perf_counter()
    progress = progress or NoProgress()
    reports = participant_reports(store, progress=progress, **options)
    seconds = {"gather": time.perf_counter() - clock}
    folder = Path(folder)  # made only now: a refused option leaves no empty folder behind
    folder.mkdir(parents=True, exist_ok=True)
    stems = report_file_stems([r.run_id for r in reports.reports])
    clock = time.perf_counter()
    pages: dict[str, Path] = {}
    texts: dict[str, str] = {}
    for r in reports.reports:
        texts[r.run_id] = report_html(r, reports.description)
        pages[r.run_id] = write_text(folder / f"{stems[r.run_id]}.html", texts[r.run_id])
    files = {r: (f"{stems[r]}.html", f"{stems[r]}.pdf" if pdf else None) for r in pages}
    index = write_text(folder / INDEX, index_html(
        reports, files, title=title or f"Participant reports — qrels {reports.qrels_version}"))
    seconds["html"] = time.perf_counter() - clock
    written = WrittenReports(folder, index, pages, seconds=seconds, reports=reports)
    if pdf:
        clock = time.perf_counter()
        progress.start("printing PDF reports", total=len(texts))
        for run_id, text in texts.items():
            written.pdfs[run_id] = write_pdf(text, folder / f"{stems[run_id]}.pdf").path
            progress.advance()
        progress.finish()
        seconds["pdf"] = time.perf_counter() - clock
    return written
