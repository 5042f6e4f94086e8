"""The judging server's in-memory state and group-commit writer, on a real store: a client that
gives up does not stop the writer or withdraw its judgment, duplicates in one commit are
stored once, and the pages' state follows every commit."""

from __future__ import annotations

from concurrent.futures import Future

from conftest import build_campaign

from pooling.judging.judgments import Judgment
from pooling.store import Store
from pooling.web.gate import StoreGate
from pooling.web.live import LiveCampaign


def judgment(doc: str, sid: str, grade: int = 1) -> Judgment:
    return Judgment("r1", "ann", "1", doc, grade, submission_id=sid)


def test_a_client_giving_up_neither_stops_the_writer_nor_withdraws_its_judgment(tmp_path):
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as store:
        live = LiveCampaign(StoreGate(store))
        try:
            page = live.judging_page("ann", "assessor", "r1", "1")  # loads the cached history
            first = page.doc_id
            abandoned: Future = Future()
            abandoned.cancel()  # the waiting request was cancelled (its client went away)
            live.writer._write([(judgment(first, "given-up-0000000001"), abandoned)])
            # The writer still answers, and the pages know the abandoned judgment was stored.
            assert live.writer.submit(judgment("d9-none", "after-0000000000001")).seq is not None
            assert live.judging_page("ann", "assessor", "r1", "1").doc_id != first
            again = live.judge("ann", "assessor", "r1", "1", first, grade=1,
                               submission_id="given-up-0000000001")
            assert again.duplicate
        finally:
            live.close()
        rows = store.con.execute("SELECT submission_id FROM judgments ORDER BY seq").fetchall()
        assert rows == [("given-up-0000000001",), ("after-0000000000001",)]


def test_the_same_submission_twice_in_one_commit_is_stored_once(tmp_path):
    campaign = build_campaign(tmp_path)
    with Store(campaign.path) as store:
        live = LiveCampaign(StoreGate(store))
        try:
            a, b = Future(), Future()
            live.writer._write([(judgment("d1", "double-click-000001"), a),
                                (judgment("d1", "double-click-000001"), b)])
            assert [a.result().seq is not None, b.result().seq is not None] == [True, False]
        finally:
            live.close()
        assert store.one("n", "SELECT count(*) FROM judgments") == (1,)
