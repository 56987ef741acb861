#!/usr/bin/env python3
"""A judge that is always right, for grep's pipeline ceiling: a loopback
OpenAI-compatible server answering `silt grep`'s relevance prompts from
the truth files of docs/eval/grep-cases.json, as tests/src/loopback_model.rs
answers the ledger's and verify's (docs/JUDGES.md, "Pipeline ceiling").

    python3 docs/eval/loopback_grep_judge.py --port 18790 &
    SILT_MODEL_URL=http://127.0.0.1:18790 SILT_MODEL_ENDPOINT=chat \
    SILT_ANSWER_CACHE=0 python3 docs/eval/grep_through_silt.py \
        --silt target/release/silt --judge openai

A unit (a file's preview, or a span `path:start-end`) is relevant when its
path is one of the case's truth files; the case is the one whose question
the prompt's yes option quotes. Anything else gets even odds.
"""

import argparse
import json
import math
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SURE = 0.98


def options(user):
    """The lettered options of a closed-question prompt, in order."""
    block = user.split("Options:\n", 1)[1] if "Options:\n" in user else ""
    out = []
    for line in block.split("\n"):
        if not line.strip():
            break
        letter, _, text = line.partition(". ")
        if len(letter) == 1 and letter.isupper():
            out.append((letter, text))
    return out


def answer(cases, user):
    """The right letter, or None."""
    opts = options(user)
    yes = next((l for l, t in opts if t.startswith("Yes:")), None)
    no = next((l for l, t in opts if t.startswith("No:")), None)
    item = user.split('Item:\n"""\n', 1)[-1]
    path = item.split("\n", 1)[0].split(":", 1)[0].strip()
    yes_text = next((t for _, t in opts if t.startswith("Yes:")), "")
    for case in cases:
        if case["question"].strip() in yes_text:
            return yes if path in case["truth"] else no
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18790)
    ap.add_argument("--cases", default="docs/eval/grep-cases.json")
    args = ap.parse_args()
    cases = json.load(open(args.cases))["cases"]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def body(self):
            if self.headers.get("Content-Length") is not None:
                return self.rfile.read(int(self.headers["Content-Length"]))
            # silt's wasi:http client streams the body chunked
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()

        def do_POST(self):
            body = json.loads(self.body())
            user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
            letters = [l for l, _ in options(user)] or ["A", "B"]
            right = answer(cases, user)
            n = len(letters)

            def p(l):
                if right is None:
                    return 1.0 / n
                return SURE if l == right else (1.0 - SURE) / (n - 1)

            top = [{"token": l, "logprob": math.log(p(l))} for l in letters]
            said = right or letters[0]
            reply = {
                "object": "chat.completion",
                "model": "loopback-grep",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": said},
                    "finish_reason": "length",
                    "logprobs": {"content": [{"token": said, "logprob": math.log(p(said)),
                                              "top_logprobs": top}]},
                }],
                "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": 1},
            }
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
