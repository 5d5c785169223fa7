"""Reference implementations of llm-jp-eval-mm's per-item scores, written from
evalmm-spec.md in the most direct way (full tables, counters), for the property tests."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

import emoji
import fugashi
import ipadic
import MeCab
import unidic_lite

_UNIDIC = fugashi.Tagger(f'-Owakati -d "{unidic_lite.DICDIR}" -r "{unidic_lite.DICDIR}/mecabrc"')
_IPADIC = MeCab.Tagger(ipadic.MECAB_ARGS + " -Owakati")
_RANGES = (
    "[\U0001f600-\U0001f64f\U0001f300-\U0001f5ff\U0001f680-\U0001f6ff"
    "\U0001f1e0-\U0001f1ff\u2702-\u27b0]"
)


def rouge_tokens(text: str) -> list[str]:
    """evalmm-spec.md §2 ROUGE-L steps 1-4 (NFKC path)."""
    text = "".join(c for c in text if not emoji.is_emoji(c))
    text = re.sub(_RANGES, "", text)
    text = unicodedata.normalize("NFKC", text)
    text = " ".join(text.split())
    return _UNIDIC.parse(text).split()


def lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            if x == y:
                table[i + 1][j + 1] = table[i][j] + 1
            else:
                table[i + 1][j + 1] = max(table[i][j + 1], table[i + 1][j])
    return table[len(a)][len(b)]


def rouge_l(ref: str, pred: str) -> float:
    r, p = rouge_tokens(ref), rouge_tokens(pred)
    if not r or not p:
        return 0.0
    common = lcs(r, p)
    precision, recall = common / len(p), common / len(r)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall) * 100


def bleu_tokens(text: str) -> list[str]:
    return _IPADIC.parse(text.rstrip().strip()).split()


def ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def sentence_bleu(ref: str, pred: str) -> float:
    """evalmm-spec.md §2 jdocqa type 3: sacrebleu's sentence BLEU / 100 (exp smoothing, 4-grams)."""
    hyp, reference = bleu_tokens(pred), bleu_tokens(ref)
    correct, total = [], []
    for n in range(1, 5):
        h, r = ngrams(hyp, n), ngrams(reference, n)
        total.append(sum(h.values()))
        correct.append(sum(min(count, r[g]) for g, count in h.items()))
    c, r_len = len(hyp), len(reference)
    bp = 1.0 if c >= r_len else (math.exp(1 - r_len / c) if c > 0 else 0.0)
    if not any(correct):
        return 0.0
    precisions = [0.0] * 4
    k = 1.0
    for n in range(4):
        if total[n] == 0:
            break
        if correct[n] == 0:
            k *= 2
            precisions[n] = 100.0 / (k * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    logs = sum(-9999999999 if p == 0 else math.log(p) for p in precisions)
    return bp * math.exp(logs / 4) / 100


def cc_ocr_chars(text: str) -> list[str]:
    text = str(text).strip().replace("\t", " ").replace("\n", " ")
    text = text.replace("###", "").replace("***", "")
    text = re.sub(r"\s+", " ", text).replace(" ", "")
    return [c.lower() for c in text if c.lower()]


def cc_ocr_f1(ref: str, pred: str) -> float:
    gt, pr = Counter(cc_ocr_chars(ref)), Counter(cc_ocr_chars(pred))
    right = sum(min(count, pr[c]) for c, count in gt.items())
    n_gt, n_pr = sum(gt.values()), sum(pr.values())
    recall = right / (n_gt + 1e-9) if n_gt else 0.0
    precision = right / (n_pr + 1e-9) if n_pr else 0.0
    return 2 * recall * precision / (recall + precision + 1e-9) if recall + precision else 0.0


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def handwriting(ref: str, pred: str) -> float:
    def norm(t: str) -> str:
        t = unicodedata.normalize("NFKC", t).replace("\\n", "\n").replace("\r\n", "\n")
        return "\n".join(re.sub(r"[ \t]+", " ", line.strip()) for line in t.split("\n")).lower()

    r, p = norm(ref), norm(pred)
    if not r:
        return 1.0 if not p else 0.0
    return max(0.0, 1 - edit_distance(r, p) / len(r))


NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion"
).split()
NUMBER_VALUES = list(range(21)) + [30, 40, 50, 60, 70, 80, 90, 100, 1000, 10**6, 10**9]


def numbers_as_digits(text: str) -> str:
    text = text.lower()
    for word, value in zip(NUMBER_WORDS, NUMBER_VALUES, strict=True):
        text = re.sub(r"\b" + word + r"\b", str(value), text)
    return text


def substring_match(ref: str | list[str], pred: str) -> int:
    """evalmm-spec.md §2 substring-match."""
    refs = ref if isinstance(ref, list) else [ref]
    prediction = numbers_as_digits(pred.lower())
    return int(any(numbers_as_digits(r) in prediction for r in refs))


def jdocqa_exact(ref: str, pred: str) -> int:
    def norm(text: str) -> str:
        text = text.replace("です", "").replace("。", "").replace("、", "").replace(" ", "")
        return unicodedata.normalize("NFKC", text.strip())

    return 1 if norm(ref) in norm(pred) else 0


def ai2d(ref: str, pred: str) -> int:
    p = pred.strip().rstrip(".").upper()
    return int(p in ("A", "B", "C", "D") and p == ref.strip().rstrip(".").upper())


def blink(ref: str, pred: str) -> int:
    def letter(text: str) -> str:
        text = text.strip().rstrip(".")
        if len(text) >= 2 and text[0] == "(" and text[-1] == ")":
            text = text[1:-1]
        return text.strip().upper()

    p = letter(pred)
    return int(p in ("A", "B", "C", "D") and p == letter(ref))


def judge_digit(reply: str) -> int:
    """evalmm-spec.md §2 llm-as-a-judge: the first (Unicode) digit, else 0."""
    for c in reply:
        if re.fullmatch(r"\d", c):
            return int(c)
    return 0


def boxed(text: str) -> str:
    """evalmm-spec.md §2 board-vqa: the last complete \\boxed{...} content (nested braces), else the
    stripped text."""
    contents, i = [], 0
    while True:
        start = text.find("\\boxed{", i)
        if start < 0:
            break
        depth, j = 1, start + 7
        while j < len(text) and depth:
            depth += 1 if text[j] == "{" else -1 if text[j] == "}" else 0
            j += 1
        if depth == 0:
            contents.append(text[start + 7 : j - 1].strip())
        i = j
    return contents[-1] if contents else text.strip()


def heron(reply: str) -> dict[str, int]:
    """evalmm-spec.md §2 heron parse_score."""
    import json

    blocks = re.findall(r"```json(.*?)```", reply, re.DOTALL) or re.findall(
        r"\{.*?\}", reply, re.DOTALL
    )
    for block in blocks:
        for text in (block.strip(), re.sub(r"[\x00-\x1F\x7F]", "", block.strip())):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and "score" in value and "score_gpt" in value:
                try:
                    return {"score": int(value["score"]), "score_gpt": int(value["score_gpt"])}
                except (TypeError, ValueError, OverflowError):
                    pass
            break
    return {"score": -1, "score_gpt": -1}


def multiple_choice(response: str, options: list[str]) -> str | None:
    """evalmm-spec.md §2 parse_multi_choice_response (no random choice)."""
    for mark in [",", ".", "!", "?", ";", ":", "'", "、", "。", "！", "？", "；", "："]:
        response = response.strip(mark)
    response = " " + response + " "
    letters = [chr(65 + i) for i in range(len(options))]
    jp = "[\u3040-\u30ff\u4e00-\u9fff]"
    for make in (
        lambda x: "(" + x + ")",
        lambda x: x + " ",
        None,
        lambda x: x + ".",
    ):
        best, best_at = None, -1
        for x in letters:
            if make is None:
                spots = [m.start() for m in re.finditer(f"(?<={jp}){x}(?={jp})", response)]
                at = spots[-1] if spots else -1
            else:
                at = response.rfind(make(x))
            if at > best_at:
                best, best_at = x, at
        if best is not None:
            return best
    if len(response.split()) > 5:
        best, best_at = None, -1
        for x, option in zip(letters, options, strict=True):
            at = response.lower().rfind(option.lower())
            if at > best_at:
                best, best_at = x, at
        return best
    return None


def open_correct(answer: str, response: str, indicators: list[str], japanese: bool) -> bool:
    """evalmm-spec.md §2 parse_open_response + eval_open with a fresh indicator list (the MMMU
    path, or JMMMU with --fix-quirks): `indicators` is extended by "＝" and "=" for the last
    sentence."""
    indicators = list(indicators)
    response = response.strip().strip("。")
    sentences = re.split(r"[。！？.]\s*|\n", response)
    keys = []
    for index, sentence in enumerate(sentences):
        if index == len(sentences) - 1:
            indicators += ["＝", "="]
        tails = [sentence.split(i)[-1].strip() for i in indicators if i in sentence]
        shortest = None
        for tail in tails:
            if not shortest or len(tail) < len(shortest):
                shortest = tail
        punctuation = [",", ".", "!", "?", ";", ":", "'", "、", "。", "！", "？", "；", "："]
        if shortest and shortest.strip() not in punctuation:
            keys.append(shortest)
    if not keys:
        keys = [response]
    found = list(keys)
    for key in keys:
        found += re.findall(r"-?\b\d{1,3}(?:,\d{3})+\b", key)
        found += re.findall(r"-?\d+(?:\.\d+)?[eE][+-]?\d+", key)
        if japanese:
            found += re.findall(r"-?(?:\d+\.\d+|\.\d+|\d+)(?![eE][+-]?\d+)(?![,\d])", key)
            found += re.findall(r"(\d+)(?:つ|個|度|円|人|年|匹|台|%)", key)
        else:
            found += re.findall(r"-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])", key)

    def normalized(text: str) -> list[object]:
        text = text.strip()
        try:
            return [round(float(text.replace(",", "")), 2)]
        except ValueError:
            text = text.lower()
            return [" " + text, text + " "] if len(text) == 1 else [text]

    candidates = [n for text in found for n in normalized(text)]
    golds = normalized(answer)
    for candidate in candidates:
        if isinstance(candidate, str):
            if any(isinstance(g, str) and g in candidate for g in golds):
                return True
        elif candidate in golds:
            return True
    return False


def mathvista(ref: str, pred: str) -> int:
    """evalmm-spec.md §2 mathvista without metadata (text answers), with every step of the
    extraction, the search for non-year numbers included."""
    number = r"(-?\d+\.?\d*(?:[eE][+-]?\d+)?)"
    response = pred.strip()
    answer = None
    for cue in (r"[Tt]he answer is[\s]*:?[\s]*", r"[Aa]nswer:[\s]*", r"=[\s]*",
                r"(?:is|equals|equal to)[\s]*"):  # fmt: skip
        found = re.search(cue + number, response)
        if found:
            answer = found.group(1)
            break
    if answer is None:
        grouped = re.findall(r"-?\d{1,3}(?:,\d{3})*(?:\.\d+)?", response)
        if grouped:
            answer = grouped[-1].replace(",", "")
    if answer is None:
        plain = re.findall(r"-?\d+\.?\d*(?:[eE][+-]?\d+)?", response)
        kept = [n for n in plain if not (1900 <= float(n) <= 2100 and len(n) == 4)]
        if kept:
            answer = kept[-1]
    if answer is None:
        answer = response[:50] if len(response) > 50 else response

    def norm(text: str) -> str:
        text = " ".join(text.split()).lower()
        return text.replace(",", "").replace("$", "").replace("%", "").strip(".")

    return 1 if norm(answer) == norm(ref) else 0


KIE_FIELDS = ["store_name", "store_address", "receipt_id", "date", "time", "total_amount",
              "tax_amount"]  # fmt: skip


def kie_prediction(text: str) -> object:
    """The first fenced block's JSON, else the first balanced {...}'s; None when neither
    parses. Whatever value parsed is returned (the caller decides about non-objects)."""
    import json

    fenced = re.search(r"```(?:json)?\s*\n?(.*?)\n?```", text, re.DOTALL)
    if fenced:
        try:
            return json.loads(fenced.group(1).strip())
        except json.JSONDecodeError:
            pass
    start = text.find("{")
    if start == -1:
        return None
    depth = 0
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if text[end] == "}" and depth == 0:
            try:
                return json.loads(text[start : end + 1])
            except json.JSONDecodeError:
                return None
    return None


def kie_norm(value: object) -> str:
    if value is None:
        return ""
    text = unicodedata.normalize("NFKC", str(value)).lower().strip()
    for sign in ("¥", "￥", ","):
        text = text.replace(sign, "")
    return re.sub(r"\s+", " ", text)


def kie_tokens(receipt: dict) -> Counter[str]:
    found = Counter()
    for name in KIE_FIELDS:
        if receipt.get(name) is not None and kie_norm(receipt[name]):
            found[f"{name}:{kie_norm(receipt[name])}"] += 1
    items = receipt.get("line_items")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            for name in ("item_name", "item_price", "item_quantity"):
                if item.get(name) is not None and kie_norm(item[name]):
                    found[f"line_items.{name}:{kie_norm(item[name])}"] += 1
    return found


def receipt_kie(ref: str, pred: str) -> dict:
    """evalmm-spec.md §2 jawildtext-receipt-kie with the facts of docs/evalmm.md; a parsed value
    that is not an object is a parse error."""
    import json

    gold = json.loads(ref)
    parsed = kie_prediction(pred)
    if not isinstance(parsed, dict):
        zeros = {f"field_{name}": 0.0 for name in KIE_FIELDS}
        return {"f1": 0.0, "precision": 0.0, "recall": 0.0, "field_accuracy": zeros,
                "parse_error": True}  # fmt: skip
    g, p = kie_tokens(gold), kie_tokens(parsed)
    if not g and not p:
        precision = recall = f1 = 1.0
    elif not p:
        precision = recall = f1 = 0.0
    elif not g:
        precision, recall, f1 = 0.0, 1.0, 0.0
    else:
        correct = sum(min(count, p[token]) for token, count in g.items())
        precision, recall = correct / sum(p.values()), correct / sum(g.values())
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        if precision + recall == 0:
            precision = recall = 0.0
    accuracy = {
        f"field_{name}": 1.0
        if kie_norm(str(gold.get(name, ""))) == kie_norm(str(parsed.get(name, "")))
        else 0.0
        for name in KIE_FIELDS
    }
    return {"f1": f1, "precision": precision, "recall": recall, "field_accuracy": accuracy,
            "parse_error": False}  # fmt: skip


def mmmu_aggregate(scores: list[int], ids: list[str], domains: dict[str, list[str]]) -> dict:
    """evalmm-spec.md §2 aggregate_mmmu_results with the facts of docs/evalmm.md: per-subject
    accuracy and count, instance-weighted as accuracy x count, only domain subjects listed."""
    results: dict[str, tuple[int, float]] = {}
    grouped: dict[str, list[int]] = {}
    for score, identifier in zip(scores, ids, strict=True):
        prefix = identifier.split("_")[0]
        subject = re.search(rf"^{prefix}_(.+?)_\d+$", identifier)
        assert subject is not None
        grouped.setdefault(subject.group(1), []).append(score)
    for subject, values in grouped.items():
        results[subject] = (len(values), sum(values) / len(values))

    def weighted(parts: list[tuple[int, float]]) -> float:
        total, count = 0, 0
        for number, accuracy in parts:
            total += accuracy * number
            count += number
        return 0 if count == 0 else total / count

    details: dict = {}
    for domain, members in domains.items():
        present = [m for m in members if m in results]
        details["Overall-" + domain] = round(weighted([results[m] for m in present]), 5)
        for m in present:
            details[m] = round(results[m][1], 5)
    overall = weighted(list(results.values()))
    details["Overall"] = round(overall, 5)
    return {"overall_score": overall, "details": details}
