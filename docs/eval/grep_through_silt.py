#!/usr/bin/env python3
"""grep recall@10 through the `silt grep` command, for judges that only the
host can reach (a model server over HTTP): the same cases, trees, split and
scoring as crates/silt-embed/examples/grep_eval.rs, which calls the engine
natively and extracts the trees (run it once first).

    python3 docs/eval/grep_through_silt.py --silt target/release/silt \
        --judge openai [--held-out-only] [--trees DIR] [--json out.json]

Every fourth case (index 3, 7, 11, 15, 19) is held out, as in grep_eval.rs.
Prints one line per case and a summary; exits non-zero if a call fails.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# Where a case has several truth files, the one its note names (as PRIMARY
# in grep_eval.rs).
PRIMARY = {
    "pr-checks-stale-duplicates": "pkg/cmd/pr/checks/checks.go",
    "pr-merge-no-commits-panic": "pkg/cmd/pr/merge/merge.go",
    "issue-develop-missing-base": "api/queries_branch_issue_reference.go",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--silt", required=True)
    ap.add_argument("--judge", required=True)
    ap.add_argument("--cases", default="docs/eval/grep-cases.json")
    ap.add_argument("--trees", default=os.path.join(tempfile.gettempdir(), "silt-grep-eval"))
    ap.add_argument("--json")
    ap.add_argument("--held-out-only", action="store_true",
                    help="only the five held-out cases (a slow judge)")
    args = ap.parse_args()
    cases = json.load(open(args.cases))["cases"]
    rows = []
    for i, case in enumerate(cases):
        if args.held_out_only and i % 4 != 3:
            continue
        tree = os.path.join(args.trees, case["parent"])
        if not os.path.isdir(tree):
            sys.exit(f"{tree} is missing: run crates/silt-embed/examples/grep_eval.rs first")
        started = time.monotonic()
        out = subprocess.run(
            [args.silt, "grep", "--judge", args.judge, "--json", "--top-k", "10",
             "--threshold", "0", case["question"], tree],
            capture_output=True, text=True,
        )
        seconds = time.monotonic() - started
        if out.returncode != 0:
            sys.exit(f"{case['id']}: silt grep failed: {out.stderr.strip()}")
        top = [r["path"] for r in json.loads(out.stdout)["results"]][:10]
        truth = case["truth"]
        primary = PRIMARY.get(case["id"], truth[0])
        recall = sum(t in top for t in truth) / len(truth)
        row = {"id": case["id"], "held_out": i % 4 == 3, "recall_at_10": recall,
               "primary_in_top_10": primary in top, "seconds": round(seconds, 1), "top": top}
        rows.append(row)
        print(f"{case['id']:45} R@10 {recall:.2f} primary {'yes' if primary in top else 'no '}"
              f" {seconds:6.1f} s", flush=True)

    def summary(part):
        if not part:
            return None
        return {
            "cases": len(part),
            "recall_at_10": round(sum(r["recall_at_10"] for r in part) / len(part), 3),
            "primary_in_top_10": sum(r["primary_in_top_10"] for r in part),
        }

    result = {
        "judge": args.judge,
        "all": summary(rows),
        "development": summary([r for r in rows if not r["held_out"]]),
        "held_out": summary([r for r in rows if r["held_out"]]),
        "seconds": round(sum(r["seconds"] for r in rows), 1),
        "cases": rows,
    }
    print(json.dumps({k: v for k, v in result.items() if k != "cases"}))
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
