"""`pooling serve` behind a reverse proxy: a path prefix (--root-path), forwarded headers
believed from trusted proxies only, and the session cookie Secure when the scheme is https.

The proxy is a small real HTTP proxy the test runs, doing what nginx's
`location /judging/ { proxy_pass http://127.0.0.1:PORT; proxy_set_header X-Forwarded-Proto https; }`
does: the prefix kept, the scheme and client address forwarded.
"""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from conftest import REPO_ROOT, start_server

pytestmark = pytest.mark.slow


def proxy_to(port: int) -> ThreadingHTTPServer:
    class Forward(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            headers.update({"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9",
                            "Host": f"127.0.0.1:{port}"})
            upstream = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            answer = upstream.getresponse()
            data = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            upstream.close()

        do_GET = do_POST = _forward

        def log_message(self, *args) -> None:
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    return proxy


def test_behind_a_proxy_with_a_prefix_links_redirects_and_cookies_are_right(campaign):
    server = start_server(campaign.path, extra_args=("--root-path", "/judging", "--forwarded-allow-ips",
                                                     "127.0.0.1"), probe="judging/login")
    proxy = proxy_to(int(server.url.rsplit(":", 1)[1].strip("/")))
    front = f"http://127.0.0.1:{proxy.server_address[1]}"
    try:
        client = httpx.Client(base_url=front, follow_redirects=False, timeout=10)
        login = client.get("/judging/login")
        assert login.status_code == 200
        assert 'href="/judging/static/app.css"' in login.text and 'action="/judging/login"' in login.text
        assert client.get("/judging/static/app.css").status_code == 200
        entered = client.get("/judging/login", params={"token": campaign.tokens["ann"]})
        assert entered.status_code == 303 and entered.headers["location"] == "/judging/"
        assert "secure" in entered.headers["set-cookie"].lower()
        # The browser talks https to the proxy and sends the Secure cookie back; this test's
        # client talks plain http to it, so it sends the cookie itself.
        cookie = entered.headers["set-cookie"].split(";", 1)[0]
        client = httpx.Client(base_url=front, follow_redirects=False, timeout=10, headers={"Cookie": cookie})
        home = client.get("/judging/")
        assert 'href="/judging/rounds/r1/topics/1"' in home.text
        page = client.get("/judging/rounds/r1/topics/1")
        csrf = re.search(r'name="csrf" value="([^"]+)"', home.text).group(1)
        doc = re.search(r'data-doc-id="([^"]+)"', page.text).group(1)
        assert 'data-judge-url="/judging/rounds/r1/topics/1/judgments"' in page.text
        judged = client.post("/judging/rounds/r1/topics/1/judgments", headers={"X-CSRF-Token": csrf},
                             json={"doc_id": doc, "grade": 1, "submission_id": "behind-a-proxy-0001"})
        assert judged.status_code == 200 and judged.json()["next"].startswith("/judging/rounds/r1/")
        # A proxy that strips the prefix reaches the same pages.
        assert httpx.get(server.url + "login").status_code == 200
        # The organiser's CLI finds the server and its prefix in STORE.server.json.
        done = subprocess.run([sys.executable, "-m", "pooling", "info", str(campaign.path)],
                              capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
        assert done.returncode == 0, done.stderr
    finally:
        proxy.shutdown()
        server.stop()


def test_forwarded_headers_from_untrusted_peers_change_nothing(campaign):
    server = start_server(campaign.path)  # no --forwarded-allow-ips: nobody is trusted
    try:
        forged = httpx.get(server.url + "login", params={"token": campaign.tokens["ann"]},
                           headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "10.9.8.7"},
                           follow_redirects=False)
        assert forged.status_code == 303
        assert "secure" not in forged.headers["set-cookie"].lower()  # plain http stays usable
        assert forged.headers["location"] == "/"
    finally:
        server.stop()


def test_serve_help_says_how_to_run_behind_a_proxy():
    done = subprocess.run([sys.executable, "-m", "pooling", "serve", "--help"], capture_output=True,
                          text=True, timeout=60, cwd=REPO_ROOT, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert "--root-path" in done.stdout and "--forwarded-allow-ips" in done.stdout
    assert "reverse proxy" in done.stdout and "proxy_pass" in done.stdout
