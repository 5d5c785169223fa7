"""Speed of pfgen_fast's llm-jp-eval-mm ROUGE-L and BLEU (jdocqa) against the straightforward
in-process computation and against llm-jp-eval-mm's own way, measured in the same run.

    python benches/bench_evalmm.py [--pairs 4000] [--sample 60] [--eval-mm-python PYTHON]

Texts: synthetic Japanese sentences (every text distinct, 20-200 characters). For each metric:
* pfgen_fast end to end (tokenisation included: each distinct text once, by MeCab in forked
  workers for large batches, then the pair work in the Rust core over the whole batch), in
  fresh subprocesses pinned (taskset) to 1 and to 2 CPUs, best of ROUNDS on fresh texts; also
  the core alone on texts already tokenised;
* straightforward (best of ROUNDS on fresh texts): one pair at a time, in process — ROUGE-L:
  the spec's tokenizer written plainly (fugashi) through rouge-score's
  `RougeScorer(["rougeL"])`; BLEU: sacrebleu's `sentence_bleu` (ja-mecab);
* ROUGE-L only, llm-jp-eval-mm's way (evalmm-spec.md §2, written here from that description): a
  spawn-context process pool per call with one job per item, each job building a Tagger, a
  `RougeScorer` with rouge1/rouge2/rougeL and a 1000-sample `BootstrapAggregator`; on `--sample`
  pairs;
* with `--eval-mm-python`, also llm-jp-eval-mm's own code: PYTHON is an interpreter with the
  `eval_mm` package installed (`eval-mm` on PyPI needs Python >= 3.12.1; docs/performance.md
  shows a setup), whose `RougeLScorer.score` is timed on the same `--sample` pairs in a child
  process.
Scores are checked equal to the straightforward ones before anything is timed. Wall-clock
figures depend on what else the machine runs (the load average is printed); CPU seconds
(this process's threads and its ended children) are given too.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import random
import re
import resource
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

ROUNDS = 3
WORDS = (
    "私 僕 彼女 東京 大阪 公園 駅 学校 会社 電車 写真 画像 猫 犬 鳥 空 海 山 川 道 車 本 机 "
    "赤い 青い 大きな 小さな 新しい 古い 美しい 静かな 遊んで 歩いて 見て 食べて 書いて 走って "
    "いる いた ある あった です でした ます ました ようだ らしい が は を に で と も の から まで "
    "写っている 並んでいる 置かれている 二人 三匹 多くの 人々 建物 看板 文字 ラーメン タワー "
    "、 、 。 。 ！ ？ 123 45 ３ ＡＢＣ ＧＰＳ OCR"
).split()


def sentences(count: int, seed: int) -> list[str]:
    """`count` distinct texts of 20-200 characters."""
    rng = random.Random(seed)
    texts: dict[str, None] = {}
    while len(texts) < count:
        target = rng.randint(20, 200)
        parts: list[str] = []
        while sum(map(len, parts)) < target:
            parts.append(rng.choice(WORDS))
        texts["".join(parts)[:target]] = None
    return list(texts)


def make_pairs(count: int) -> tuple[list[str], list[str]]:
    texts = sentences(2 * count, seed=7)
    return texts[0::2], texts[1::2]


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its children that have ended."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(function: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    function()
    return time.perf_counter() - wall, cpu_seconds() - cpu


def best_time(function: Callable[[], Any], rounds: int = ROUNDS) -> tuple[float, float]:
    """The least wall time and the least CPU time of `rounds` calls."""
    results = [timed(function) for _ in range(rounds)]
    return min(wall for wall, _ in results), min(cpu for _, cpu in results)


def ours(metric: str, refs: list[str], preds: list[str]) -> list[float]:
    if metric == "rougel":
        from pfgen_fast.evalmm.metrics.rouge import rouge_l_scores

        return rouge_l_scores(refs, preds)
    from pfgen_fast.evalmm.metrics.bleu import sentence_bleu_scores

    return sentence_bleu_scores(refs, preds)


def core_only(metric: str, refs: list[str], preds: list[str]) -> float:
    """Seconds of the Rust pair work alone, texts tokenised before."""
    from pfgen_fast._core import evalmm as core_evalmm
    from pfgen_fast.evalmm.metrics.tokens import ParsedBatch, bleu_parse, rouge_parse

    batch = ParsedBatch(rouge_parse if metric == "rougel" else bleu_parse)
    left, right = batch.indexes(refs), batch.indexes(preds)
    ids, offsets = batch.arrays()
    function = core_evalmm.rouge_l if metric == "rougel" else core_evalmm.sentence_bleu
    if metric != "rougel":
        left, right = right, left
    return best_time(lambda: function(ids, offsets, left, right), rounds=5)[0]


class SpecTokenizer:
    """The spec's ROUGE-L tokenizer written plainly (fugashi's default Tagger, emoji dropped
    one code point at a time with `emoji.is_emoji`, the ranges, NFKC, whitespace collapsed)."""

    RANGES = re.compile(
        "[\U0001f600-\U0001f64f\U0001f300-\U0001f5ff\U0001f680-\U0001f6ff"
        "\U0001f1e0-\U0001f1ff\u2702-\u27b0]"
    )

    def __init__(self) -> None:
        import emoji
        import fugashi

        self.tagger = fugashi.Tagger("-Owakati")
        self.is_emoji = emoji.is_emoji

    def tokenize(self, text: str) -> list[str]:
        text = "".join(c for c in text if not self.is_emoji(c))
        text = unicodedata.normalize("NFKC", self.RANGES.sub("", text))
        return self.tagger.parse(" ".join(text.split())).split()


def straightforward(metric: str, refs: list[str], preds: list[str]) -> list[float]:
    """One pair at a time with the libraries llm-jp-eval-mm calls (fresh texts: no caches)."""
    if metric == "rougel":
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=SpecTokenizer())
        pairs = zip(refs, preds, strict=True)
        return [scorer.score(r, p)["rougeL"].fmeasure * 100 for r, p in pairs]
    from sacrebleu import BLEU

    # sacrebleu warns about effective_order on every sentence score (jdocqa's settings).
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    bleu = BLEU(tokenize="ja-mecab", smooth_method="exp", smooth_value=0.0, effective_order=False)
    return [bleu.sentence_score(p, [r]).score / 100 for r, p in zip(refs, preds, strict=True)]


def original_item(ref: str, pred: str) -> float:
    """One job of llm-jp-eval-mm's ROUGE-L (evalmm-spec.md §2), in a spawned worker: a new
    tokenizer, a new scorer of three ROUGE types and a bootstrap of the one item."""
    from rouge_score import rouge_scorer, scoring

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=SpecTokenizer())
    aggregator = scoring.BootstrapAggregator()
    aggregator.add_scores(scorer.score(ref, pred))
    return aggregator.aggregate()["rougeL"].mid.fmeasure * 100


def original_way(refs: list[str], preds: list[str]) -> list[float]:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=os.cpu_count(), mp_context=context) as pool:
        futures = [pool.submit(original_item, r, p) for r, p in zip(refs, preds, strict=True)]
        return [future.result() for future in futures]


def eval_mm_child() -> None:
    """Under an interpreter with `eval_mm`: times its `RougeLScorer.score` on the pairs read
    from standard input as JSON and prints the figures and the scores as JSON."""
    from eval_mm.metrics.rougel_scorer import RougeLScorer  # type: ignore[import-not-found]

    refs, preds = json.load(sys.stdin)
    scores: list[float] = []
    seconds, cpu = timed(lambda: scores.extend(RougeLScorer.score(refs, preds)))
    print(json.dumps({"wall": seconds, "cpu": cpu, "scores": [float(s) for s in scores]}))


def measure_eval_mm(python: str, refs: list[str], preds: list[str]) -> dict[str, Any]:
    command = [python, __file__, "--eval-mm-child"]
    pairs = json.dumps([refs, preds])
    output = subprocess.run(command, input=pairs, check=True, capture_output=True, text=True)
    return json.loads(output.stdout.splitlines()[-1])


def measure_ours(metric: str, pairs: int, threads: int) -> dict[str, float]:
    """Runs this script in a fresh process pinned to `threads` CPUs (MeCab's forked workers
    and the core's rayon threads alike)."""
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
    cpus = ",".join(str(cpu) for cpu in sorted(os.sched_getaffinity(0))[:threads])
    command = ["taskset", "-c", cpus, sys.executable, __file__, "--child", metric]
    command += ["--pairs", str(pairs)]
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(output.stdout)


def child(metric: str, pairs: int) -> None:
    refs, preds = make_pairs(pairs)
    ours(metric, refs[:50], preds[:50])  # load the dictionaries
    # Fresh texts each round: tokenisation is part of the cost.
    rounds = iter([make_pairs_offset(pairs, r) for r in range(ROUNDS)])
    wall, cpu = best_time(lambda: ours(metric, *next(rounds)))
    print(json.dumps({"wall": wall, "cpu": cpu, "core": core_only(metric, refs, preds)}))


def make_pairs_offset(count: int, offset: int) -> tuple[list[str], list[str]]:
    texts = sentences(2 * count, seed=100 + offset)
    return texts[0::2], texts[1::2]


def report(metric: str, pairs: int, sample: int, eval_mm_python: str | None) -> dict[str, Any]:
    refs, preds = make_pairs(pairs)
    expected = straightforward(metric, refs, preds)
    if ours(metric, refs, preds) != expected:
        raise SystemExit(f"{metric}: pfgen_fast's scores differ from the straightforward ones")
    rounds = iter([make_pairs_offset(pairs, 50 + r) for r in range(ROUNDS)])
    wall, cpu = best_time(lambda: straightforward(metric, *next(rounds)))
    result: dict[str, Any] = {"metric": metric, "pairs": pairs, "load_average": os.getloadavg()}
    result["straightforward_pairs_per_s"] = pairs / wall
    result["straightforward_pairs_per_cpu_s"] = pairs / cpu
    for threads in (1, 2):
        timing = measure_ours(metric, pairs, threads)
        result[f"ours_{threads}cpu_pairs_per_s"] = pairs / timing["wall"]
        result[f"ours_{threads}cpu_pairs_per_cpu_s"] = pairs / timing["cpu"]
        result[f"core_only_{threads}cpu_pairs_per_s"] = pairs / timing["core"]
        result[f"speedup_{threads}cpu"] = wall / timing["wall"]
    result["speedup_per_cpu_s"] = cpu / (pairs / result["ours_1cpu_pairs_per_cpu_s"])
    if metric == "rougel" and sample:
        sample_refs, sample_preds = refs[:sample], preds[:sample]
        original: list[float] = []
        seconds, cpu = timed(lambda: original.extend(original_way(sample_refs, sample_preds)))
        if original != expected[:sample]:
            raise SystemExit("llm-jp-eval-mm's way gave other ROUGE-L values")
        result["original_way_pairs_per_s"] = sample / seconds
        result["original_way_pairs_per_cpu_s"] = sample / cpu
        best = max(result["ours_1cpu_pairs_per_s"], result["ours_2cpu_pairs_per_s"])
        result["speedup_vs_original_way"] = best / result["original_way_pairs_per_s"]
        result["speedup_vs_original_way_per_cpu_s"] = (
            result["ours_1cpu_pairs_per_cpu_s"] / result["original_way_pairs_per_cpu_s"]
        )
        if eval_mm_python:
            timing = measure_eval_mm(eval_mm_python, sample_refs, sample_preds)
            if timing["scores"] != expected[:sample]:
                raise SystemExit("eval_mm's RougeLScorer gave other ROUGE-L values")
            result["eval_mm_pairs_per_s"] = sample / timing["wall"]
            result["eval_mm_pairs_per_cpu_s"] = sample / timing["cpu"]
            result["speedup_vs_eval_mm"] = best / result["eval_mm_pairs_per_s"]
            result["speedup_vs_eval_mm_per_cpu_s"] = (
                result["ours_1cpu_pairs_per_cpu_s"] / result["eval_mm_pairs_per_cpu_s"]
            )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=4000)
    parser.add_argument("--sample", type=int, default=60, help="pairs for the original way")
    parser.add_argument(
        "--eval-mm-python", help="an interpreter with eval_mm installed: time its ROUGE-L too"
    )
    parser.add_argument("--child", choices=("rougel", "bleu"), help=argparse.SUPPRESS)
    parser.add_argument("--eval-mm-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.eval_mm_child:
        eval_mm_child()
        return
    if args.child:
        child(args.child, args.pairs)
        return
    for metric in ("rougel", "bleu"):
        result = report(metric, args.pairs, args.sample, args.eval_mm_python)
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
