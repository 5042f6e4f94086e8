"""HTML pages printed to PDF through WeasyPrint, from the very HTML a browser shows.

WeasyPrint is an optional dependency (the `reports` extra): it lays out HTML and CSS,
inline SVG included, with the system's fonts, and fetches nothing here (every page is
self-contained). Without it, asking for a PDF is a clear error that says how to install it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pooling.leaderboard.errors import LeaderboardError
from pooling.output_files import write_bytes

INSTALL_HINT = ("PDF reports need WeasyPrint: pip install 'pooling[reports]' (it also needs "
                "Pango, e.g. apt-get install libpango-1.0-0), or pass --no-pdf for HTML only")


@dataclass(frozen=True)
class PdfFile:
    """A PDF written: its path, page count, and the headings of its outline (the h1–h6 of
    the HTML, as WeasyPrint lays them out: what a reader of the PDF sees first)."""

    path: Path
    pages: int
    headings: tuple[str, ...]
    title: str | None


def require_pdf_support() -> None:
    """Raise a LeaderboardError saying how to install WeasyPrint when it cannot be loaded."""
    try:
        import weasyprint  # noqa: F401
    except (ImportError, OSError) as exc:  # OSError: the package is there, Pango is not
        raise LeaderboardError(f"{INSTALL_HINT} ({exc})") from exc


def write_pdf(html_text: str, path: str | Path) -> PdfFile:
    """Lay out a self-contained HTML page and write it as PDF, atomically."""
    require_pdf_support()
    import weasyprint

    document = weasyprint.HTML(string=html_text, base_url=None).render()
    data = document.write_pdf()
    out = write_bytes(path, data)
    headings = tuple(label for page in document.pages for _level, label, *_ in page.bookmarks)
    return PdfFile(out, len(document.pages), headings, document.metadata.title)
