"""A judge served on loopback as an OpenAI-compatible endpoint, grading from the prompt alone.

Reached as ``openai-api/<service>/<model>`` with ``<SERVICE>_BASE_URL`` and
``<SERVICE>_API_KEY`` set (inspect_ai reads both). It reads the question, the
reference answer and the agent's answer (or the cited content) out of the judge
prompt's own tags and grades by a fixed rule: correct when some word of four
letters or more of the gold is in the answer; attribution 1 unless a citation is
shown as NOT FOUND. It replies in the JSON shape the prompt's closing example
shows, keys in that order, so a template that asks for the reasoning before the
score gets it first. ``mode`` ``flip`` reverses the grade of about half the
questions (:func:`flipped`); ``fail_after`` makes every later request answer 500.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from agents.fake_openai import FakeOpenAI

_QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.S)
_GOLD = re.compile(r"<reference_answer>\n(.*?)\n</reference_answer>", re.S)
_ANSWER = re.compile(r"<agent_answer>\n(.*?)\n</agent_answer>", re.S)
_CITED = re.compile(r"<cited_content>\n(.*?)\n</cited_content>", re.S)


def flipped(question: str) -> bool:
    """Whether the flipping judge reverses its grade of ``question`` (about half of them)."""
    return int(hashlib.sha256(question.encode()).hexdigest(), 16) % 2 == 0


def correct(gold: str, answer: str) -> int:
    """The fake judge's correctness rule: some word of four letters or more of the gold."""
    words = {w for w in re.findall(r"[a-z0-9]+", gold.lower()) if len(w) >= 4}
    return int(bool(words & set(re.findall(r"[a-z0-9]+", answer.lower()))))


def _text(message: dict[str, object]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(str(part.get("text", "")) for part in content)


_EXAMPLE = re.compile(r'\{"[^{}]*\}\s*$')
_KEY = re.compile(r'"(\w+)":')


def reply_keys(prompt: str) -> list[str]:
    """The keys of the JSON object the prompt's closing example asks for, in its order."""
    example = _EXAMPLE.search(prompt.rstrip())
    assert example is not None, prompt[-300:]
    return _KEY.findall(example.group(0))


def _shaped(prompt: str, scores: dict[str, object]) -> dict[str, object]:
    keys = reply_keys(prompt)
    words = {"reasoning": "fake reasoning", "reason": "fake"}
    assert set(scores) <= set(keys), (keys, scores)
    return {k: scores[k] if k in scores else words[k] for k in keys}


def grade(prompt: str, flip: bool) -> dict[str, object]:
    """The reply to one judge prompt, computed from its content alone."""
    question = _QUESTION.search(prompt)
    assert question is not None, prompt[:200]
    cited = _CITED.search(prompt)
    if cited is not None:
        found = "NOT FOUND" not in cited.group(1) and "cites nothing" not in cited.group(1)
        return _shaped(prompt, {"citation_correctness": 1 if found else 0,
                                "citation_relevance": 0.5, "aggregation": 1})
    gold, answer = _GOLD.search(prompt), _ANSWER.search(prompt)
    assert gold is not None and answer is not None
    score = correct(gold.group(1), answer.group(1))
    if flip and flipped(question.group(1)):
        score = 1 - score
    return _shaped(prompt, {"correct": score})


class _JudgeHandler(BaseHTTPRequestHandler):
    server: Any  # the fake's server; its ``fake`` is the FakeJudge

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        fake: FakeJudge = self.server.fake
        with fake.lock:
            fake.requests += 1
            failing = fake.fail_after is not None and fake.requests > fake.fail_after
        if failing:
            self._send(500, {"error": {"message": "judge backend down", "type": "server_error"}})
            return
        reply = grade(_text(body["messages"][0]), fake.mode == "flip")
        self._send(200, {
            "id": "j1", "object": "chat.completion", "created": 0, "model": "judge",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(reply)}}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312}})

    def _send(self, status: int, data: dict[str, object]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class FakeJudge(FakeOpenAI):
    """The loopback server of tests/agents answering as a judge: ``mode`` is ``same``
    or ``flip``; ``fail_after`` makes every request after that many answer 500."""

    def __init__(self) -> None:
        super().__init__(_JudgeHandler)
        self.mode = "same"
        self.fail_after: int | None = None
        self.lock = threading.Lock()


