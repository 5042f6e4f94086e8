"""Running a `pooling` command in a pseudo-terminal of a given width, as a person sees it:
rich draws tables to fit and progress bars only when its output is a terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_terminal(args: list[str], columns: int) -> str:
    """The command's output (stdout and stderr) in a pseudo-terminal `columns` wide."""
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE",
                                                            "NO_COLOR")}
    env["COLUMNS"] = str(columns)
    proc = subprocess.Popen([sys.executable, "-m", "pooling", *args], stdin=subprocess.DEVNULL,
                            stdout=secondary, stderr=secondary, env=env)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 1 << 16)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert proc.wait(timeout=120) == 0, b"".join(chunks).decode(errors="replace")
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")
