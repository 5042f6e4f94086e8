"""A small OpenAI-compatible chat-completions server for the judge tests.

Run: python chat_server.py; it prints its port on the first line of stdout. It answers
deterministically from the prompt: the grade is len(doc_id) % 4 for the `doc_id=<id>` the
prompt contains, and `mode=<mode>` in the prompt picks a behaviour (see `answer`).
`delay=<seconds>` makes it wait before answering. GET /stats reports what it saw: the most
requests in flight at once, requests and their times per doc id, the Authorization headers,
and the last prompt per doc id.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATS: dict = {"in_flight": 0, "max_in_flight": 0, "requests": {}, "times": {},
               "authorization": [], "prompts": {}, "logprobs_asked": {}}


def field(name: str, text: str, default: str) -> str:
    match = re.search(name + r"=(\S+)", text)
    return match.group(1) if match else default


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep stderr quiet
        pass

    def send(self, status: int, body: bytes | str, headers: dict | None = None) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        with LOCK:
            self.send(200, json.dumps(STATS))

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        doc_id = field("doc_id", prompt, "?")
        with LOCK:
            STATS["in_flight"] += 1
            STATS["max_in_flight"] = max(STATS["max_in_flight"], STATS["in_flight"])
            STATS["requests"][doc_id] = count = STATS["requests"].get(doc_id, 0) + 1
            STATS["times"].setdefault(doc_id, []).append(time.monotonic())
            STATS["prompts"][doc_id] = prompt
            STATS["logprobs_asked"][doc_id] = bool(body.get("logprobs"))
            auth = self.headers.get("Authorization")
            if auth not in STATS["authorization"]:
                STATS["authorization"].append(auth)
        try:
            time.sleep(float(field("delay", prompt, "0")))
            self.answer(body, prompt, doc_id, field("mode", prompt, "ok"), count)
        finally:
            with LOCK:
                STATS["in_flight"] -= 1

    def answer(self, body: dict, prompt: str, doc_id: str, mode: str, count: int) -> None:
        grade = len(doc_id) % 4
        if mode == "429" and count == 1:
            return self.send(429, '{"error": {"message": "slow down"}}', {"Retry-After": "1"})
        if mode == "500once" and count == 1:
            return self.send(500, '{"error": {"message": "warming up"}}')
        if mode == "500always":
            return self.send(500, '{"error": {"message": "model crashed"}}')
        if mode == "hang":
            time.sleep(120)
        if mode == "echo401":  # a careless server that echoes the credentials it was sent
            return self.send(401, json.dumps({"error": {
                "message": f"bad key {self.headers.get('Authorization')}"}}))
        if mode == "notjson":
            return self.send(200, "<html>proxy login</html>")
        if mode == "nologprobs" and body.get("logprobs"):
            return self.send(400, '{"error": {"message": "logprobs are not supported"}}')
        content = (f"The passage is about the query.\n##final score: {grade}" if mode != "malformed"
                   else "I think it is quite relevant, really.")
        choice: dict = {"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content}}
        if body.get("logprobs") and mode != "malformed":
            # the grade token weighed against the next grade up and a non-grade token
            top = [{"token": str(grade), "logprob": math.log(0.7)},
                   {"token": str((grade + 1) % 4), "logprob": math.log(0.2)},
                   {"token": "x", "logprob": math.log(0.1)}][: body.get("top_logprobs", 0)]
            choice["logprobs"] = {"content": [
                {"token": "##final score:", "logprob": -0.01, "top_logprobs": []},
                {"token": " " + str(grade), "logprob": math.log(0.7), "top_logprobs": top}]}
        self.send(200, json.dumps({
            "id": "x", "object": "chat.completion", "model": body["model"],
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 9,
                      "total_tokens": len(prompt.split()) + 9}}))


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
