"""The registry: metric name → what it needs from each document, how it scores a batch and how
it aggregates, as llm-jp-eval-mm's scorers of the same names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.evalmm import aggregate
from pfgen_fast.evalmm.metrics import judges, match, mathvista, mmmu, ocr, receipt_kie
from pfgen_fast.evalmm.metrics.base import Aggregate, Batch, Doc, Judged, Scorer


def per_item(function: Callable[[Any, str], Any]) -> Callable[[Batch], list[Any]]:
    def score(batch: Batch) -> list[Any]:
        return [function(ref, pred) for ref, pred in zip(batch.refs, batch.preds, strict=True)]

    return score


def simple(key: str) -> Callable[[list[Any], Batch], Aggregate]:
    return lambda scores, _batch: aggregate.simple(key, scores)


def by_docs(
    function: Callable[[list[Any], Sequence[Doc]], Aggregate],
) -> Callable[[list[Any], Batch], Aggregate]:
    return lambda scores, batch: function(scores, batch.docs)


def by_scores(
    function: Callable[[list[Any]], Aggregate],
) -> Callable[[list[Any], Batch], Aggregate]:
    return lambda scores, _batch: function(scores)


def score_rougel(batch: Batch) -> list[Any]:
    from pfgen_fast.evalmm.metrics.rouge import rouge_l_scores

    return rouge_l_scores(batch.refs, batch.preds, use_neologdn=batch.options.use_neologdn)


def score_jdocqa(batch: Batch) -> list[Any]:
    """Types 0-2 by normalised containment, type 3 by sentence BLEU (one batch)."""
    from pfgen_fast.evalmm.metrics.bleu import sentence_bleu_scores

    scores: list[Any] = [0] * len(batch.preds)
    open_ended = [i for i, doc in enumerate(batch.docs) if doc["answer_type"] == 3]
    bleu = sentence_bleu_scores(
        [batch.refs[i] for i in open_ended], [batch.preds[i] for i in open_ended]
    )
    for i, value in zip(open_ended, bleu, strict=True):
        scores[i] = value
    for i, doc in enumerate(batch.docs):
        if doc["answer_type"] != 3:
            scores[i] = match.jdocqa_contains(batch.refs[i], batch.preds[i])
    return scores


def check_jdocqa_type(doc: Doc, where: str) -> None:
    if doc["answer_type"] not in aggregate.JDOCQA_TYPES:
        raise InputError(f'{where}: field "answer_type": expected 0, 1, 2 or 3')


def score_cc_ocr(batch: Batch) -> list[Any]:
    return [ocr.f1_of_counts(*counts)[2] for counts in ocr.overlap_counts(batch.refs, batch.preds)]


def aggregate_cc_ocr(_scores: list[Any], batch: Batch) -> Aggregate:
    """From the character counts (the pooled figures need them, not only the F1s)."""
    return ocr.cc_ocr_aggregate(ocr.overlap_counts(batch.refs, batch.preds))


def score_handwriting(batch: Batch) -> list[Any]:
    return ocr.handwriting_scores(batch.refs, batch.preds)


def score_mmmu(batch: Batch) -> list[Any]:
    return mmmu.score_items(batch.refs, batch.preds, batch.docs, mmmu.english_parser())


def score_jmmmu(batch: Batch) -> list[Any]:
    from pfgen_fast.evalmm.prompts import jmmmu_indicators

    indicators = jmmmu_indicators(batch.options.data_dir)
    parser = mmmu.japanese_parser(indicators, batch.options.fix_quirks)
    return mmmu.score_items(batch.refs, batch.preds, batch.docs, parser)


def mmmu_scorer(
    name: str, score: Callable[[Batch], list[Any]], domains: dict[str, list[str]]
) -> Scorer:
    """MMMU and JMMMU: the same fields and checks, aggregated over their own subject domains."""
    return Scorer(
        name,
        score,
        lambda scores, batch: mmmu.aggregate(scores, batch.docs, domains),
        fields=(("id", str), ("question_type", str)),
        check=mmmu.check_item,
        fields_note="(and options on multiple-choice items)",
    )


def judge_mean(key: str) -> Callable[[list[Any], Batch], Aggregate]:
    return lambda scores, _batch: judges.mean_with_errors(key, scores)


def heron_aggregate(scores: list[Any], batch: Batch) -> Aggregate:
    return judges.heron_aggregate(scores, batch.docs)


SCORERS: dict[str, Scorer] = {}


def register(scorer: Scorer) -> None:
    SCORERS[scorer.name] = scorer


register(Scorer("exact-match", per_item(match.exact_match), simple("exact_match")))
register(
    Scorer(
        "substring-match",
        per_item(match.substring_match),
        simple("substring_match"),
        ref_kinds=(str, list),
        ref_help="a string or a list of strings",
    )
)
register(Scorer("rougel", score_rougel, simple("rougel")))
register(
    Scorer(
        "jdocqa",
        score_jdocqa,
        by_docs(aggregate.jdocqa),
        fields=(("answer_type", int),),
        check=check_jdocqa_type,
    )
)
# A null grouping field (jic-vqa's domain, mecha-ja's answer type, heron-bench's category) is
# grouped as the original groups it: its own "null" domain, Non-Factoid, in no category.
register(
    Scorer(
        "jic-vqa",
        per_item(match.contains),
        by_docs(aggregate.by_domain),
        fields=(("domain", (str, type(None))),),
    )
)
register(
    Scorer(
        "mecha-ja",
        per_item(match.contains),
        by_docs(aggregate.mecha_ja),
        fields=(
            ("answer_type", (int, type(None))),
            ("background_text", (str, type(None))),
            ("question_id", str),
        ),
    )
)
register(Scorer("cc-ocr", score_cc_ocr, aggregate_cc_ocr))
register(Scorer("ai2d", per_item(match.ai2d_match), simple("accuracy")))
register(Scorer("blink", per_item(match.blink_match), by_scores(aggregate.with_counts)))
register(Scorer("jawildtext-handwriting-ocr", score_handwriting, simple("cer_similarity")))
register(Scorer("mathvista", per_item(mathvista.mathvista_match), simple("accuracy")))
register(
    Scorer(
        "jawildtext-receipt-kie",
        per_item(receipt_kie.score_item),
        by_scores(receipt_kie.aggregate),
        check=receipt_kie.check_reference,
        ref_help="the receipt as a JSON object in a string",
    )
)
register(mmmu_scorer("mmmu", score_mmmu, mmmu.MMMU_DOMAINS))
register(mmmu_scorer("jmmmu", score_jmmmu, mmmu.JMMMU_DOMAINS))


def register_judged(
    name: str,
    function: Callable[..., Judged],
    aggregate: Callable[[list[Any], Batch], Aggregate],
    fields: tuple[tuple[str, type | tuple[type, ...]], ...],
) -> None:
    """A metric that asks the judge: `function(refs, preds, docs, options)` over a batch."""

    def score(batch: Batch) -> Judged:
        return function(batch.refs, batch.preds, batch.docs, batch.options)

    register(Scorer(name, score, aggregate, fields=fields, needs_judge=True))


TEXT_FIELD = (("input_text", str),)
register_judged(
    "llm-as-a-judge", judges.score_llm_as_a_judge, judge_mean("llm_as_a_judge"), TEXT_FIELD
)
register_judged(
    "heron-bench",
    judges.score_heron,
    heron_aggregate,
    (("context", str), ("input_text", str), ("category", (str, type(None)))),
)
register_judged("jawildtext-board-vqa", judges.score_board_vqa, judge_mean("accuracy"), TEXT_FIELD)


def fields_help() -> str:
    """One line per metric: what `ref` holds and the document fields it needs."""
    lines = ["what each metric reads besides pred (a string):"]
    for name in sorted(SCORERS):
        scorer = SCORERS[name]
        fields = "".join(f", {field}" for field, _ in scorer.fields)
        note = f" {scorer.fields_note}" if scorer.fields_note else ""
        lines.append(f"  {name}: ref {scorer.ref_help}{fields}{note}")
    return "\n".join(lines)


def get_scorer(name: str) -> Scorer:
    scorer = SCORERS.get(name)
    if scorer is None:
        raise PfgenError(f"unknown metric {name!r} (one of {', '.join(sorted(SCORERS))})")
    return scorer
