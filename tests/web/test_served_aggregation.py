"""An aggregation rule derives a version on a served store: its posteriors and worker
matrices travel to the server with the version's rows, in the same transaction."""

from __future__ import annotations

import pytest
from test_served_store import assessor, judge, pooling

from pooling.store import Store

pytestmark = pytest.mark.slow


def test_dawid_skene_derives_through_the_server_while_assessors_judge(campaign, server):
    ann, csrf = assessor(server, campaign.tokens["ann"])
    judge(ann, csrf, "d1", 1)
    judge(ann, csrf, "d2", 0)
    done = pooling("qrels", "derive", campaign.path, "--round", "r1", "--rule", "dawid-skene",
                   "--name", "ds")
    assert "qrels version ds: 2 judgments on 1 topics (rule dawid-skene)" in done.stdout
    assert "ann" in pooling("qrels", "workers", campaign.path, "ds").stdout
    judge(ann, csrf, "d3", 1)  # the pages keep serving after the derive
    server.stop()
    with Store(campaign.path, read_only=True) as s:
        assert s.one("n", "SELECT count(*) FROM qrels_posteriors WHERE version = 'ds'") == (2,)
        assert s.one("n", "SELECT count(DISTINCT assessor_id) FROM qrels_workers") == (1,)
        assert s.one("n", "SELECT count(*) FROM judgments") == (3,)
