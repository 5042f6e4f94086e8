"""A judge program of known quality for the jury tests: it answers the true grade of each pair
(read from --truth, a qrels file) except with probability --noise, when it answers another
grade of 0..--max-grade, drawn at random. The draw is seeded on (--seed, query, document,
sample), so a pair gets the same answer however often and in whatever order it is asked, and
each sample of a judge (the request's "sample") answers on its own. --log FILE appends
'sample query_id doc_id' per request; --delay waits that many seconds before each reply;
--label is ignored (judges that share --seed and --noise err together whatever their label)."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--truth", required=True)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--max-grade", type=int, default=1)
    parser.add_argument("--log")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--label", help="ignored: two judges of one program under two names")
    args = parser.parse_args()
    truth = {}
    with open(args.truth) as lines:
        for line in lines:
            q, _, d, g = line.split()
            truth[(q, d)] = int(g)
    for line in sys.stdin:
        request = json.loads(line)
        q, d, sample = request["query_id"], request["doc_id"], request.get("sample", 1)
        if args.log:
            with open(args.log, "a") as log:
                log.write(f"{sample} {q} {d}\n")
        rng = random.Random(f"{args.seed}:{q}:{d}:{sample}")
        grade = truth.get((q, d), 0)
        if rng.random() < args.noise:
            grade = rng.choice([g for g in range(args.max_grade + 1) if g != grade])
        time.sleep(args.delay)
        print(json.dumps({"grade": grade}), flush=True)


if __name__ == "__main__":
    main()
