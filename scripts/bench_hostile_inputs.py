"""Time and peak memory of gzip bombs through `import qrels`, `eval` and `import runs`.

The bombs (written to a temporary folder):
- many-lines: about 2 MB of gzip holding one valid line and then 1 GiB of short bad lines;
- one-line: about 1 MB of gzip holding a single 1 GiB line;
- same-line: one valid run line repeated to 1 GiB (67 million copies), refused at line 2 by a
  strict import and kept once by `import runs --dedupe first` (which then succeeds).

Each command runs in its own process; the table shows its wall time, its peak resident memory
(getrusage RUSAGE_CHILDREN) and the first line of its error. The target: every refusal within
30 s and under 500 MB.

    .venv/bin/python scripts/bench_hostile_inputs.py [--gib 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_gzip_bomb(path: Path, head: bytes, filler: bytes, size: int) -> None:
    """`head`, then `filler` repeated up to `size` bytes, gzip-compressed, streamed to `path`."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    piece = filler * max(1, (1 << 24) // len(filler))
    with open(path, "wb") as out:
        out.write(packer.compress(head))
        left = size
        while left > 0:
            chunk = piece[:left]
            out.write(packer.compress(chunk))
            left -= len(chunk)
        out.write(packer.flush())


# Runs one command and prints its peak RSS (KiB) last: each measure is of one child alone
# (RUSAGE_CHILDREN of this process keeps the largest child so far).
_MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stdout.write(done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def run(args: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """(seconds, peak MB, exit code, first stderr line) of one pooling command."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "pooling", *args],
                          cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    seconds = time.perf_counter() - start
    *stderr, last = done.stdout.splitlines()
    code, peak_kib = (int(v) for v in last.split())
    first = next((line for line in stderr if line.strip()), "")
    return seconds, peak_kib / 1024, code, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="decompressed size of each bomb")
    size = int(parser.parse_args().gib * (1 << 30))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bombs = {
            "many-lines": (b"1 0 d1 1\n", b"x\n"),
            "one-line": (b"", b"0"),
            "same-line": (b"", b"1 Q0 d1 1 1.0 r\n"),
        }
        valid_run = root / "ok.run"
        valid_run.write_text("1 Q0 d1 1 1.0 r\n")
        valid_qrels = root / "ok.qrels"
        valid_qrels.write_text("1 0 d1 1\n")
        subprocess.run([sys.executable, "-m", "pooling", "init", "s.duckdb"], cwd=root, check=True,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        print(f"{'bomb':<11} {'command':<26} {'gzip MB':>8} {'seconds':>8} {'peak MB':>8} "
              f"{'exit':>4}  message")
        for bomb, (head, filler) in bombs.items():
            path = root / f"{bomb}.gz"
            write_gzip_bomb(path, head, filler, size)
            mb = path.stat().st_size / 1e6
            commands = {
                "import qrels": ["import", "qrels", "s.duckdb", str(path), "--format", "trec",
                                 "--name", bomb],
                "eval": ["eval", str(path), str(valid_run)],
                "import runs": ["import", "runs", "s.duckdb", str(path)],
            } if bomb != "same-line" else {
                "import runs": ["import", "runs", "s.duckdb", str(path)],
                "import runs --dedupe first": ["import", "runs", "s.duckdb", str(path),
                                               "--dedupe", "first"],
            }
            for label, args in commands.items():
                seconds, peak, code, first = run(args, root)
                print(f"{bomb:<11} {label:<26} {mb:>8.1f} {seconds:>8.1f} {peak:>8.0f} {code:>4}  "
                      f"{first[:90]}", flush=True)


if __name__ == "__main__":
    main()
