"""A page whose client went away stops being made, and SIGTERM stops a server in the middle
of making one: a real `pooling serve` process whose round page is the real page's work made
over and over without end (only giving the read up can stop it), its CPU time read from
/proc while a raw socket asks for the page and then leaves."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import REPO_ROOT, build_campaign, free_port

from pooling.store.core import SERVER_FILE_SUFFIX

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="reads a process's CPU time from /proc")

# `pooling serve`, its round page replaced by the real one made again and again.
ENDLESS_PAGE_SERVER = """
import sys
from pooling.web import campaign
from pooling.web.server import serve

made_once = campaign.round_detail

def made_without_end(store, round_id):
    while True:
        made_once(store, round_id)

campaign.round_detail = made_without_end
serve(sys.argv[1], port=int(sys.argv[2]))
"""
DEADLINE = 120.0  # generous: the machine may be loaded; no bound here is a timing target


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} within {DEADLINE:.0f} s")
        time.sleep(0.2)


def busy(pid: int, by: float = 1.0):
    """A condition: the process has used `by` more CPU seconds than when this was made."""
    start = cpu_seconds(pid)
    return lambda: cpu_seconds(pid) - start >= by


def idle(pid: int, window: float = 2.0, most: float = 0.2) -> bool:
    """Whether the process uses almost no CPU over `window` seconds."""
    before = cpu_seconds(pid)
    time.sleep(window)  # a measuring window, not synchronisation
    return cpu_seconds(pid) - before < most


@pytest.fixture
def endless_server(tmp_path):
    campaign = build_campaign(tmp_path)
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "w") as fh:
        process = subprocess.Popen([sys.executable, "-c", ENDLESS_PAGE_SERVER,
                                    str(campaign.path), str(port)], cwd=REPO_ROOT,
                                   stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            pytest.fail(f"the server exited: {log.read_text()}")
        try:
            return httpx.get(url + "/login", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(answers, "the server did not start")
    client = httpx.Client(base_url=url, timeout=30)
    client.get("/login", params={"token": campaign.tokens["org"]})
    yield process, client, port, campaign.path
    client.close()
    if process.poll() is None:
        process.kill()
        process.wait()


def ask_for_round_page(port: int, client: httpx.Client) -> socket.socket:
    """A raw connection that has asked for the round page and not read the answer."""
    cookies = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"GET /organiser/rounds/r1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Cookie: {cookies}\r\n\r\n".encode())
    return sock


def test_a_page_whose_client_left_stops_using_the_cpu(endless_server):
    process, client, port, _ = endless_server
    sock = ask_for_round_page(port, client)
    wait_for(busy(process.pid), "the page was not being made")
    sock.close()
    wait_for(lambda: idle(process.pid), "the server went on making the page nobody waits for")
    assert client.get("/organiser").status_code == 200  # and it still serves


def test_sigterm_stops_a_server_in_the_middle_of_a_page(endless_server):
    process, client, port, path = endless_server
    sock = ask_for_round_page(port, client)
    wait_for(busy(process.pid), "the page was not being made")
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"SIGTERM did not stop the server within {DEADLINE:.0f} s")
    finally:
        sock.close()
    assert not path.with_name(path.name + SERVER_FILE_SUFFIX).exists()  # it shut down cleanly
