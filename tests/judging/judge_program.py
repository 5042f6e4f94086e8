"""A judge program for the `command` backend tests: reads JSON requests on stdin, one per line,
and replies {"grade": len(doc_id) % 4, "probability": grade / 4, "rationale": ...} on stdout.

Options pick a misbehaviour for one doc id: --crash-on, --garbage-on, --hang-on,
--wrong-type-on, --bad-probability-on, --other-doc-on; --deaf never reads stdin. --starts FILE
appends a line per start.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    for option in ("crash-on", "garbage-on", "hang-on", "wrong-type-on", "bad-probability-on",
                   "other-doc-on"):
        parser.add_argument("--" + option, action="append", default=[])
    parser.add_argument("--starts")
    parser.add_argument("--deaf", action="store_true", help="never read stdin")
    args = parser.parse_args()
    if args.starts:
        with open(args.starts, "a") as starts:
            starts.write("started\n")
    print("judge program ready", file=sys.stderr, flush=True)
    if args.deaf:
        time.sleep(120)
    for line in sys.stdin:
        request = json.loads(line)
        doc_id = request["doc_id"]
        grade = len(doc_id) % 4
        reply = {"grade": grade, "probability": grade / 4,
                 "rationale": f"{request['title']} / {request['doc_text']}"}
        if doc_id in args.crash_on:
            print(f"ValueError: cannot judge {doc_id}", file=sys.stderr, flush=True)
            sys.exit(3)
        if doc_id in args.garbage_on:
            print("loading weights... 100%", flush=True)
            continue
        if doc_id in args.hang_on:
            time.sleep(120)
        if doc_id in args.wrong_type_on:
            reply["grade"] = "high"
        if doc_id in args.bad_probability_on:
            reply["probability"] = 7
        if doc_id in args.other_doc_on:
            reply["doc_id"] = "someone-else"
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
