"""The pairwise method written straight from `pairwise-spec.md` (sections 2, 3
and 5), independently of pfgen_fast.judge, for comparing verdicts and measures.

A reply is a list of (token, [(alternative, logprob), ...]) pairs."""

from __future__ import annotations

import math

Reply = list[tuple[str, list[tuple[str, float]]]]


def spec_order(reply: Reply, reasoning: bool) -> tuple[str | None, dict[str, float]]:
    """(generated letter or None, p("A"), p("B"), p("C") at the verdict position)."""
    position = None
    if reply and not reasoning:
        position = 0
    elif reasoning:
        for i, (token, _) in enumerate(reply):
            if token.strip() in ("A", "B", "C"):
                position = i  # the last one wins
    p = {"A": 0.0, "B": 0.0, "C": 0.0}
    if position is None:
        return None, p
    token, alternatives = reply[position]
    for alternative, logprob in alternatives:
        key = alternative.strip()
        if key in p:
            p[key] = p[key] + math.exp(logprob)
    generated = token.strip()
    return (generated if generated in p else None), p


def spec_pair(
    order1: tuple[str | None, dict[str, float]], order2: tuple[str | None, dict[str, float]]
) -> dict[str, object]:
    """Proposed, BS1, BS2 and consistency of one item (order 2 shows LLM B first)."""
    letter1, p1 = order1
    letter2, p2 = order2
    # order 2 in model terms: its "A" is LLM B winning, its "B" LLM A winning
    q2 = {"A": p2["B"], "B": p2["A"], "C": p2["C"]}
    mean = {x: (p1[x] + q2[x]) / 2 for x in "ABC"}
    top = max(mean.values())
    winners = [x for x in "ABC" if mean[x] == top]
    if top == 0.0:
        proposed = None
    elif len(winners) == 1:
        proposed = winners[0]
    else:
        proposed = "C"
    v2 = {"A": "B", "B": "A", "C": "C"}.get(letter2) if letter2 else None
    agree = letter1 is not None and letter1 == v2
    return {
        "proposed": proposed,
        "bs1": letter1 if agree else None,
        "bs2": letter1 if agree else "C",
        "consistent": agree,
    }


def spec_concordance(verdicts: list[str | None], labels: list[list[str]]) -> float:
    """CR_j per annotator j (eq. 1), then their mean."""
    raters = len(labels[0])
    rates = []
    for j in range(raters):
        hits = [1 if labels[k][j] == verdicts[k] else 0 for k in range(len(verdicts))]
        rates.append(sum(hits) / len(hits))
    return sum(rates) / raters


def spec_fleiss(labels: list[list[str]]) -> float | None:
    """Fleiss' kappa as the spec writes it (P_i, P-bar, p_c, P-bar_e)."""
    n = len(labels[0])
    big_n = len(labels)
    table = [[row.count(c) for c in "ABC"] for row in labels]
    p_i = [sum(x * (x - 1) for x in counts) / (n * (n - 1)) for counts in table]
    p_bar = sum(p_i) / big_n
    p_c = [sum(table[i][c] for i in range(big_n)) / (big_n * n) for c in range(3)]
    p_e = sum(x * x for x in p_c)
    if p_e == 1:
        return None
    return (p_bar - p_e) / (1 - p_e)
