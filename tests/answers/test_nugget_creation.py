"""Nuggets made by a model judge through the judge backends: a program and a chat server
on 127.0.0.1, iterating over each topic's relevant documents, then labelling importance;
calls recorded, nothing asked twice after a kill and a rerun, people editing after."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from pooling.errors import StoreError
from pooling.judges.model_judges import add_judge
from pooling.judges.nugget_creation import create_nuggets
from pooling.store import Store
from pooling.store import nugget_banks as nb

PROGRAM = textwrap.dedent("""\
    import json, sys
    for line in sys.stdin:
        req = json.loads(line)
        if req["task"] == "create_nuggets":
            nuggets = list(req["nuggets"])
            for seg in req["segments"]:
                fact = " ".join(seg["text"].split()[:5])
                if fact not in nuggets:
                    nuggets.append(fact)
            print(json.dumps({"nuggets": nuggets[:req["max_nuggets"]]}), flush=True)
        else:
            print(json.dumps({"importance": ["vital" if "panel" in n.lower() else "okay"
                                             for n in req["nuggets"]]}), flush=True)
    """)


@pytest.fixture
def store(tmp_path):
    docs = [{"doc_id": f"d{i}", "title": "", "text": text} for i, text in enumerate([
        "Solar panel prices fell sharply after 2010 in most markets.",
        "Rooftop installation usually takes one or two days.",
        "Panel efficiency rose to about twenty percent.",
        "Wind turbines make noise at night.",
    ])]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "topics.tsv").write_text("1\tsolar panels\n2\twind turbines\n")
    (tmp_path / "q.qrels").write_text("1 0 d0 2\n1 0 d1 1\n1 0 d2 1\n1 0 d3 0\n2 0 d3 1\n")
    (tmp_path / "judge.py").write_text(PROGRAM)
    with Store.create(tmp_path / "s.duckdb") as s:
        s.import_topics(tmp_path / "topics.tsv")
        s.import_documents(tmp_path / "docs.jsonl")
        s.import_qrels(tmp_path / "q.qrels", name="q")
        add_judge(s, "maker", "command", {"command": f"{sys.executable} {tmp_path / 'judge.py'}"})
        yield s


def test_a_program_makes_each_topics_nuggets_from_its_relevant_documents(store):
    report = create_nuggets(store, "maker", "auto", window=2)
    assert (report.topics, report.version, report.failures) == (2, "auto-v1", [])
    ours = nb.version_nuggets(store, "auto-v1").to_pylist()
    topic1 = [(r["text"], r["importance"]) for r in ours if r["query_id"] == "1"]
    # two windows over topic 1's relevant documents, most relevant first; vital ones first
    assert topic1 == [("Solar panel prices fell sharply", "vital"),
                      ("Panel efficiency rose to about", "vital"),
                      ("Rooftop installation usually takes one", "okay")]
    assert {r["provenance"] for r in ours} == {"model"}
    calls = store.sql("c", "SELECT query_id, doc_id, status FROM judge_calls ORDER BY called_at").fetchall()
    assert ("1", "create:0-2", "ok") in calls and ("1", "create:2-3", "ok") in calls
    assert ("2", "label:0-1", "ok") in calls
    # people edit what the model proposed; the history keeps both
    nb.reword_nugget(store, "auto", "1", "3", "Installing rooftop panels takes a day or two",
                     made_by="ann")
    kinds = [(e.provenance, e.action) for e in nb.history(store, "auto", "1")]
    assert kinds[-1] == ("person", "reword") and kinds[0] == ("model", "add")


def test_a_rerun_asks_nothing_it_has_an_answer_for(store):
    create_nuggets(store, "maker", "auto", window=2)
    again = create_nuggets(store, "maker", "auto2", window=2)
    assert again.calls == 0 and again.cached > 0
    assert (nb.version_nuggets(store, "auto2-v1").column("text").to_pylist()
            == nb.version_nuggets(store, "auto-v1").column("text").to_pylist())


def test_a_bank_with_nuggets_is_refused_unless_replacing(store):
    nb.add_nugget(store, "auto", "1", "typed by ann", made_by="ann")
    with pytest.raises(StoreError, match="has nuggets already"):
        create_nuggets(store, "maker", "auto")
    create_nuggets(store, "maker", "auto", replace=True)
    assert "typed by ann" not in nb.current_nuggets(store, "auto", "1").column("text").to_pylist()
    assert nb.history(store, "auto", "1")[0].text == "typed by ann"


def test_a_judge_that_only_grades_cannot_make_nuggets(store):
    add_judge(store, "overlap", "lexical")
    with pytest.raises(StoreError, match="answers grades only"):
        create_nuggets(store, "overlap", "b")


CHAT = textwrap.dedent("""\
    import json, re, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a):
            pass
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = body["messages"][-1]["content"]
            if "Nuggets so far" in prompt:
                docs = re.findall(r"^\\[\\d+\\] (.*)$", prompt, re.M)
                answer = "```json\\n" + json.dumps([" ".join(d.split()[:4]) for d in docs]) + "\\n```"
            else:
                listed = json.loads(re.search(r"^Nuggets: (.*)$", prompt, re.M).group(1))
                answer = json.dumps(["vital"] + ["okay"] * (len(listed) - 1))
            data = json.dumps({"choices": [{"message": {"content": answer}}],
                               "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 7}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """)


def test_a_chat_model_makes_nuggets_with_its_tokens_recorded(store, tmp_path):
    (tmp_path / "chat.py").write_text(CHAT)
    server = subprocess.Popen([sys.executable, str(tmp_path / "chat.py")], stdout=subprocess.PIPE,
                              text=True)
    try:
        port = int(server.stdout.readline())
        add_judge(store, "chat", "openai", {"base_url": f"http://127.0.0.1:{port}/v1",
                                            "model": "m", "logprobs": False})
        report = create_nuggets(store, "chat", "chat", window=10)
    finally:
        server.kill()
        server.wait()
        server.stdout.close()
    assert report.failures == [] and report.completion_tokens == 7 * report.calls
    got = nb.version_nuggets(store, report.version).to_pylist()
    assert [(r["text"], r["importance"]) for r in got if r["query_id"] == "1"] == [
        ("Solar panel prices fell", "vital"), ("Rooftop installation usually takes", "okay"),
        ("Panel efficiency rose to", "okay")]
