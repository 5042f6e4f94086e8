"""A release of a collection: the directory others download, check and load.

`write_release` turns a store into a bundle (topics, qrels, runs, the pool and its
provenance, the judgment history with assessors pseudonymised, a datasheet, a citation,
checksums, Parquet copies with a dataset card, and the files BEIR and ir_datasets read);
`import_release` rebuilds a store from one, refusing a bundle whose checksums do not match.
"""

from pooling.release.options import DocsMode, ReleaseOptions, RunsMode
from pooling.release.rebuild import import_release
from pooling.release.writer import write_release

__all__ = ["DocsMode", "ReleaseOptions", "RunsMode", "import_release", "write_release"]
