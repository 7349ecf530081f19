"""Scripted judge models for ``judges choose``: OpenAI-compatible loopback servers that answer the correctness
judge's question right, except on a seeded share of items where they answer wrong (each server its own error
rate and seed), reporting usage (and reasoning tokens where asked). The server only reads the prompt's true answer
and given response and compares them: nothing of ragassay's logic is imitated."""

from __future__ import annotations

import hashlib
import json
import re

from servers.openai_chat import OpenAIChatServer, Turn

PROMPT = re.compile(r"##True Answer##: (.*?)\n##Given Response##: (.*?)\n##Judgement##", re.S)


class ErringJudge:
    """Replies Correct when the given response equals the true answer, flipped on a seeded ``error_rate`` share
    of the prompts (the same prompt always gets the same reply, in any process)."""

    def __init__(self, error_rate: float, seed: int, reasoning_tokens: int = 0):
        self.error_rate, self.seed, self.reasoning_tokens = error_rate, seed, reasoning_tokens
        self.server = OpenAIChatServer(default=self.reply)

    def flipped(self, prompt: str) -> bool:
        digest = hashlib.sha256(f"{self.seed}\n{prompt}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.error_rate

    def reply(self, request) -> Turn:
        prompt = self.server.last_user_text(request)
        true_answer, given = PROMPT.search(prompt).groups()
        correct = (given.strip() == true_answer.strip()) != self.flipped(prompt)
        body = {"explanation": "compared the two answers", "judgement": "Correct" if correct else "Incorrect"}
        output = 20 + self.reasoning_tokens
        return Turn(text=json.dumps(body), usage=(200, output, 0), reasoning_tokens=self.reasoning_tokens)
