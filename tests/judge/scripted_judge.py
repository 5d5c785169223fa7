"""A deterministic judge, a responder for `pfgen_fast.testing.serve`: it reads which answer the
prompt shows as assistant A and which as B, and replies with the letter and top log-probabilities a
script gives that order (or, for pairs the script does not name, ones derived from the texts).
Result-only prompts get one token; reason-then-result prompts get a reason holding a lone
letter, then the verdict letter. Criteria prompts get a short list of criteria."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from pfgen_fast.testing import Reply

ANSWER = re.compile(r"\[アシスタント([AB])の答えの開始\](.*?)\[アシスタント\1の答えの終了\]", re.S)
CRITERIA_TEXT = "・模範回答と内容が合っているか\n・簡潔か"

# (generated letter, {letter: probability}) for one presentation order; a letter missing from
# the mapping is missing from the top alternatives.
OrderScript = tuple[str, dict[str, float]]


def derived_order(first: str, second: str) -> OrderScript:
    """For unscripted pairs: a fixed function of the two texts, biased towards the first."""
    digest = hashlib.sha256(f"{first}\x00{second}".encode()).digest()
    a, b, c = (1 + digest[i] % 50 for i in range(3))
    a += 20  # position bias
    total = a + b + c + 10
    probabilities = {"A": a / total, "B": b / total, "C": c / total}
    return max(probabilities, key=lambda x: probabilities[x]), probabilities


def top_list(probabilities: dict[str, float], size: int = 20) -> list[tuple[str, float]]:
    """The letters given, then other tokens, `size` alternatives in all (as asked for)."""
    tops = [(letter, math.log(p)) for letter, p in probabilities.items() if p > 0]
    tops += [("同", -6.0), ("回答", -7.5)]
    tops += [(f"語{n}", -8.0 - n / 10) for n in range(size - len(tops))]
    return sorted(tops, key=lambda pair: -pair[1])[:size]


@dataclass
class ScriptedJudge:
    """`script[(first shown, second shown)]` decides that order's reply; `logprobs=False`
    plays a server that ignores the logprobs request; a prompt holding `fail_on` gets HTTP 500;
    `alternatives`: the top log-probabilities at the verdict token. `judged` counts verdict
    requests."""

    script: dict[tuple[str, str], OrderScript] = field(default_factory=dict)
    logprobs: bool = True
    delay: float = 0.0
    fail_on: str | None = None
    alternatives: int = 20
    judged: int = 0
    criteria: int = 0

    def order(self, first: str, second: str) -> OrderScript:
        return self.script.get((first, second)) or derived_order(first, second)

    def __call__(self, path: str, request: dict[str, Any]) -> Reply:
        content = request["messages"][-1]["content"]
        if self.fail_on is not None and self.fail_on in content:
            return Reply(status=500, error="judge crashed")
        answers = dict((m.group(1), m.group(2)) for m in ANSWER.finditer(content))
        if "A" not in answers:
            self.criteria += 1
            return Reply(text=CRITERIA_TEXT, delay=self.delay)
        self.judged += 1
        letter, probabilities = self.order(answers["A"], answers["B"])
        chosen = math.log(probabilities[letter]) if probabilities.get(letter) else -8.0
        verdict = (letter, chosen, top_list(probabilities, self.alternatives))
        if "評価理由を提供した後" in content:
            tokens = [
                ("理由", -0.2, [("理由", -0.2)]),
                ("：", -0.1, [("：", -0.1)]),
                ("A", -0.3, [("A", -0.3), ("B", -1.5), ("C", -2.5)]),  # a lone letter
                ("は簡潔。", -0.4, [("は簡潔。", -0.4)]),
                ("\n", -0.1, [("\n", -0.1)]),
                verdict,
            ]
        else:
            tokens = [verdict]
        text = "".join(token for token, _, _ in tokens)
        return Reply(
            text=text,
            logprobs=tokens if self.logprobs else None,
            delay=self.delay,
            usage={
                "prompt_tokens": 100,
                "completion_tokens": len(tokens),
                "total_tokens": 100 + len(tokens),
            },
        )

    def reference_reply(self, first: str, second: str, reasoning: bool) -> list[Any]:
        """The reply this judge sends, as judge_reference reads it."""
        letter, probabilities = self.order(first, second)
        verdict = (letter, top_list(probabilities))
        if not reasoning:
            return [verdict]
        return [("理由", []), ("A", [("A", -0.3), ("B", -1.5), ("C", -2.5)]), verdict]
