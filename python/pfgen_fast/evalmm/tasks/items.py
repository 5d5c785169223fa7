"""The items of llm-jp-eval-mm's tasks, built from dataset rows as its Task classes build them
(ids, prompts, images in order, answers, the document fields its scorers read).

The instructions the Tasks add to their prompts are not written here: each is read at run time
from the task's own file under `src/eval_mm/tasks/` of llm-jp-eval-mm (verified, see
`evalmm/data.py`); the `TaskText`s and `task_fstring` calls below name the file, the function
or class, and the variable each comes from."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pfgen_fast.common.errors import DataError
from pfgen_fast.common.python_source import KeyField
from pfgen_fast.evalmm.images import TaskImage
from pfgen_fast.evalmm.metrics.receipt_kie import LINE_ITEM_FIELDS, SCALAR_FIELDS
from pfgen_fast.evalmm.prompts import TaskText, task_fstring
from pfgen_fast.evalmm.tasks.rows import Source

if TYPE_CHECKING:
    pass

Row = dict[str, Any]


def broken_image(problem: str) -> TaskImage:
    """An image the dataset's value does not give: its item fails with `problem`."""
    return TaskImage(data=b"", problem=problem)


@dataclass(frozen=True, kw_only=True)
class TaskItem:
    """One request of a task. `prompt`: the Task's doc_to_text (what prediction.jsonl records
    as input_text); `input_text`: the prompt with "<image>" removed, as the runner sends it;
    `doc`: the document fields llm-jp-eval-mm's scorers read."""

    question_id: str
    prompt: str
    input_text: str
    images: tuple[TaskImage, ...]
    answer: Any
    doc: dict[str, Any]


def item(
    question_id: str,
    prompt: str,
    images: list[TaskImage],
    answer: Any,
    *,
    doc: dict[str, Any] | None = None,
) -> TaskItem:
    return TaskItem(
        question_id=question_id,
        prompt=prompt,
        input_text=prompt.replace("<image>", ""),
        images=tuple(images),
        answer=answer,
        doc=doc or {},
    )


def image_of(value: Any, **options: Any) -> TaskImage:
    """A stored image (`{"bytes", "path"}` of an Image feature, or raw bytes) kept undecoded;
    a value that gives no image is a broken image, its item's error."""
    if isinstance(value, dict):
        data = value.get("bytes")
        path = value.get("path")
        if data is None and path:
            try:
                data = Path(path).read_bytes()
            except OSError as error:
                reason = error.strerror or type(error).__name__
                return broken_image(f"its file {path} cannot be read ({reason})")
        if data is None:
            return broken_image("the dataset gives neither its bytes nor its file")
        return TaskImage(data=data, **options)
    if isinstance(value, bytes):
        return TaskImage(data=value, **options)
    return broken_image(f"the dataset holds {type(value).__name__}, not an image")


@dataclass(frozen=True)
class Options:
    """`evalmm_dir`: llm-jp-eval-mm's checkout or fetched copy (None: `data.default_data_dir`)."""

    rotate_choices: bool = False
    evalmm_dir: Path | None = None


def letters_list(options: list[Any]) -> str:
    """ "A. first" … one option a line, as the Tasks' parse_options."""
    return "\n".join(f"{chr(ord('A') + i)}. {option}" for i, option in enumerate(options))


# --- Japanese tasks with one image per row -------------------------------------------------


def ja_vg_vqa_500(source: Source, _options: Options) -> Iterator[TaskItem]:
    """One item per question-answer pair of each image (the Task flattens `qas`)."""
    for row in source.rows(None, "test", ["image_id", "image", "qas"]):
        image = image_of(row["image"], resaves=1)
        for qa in row["qas"]:
            question = qa["question"]
            yield item(
                str(qa["qa_id"]), question, [image], qa["answer"], doc={"input_text": question}
            )


def japanese_heron_bench(source: Source, _options: Options) -> Iterator[TaskItem]:
    columns = ["question_id", "text", "image", "answer", "context", "category"]
    for row in source.rows(None, "train", columns):
        qid = str(row["question_id"])
        doc = {"context": row["context"], "input_text": row["text"], "category": row["category"]}
        answer = row["answer"]["gpt-4-0125-preview"]
        yield item(qid, row["text"], [image_of(row["image"])], answer, doc=doc)


def question_answer_image(
    source: Source, split: str, answer_column: str = "answer", id_column: str | None = None
) -> Iterator[TaskItem]:
    """Rows of question, image and answer; ids from `id_column` or the row index."""
    columns = ["question", "image", answer_column, *([id_column] if id_column else [])]
    for index, row in enumerate(source.rows(None, split, columns)):
        qid = str(row[id_column]) if id_column else str(index)
        question = row["question"]
        doc = {"input_text": question}
        yield item(qid, question, [image_of(row["image"])], row[answer_column], doc=doc)


def ja_vlm_bench_in_the_wild(source: Source, _options: Options) -> Iterator[TaskItem]:
    return question_answer_image(source, "test")


def llava_bench_in_the_wild(source: Source, _options: Options) -> Iterator[TaskItem]:
    return question_answer_image(source, "train", "gpt_answer", "question_id")


def ja_multi_image_vqa(source: Source, _options: Options) -> Iterator[TaskItem]:
    """The Task drops "<image> " (with its space) from the question."""
    for index, row in enumerate(source.rows(None, "test", ["question", "images", "answer"])):
        qid = str(index)
        images = [image_of(value) for value in row["images"]]
        question = row["question"]
        prompt = question.replace("<image> ", "")
        yield item(qid, prompt, images, row["answer"], doc={"input_text": question})


def jdocqa(source: Source, _options: Options) -> Iterator[TaskItem]:
    image_columns = ["image_0", "image_1", "image_2", "image_3"]
    columns = ["question_id", "question", "answer", "answer_type", *image_columns]
    for row in source.rows(None, "test", columns):
        qid = str(row["question_id"])
        images = [image_of(row[c]) for c in image_columns if row[c] is not None]
        doc = {"answer_type": row["answer_type"], "input_text": row["question"]}
        yield item(qid, row["question"], images, row["answer"], doc=doc)


def jic_vqa(source: Source, _options: Options) -> Iterator[TaskItem]:
    """The parquet file llm-jp-eval-mm's scripts/prepare_jic_vqa.py writes."""
    columns = ["question_id", "input_text", "answer", "image", "domain"]
    for row in source.rows(None, "train", columns):
        qid = str(row["question_id"])
        doc = {"domain": row["domain"], "input_text": row["input_text"]}
        yield item(qid, row["input_text"], [image_of(row["image"])], row["answer"], doc=doc)


MECHA_JA_INSTRUCTION = TaskText("mecha_ja.py", "MULTI_CHOICE_PROMPT")
CVQA_INSTRUCTION = TaskText("cvqa.py", "MULTI_CHOICE_PROMPT")


def choice_prompt(question: str, options: list[Any], instruction: str) -> str:
    """The question, its options as letters, then the instruction (construct_prompt)."""
    return f"{question}\n{letters_list(options)}\n\n{instruction}"


def mecha_ja(source: Source, options: Options) -> Iterator[TaskItem]:
    """Ids are row indices; with rotate_choices each row gives four items ("<i>_rot<k>"), its
    options turned left k places and the answer letter following."""
    instruction = MECHA_JA_INSTRUCTION.read(options.evalmm_dir)
    columns = ["question", "options", "answer", "answer_type", "image", "background_text"]
    for index, row in enumerate(source.rows(None, "test", columns)):
        base = row["options"]
        rotations = range(len(base)) if options.rotate_choices else [None]
        for turn in rotations:
            if turn is None:
                qid, choices, answer = str(index), base, row["answer"]
            else:
                qid = f"{index}_rot{turn}"
                choices = base[turn:] + base[:turn]
                answer = (row["answer"] - turn) % len(base)
            image = image_of(row["image"], resaves=1 if turn is None else 2)
            prompt = choice_prompt(row["question"], choices, instruction)
            doc = {
                "question_id": qid,
                "answer_type": row["answer_type"],
                "background_text": row["background_text"],
                "input_text": prompt,
            }
            yield item(qid, prompt, [image], chr(ord("A") + answer), doc=doc)


def cvqa(source: Source, options: Options) -> Iterator[TaskItem]:
    """The Japanese subset only; ids count its rows."""
    instruction = CVQA_INSTRUCTION.read(options.evalmm_dir)
    rows = source.rows(None, "test", ["Subset", "Question", "Options", "Label", "image"])
    japanese = (row for row in rows if row["Subset"] == "('Japanese', 'Japan')")
    for index, row in enumerate(japanese):
        qid = str(index)
        prompt = choice_prompt(row["Question"], row["Options"], instruction)
        answer = chr(ord("A") + row["Label"])
        yield item(qid, prompt, [image_of(row["image"])], answer)


def cc_ocr(source: Source, _options: Options) -> Iterator[TaskItem]:
    """multi_lan_ocr's Japanese rows; images are base64 text the Task decodes itself."""
    rows = source.rows("multi_lan_ocr", "test", ["l2-category", "question", "answer", "image"])
    japanese = (row for row in rows if row["l2-category"] == "Japanese")
    for index, row in enumerate(japanese):
        qid = str(index)
        image = base64_image(row["image"])
        yield item(
            qid, row["question"], [image], row["answer"], doc={"input_text": row["question"]}
        )


def base64_image(value: Any) -> TaskImage:
    if not isinstance(value, str):
        return broken_image(f"the dataset holds {type(value).__name__}, not base64 text")
    return TaskImage(data=value.encode("ascii", "replace"), decoding="plain", base64_text=True)


# --- multiple-subject exams: all configs in order ------------------------------------------

MMMU_IMAGE_COLUMNS = [f"image_{n}" for n in range(1, 8)]


def mmmu_prompt(row: Row, choice_instruction: str, open_instruction: str) -> str:
    """The question, its options as letters then the multiple-choice instruction, or the
    open-question instruction; "<image N>" kept."""
    question = row["question"].replace("<image1>", "<image 1>")
    if row["question_type"] == "multiple-choice":
        options = ast.literal_eval(row["options"])
        return choice_prompt(question, options, choice_instruction)
    return f"{question}\n\n{open_instruction}"


def mmmu_items(
    source: Source, task: str, split: str, evalmm_dir: Path | None
) -> Iterator[TaskItem]:
    """Images: those the prompt names ("<image N>"), sorted by column name, as RGB; the
    prompt's "<image 1>" … "<image 7>" become "<image>". The instructions: MULTI_CHOICE_PROMPT
    and OPEN_ENDED_PROMPT of the task's module (mmmu.py, jmmmu.py)."""
    choice_instruction = TaskText(f"{task}.py", "MULTI_CHOICE_PROMPT").read(evalmm_dir)
    open_instruction = TaskText(f"{task}.py", "OPEN_ENDED_PROMPT").read(evalmm_dir)
    columns = ["id", "question", "options", "question_type", "answer"]
    for config in source.config_names():
        for row in source.rows(config, split, columns, MMMU_IMAGE_COLUMNS):
            qid = str(row["id"])
            full = mmmu_prompt(row, choice_instruction, open_instruction)
            names = sorted({f"image_{n}" for n in re.findall(r"<image (\d+)>", full)})
            images = []
            for name in names:
                if row.get(name) is None:
                    images.append(broken_image(f"the prompt names {name}, which is empty"))
                else:
                    images.append(image_of(row[name], convert_rgb=True))
            prompt = full
            for n in range(1, 8):
                prompt = prompt.replace(f"<image {n}>", "<image>")
            doc = {
                "id": row["id"],
                "question_type": row["question_type"],
                "options": row["options"],
                "answer": row["answer"],
                "input_text": prompt,
            }
            yield item(qid, prompt, images, row["answer"], doc=doc)


def jmmmu(source: Source, options: Options) -> Iterator[TaskItem]:
    return mmmu_items(source, "jmmmu", "test", options.evalmm_dir)


def mmmu(source: Source, options: Options) -> Iterator[TaskItem]:
    return mmmu_items(source, "mmmu", "validation", options.evalmm_dir)


def mmmlu(source: Source, options: Options) -> Iterator[TaskItem]:
    """Text only: the row's fields put in the f-string that `build_prompt` in
    MMMLU._prepare_dataset (mmmlu.py) returns, texts and fields in its order."""
    scope = "MMMLU._prepare_dataset.build_prompt"
    template = task_fstring("mmmlu.py", scope, options.evalmm_dir)
    keys = [part.key for part in template if isinstance(part, KeyField)]
    columns = list(dict.fromkeys(["Unnamed: 0", "Answer", *keys]))
    for row in source.rows("JA_JP", "test", columns):
        prompt = "".join(
            part if isinstance(part, str) else format(row[part.key]) for part in template
        )
        yield item(str(row["Unnamed: 0"]), prompt, [], row["Answer"], doc={"input_text": prompt})


# --- JaWildText ------------------------------------------------------------------------------

JAWILDTEXT = "llm-jp/jawildtext"
BOARD_SUFFIX = TaskText("jawildtext_board_vqa.py", "BOARD_VQA_PROMPT_SUFFIX")
HANDWRITING_PROMPT = TaskText("jawildtext_handwriting_ocr.py", "HANDWRITING_OCR_PROMPT")
RECEIPT_PROMPT = TaskText("jawildtext_receipt_kie.py", "RECEIPT_KIE_PROMPT")


def jawildtext_board_vqa(source: Source, options: Options) -> Iterator[TaskItem]:
    suffix = BOARD_SUFFIX.read(options.evalmm_dir)
    for index, row in enumerate(source.rows("board_vqa", "train", ["question", "answer", "image"])):
        qid = str(index)
        prompt = (row["question"] or "") + suffix
        answer = row["answer"] or ""
        yield item(qid, prompt, [image_of(row["image"])], answer, doc={"input_text": prompt})


def reading_order(polygons: list[dict[str, Any]] | None) -> str:
    """The polygons' texts top to bottom, then left to right, by centroid; one a line."""
    if not polygons:
        return ""

    def centroid(annotation: dict[str, Any]) -> tuple[float, float]:
        points = annotation.get("polygon") or []
        if not points:
            return (0.0, 0.0)
        ys = [point[1] for point in points]
        xs = [point[0] for point in points]
        return (sum(ys) / len(ys), sum(xs) / len(xs))

    ordered = sorted(polygons, key=centroid)
    return "\n".join(a["text"] for a in ordered if a.get("text"))


def jawildtext_handwriting_ocr(source: Source, options: Options) -> Iterator[TaskItem]:
    prompt = HANDWRITING_PROMPT.read(options.evalmm_dir)
    rows = source.rows("handwriting_ocr", "train", ["polygons", "image"])
    for index, row in enumerate(rows):
        qid = str(index)
        answer = reading_order(row["polygons"])
        yield item(qid, prompt, [image_of(row["image"])], answer, doc={"input_text": prompt})


def field_value(value: Any) -> Any:
    return value.get("value") if isinstance(value, dict) else None


def receipt_gold(fields: dict[str, Any] | None) -> str:
    """The gold receipt as JSON: the scalar fields' values, then the line items'."""
    if not fields:
        return json.dumps(dict.fromkeys(SCALAR_FIELDS), ensure_ascii=False)
    gold: dict[str, Any] = {name: field_value(fields.get(name, {})) for name in SCALAR_FIELDS}
    gold["line_items"] = [
        {name: field_value(line.get(name, {})) for name in LINE_ITEM_FIELDS}
        for line in fields.get("line_items") or []
        if isinstance(line, dict)
    ]
    return json.dumps(gold, ensure_ascii=False)


def jawildtext_receipt_kie(source: Source, options: Options) -> Iterator[TaskItem]:
    prompt = RECEIPT_PROMPT.read(options.evalmm_dir)
    for index, row in enumerate(source.rows("receipt_kie", "train", ["fields", "image"])):
        qid = str(index)
        answer = receipt_gold(row["fields"])
        yield item(qid, prompt, [image_of(row["image"])], answer, doc={"input_text": prompt})


# --- English tasks ---------------------------------------------------------------------------

AI2D_SUFFIX = TaskText("ai2d.py", "post_prompt", "AI2D.doc_to_text")
BLINK_SUFFIX = TaskText("blink.py", "post_prompt", "BLINK.doc_to_text")
DOCVQA_SUFFIX = TaskText("docvqa.py", "post_prompt", "DocVQA.doc_to_text")
INFOGRAPHICVQA_SUFFIX = TaskText("infographicvqa.py", "post_prompt", "InfographicVQA.doc_to_text")
CHARTQA_SUFFIX = TaskText("chartqa.py", "post_prompt", "ChartQA.doc_to_text")
CHARTQAPRO_SUFFIX = TaskText("chartqapro.py", "post_prompt", "ChartQAPro.doc_to_text")
BLINK_CONFIGS = [
    "Art_Style",
    "Counting",
    "Forensic_Detection",
    "Functional_Correspondence",
    "IQ_Test",
    "Jigsaw",
    "Multi-view_Reasoning",
    "Object_Localization",
    "Relative_Depth",
    "Relative_Reflectance",
    "Semantic_Correspondence",
    "Spatial_Relation",
    "Visual_Correspondence",
    "Visual_Similarity",
]


def ai2d(source: Source, options: Options) -> Iterator[TaskItem]:
    suffix = AI2D_SUFFIX.read(options.evalmm_dir)
    for index, row in enumerate(
        source.rows(None, "test", ["question", "options", "answer", "image"])
    ):
        qid = str(index)
        prompt = f"{row['question']}\n{letters_list(row['options'])}{suffix}"
        answer = chr(ord("A") + int(row["answer"]))
        yield item(qid, prompt, [image_of(row["image"])], answer)


def blink(source: Source, options: Options) -> Iterator[TaskItem]:
    """The fourteen configs in the Task's order, ids counting over all of them."""
    suffix = BLINK_SUFFIX.read(options.evalmm_dir)
    index = 0
    image_columns = ["image_1", "image_2", "image_3", "image_4"]
    for config in BLINK_CONFIGS:
        for row in source.rows(config, "val", ["prompt", "answer"], image_columns):
            qid = f"blink_val_{index}"
            index += 1
            images = [image_of(row[c]) for c in image_columns if row.get(c) is not None]
            answer = row["answer"]
            if answer.startswith("(") and answer.endswith(")"):
                answer = answer[1:-1]
            yield item(qid, f"{row['prompt']}{suffix}", images, answer)


def docvqa_config(source: Source, config: str, suffix: str) -> Iterator[TaskItem]:
    columns = ["questionId", "question", "answers", "image"]
    for row in source.rows(config, "validation", columns):
        qid = str(row["questionId"])
        prompt = f"{row['question']}{suffix}"
        yield item(qid, prompt, [image_of(row["image"])], row["answers"])


def docvqa(source: Source, options: Options) -> Iterator[TaskItem]:
    return docvqa_config(source, "DocVQA", DOCVQA_SUFFIX.read(options.evalmm_dir))


def infographicvqa(source: Source, options: Options) -> Iterator[TaskItem]:
    suffix = INFOGRAPHICVQA_SUFFIX.read(options.evalmm_dir)
    return docvqa_config(source, "InfographicVQA", suffix)


def textvqa(source: Source, _options: Options) -> Iterator[TaskItem]:
    for row in source.rows(None, "validation", ["question_id", "question", "answers", "image"]):
        qid = str(row["question_id"])
        yield item(qid, row["question"], [image_of(row["image"])], row["answers"])


def okvqa(source: Source, _options: Options) -> Iterator[TaskItem]:
    """Answers: the annotators' distinct answers in order."""
    for row in source.rows(None, "val2014", ["question_id", "question", "answers", "image"]):
        qid = str(row["question_id"])
        answers = list(dict.fromkeys(row["answers"]))
        yield item(qid, row["question"], [image_of(row["image"])], answers)


def chartqa(source: Source, options: Options) -> Iterator[TaskItem]:
    """The answer: `label` where the dataset has it, else `answer`, as a list."""
    suffix = CHARTQA_SUFFIX.read(options.evalmm_dir)
    rows = source.rows(None, "test", ["question", "image"], ["label", "answer"])
    for index, row in enumerate(rows):
        qid = str(index)
        if not row["question"]:
            raise DataError(f"chartqa item {qid}: no question")
        answer = row["label"] if "label" in row else row.get("answer", "")
        answers = answer if isinstance(answer, list) else [str(answer)]
        prompt = f"{row['question']}{suffix}"
        yield item(qid, prompt, [image_of(row["image"])], answers)


def chartqapro_image(value: Any) -> TaskImage:
    """Raw bytes, base64 text (maybe a data URL) or an Image feature."""
    if isinstance(value, bytes):
        return TaskImage(data=value, decoding="plain")
    if isinstance(value, str):
        return base64_image(value)
    return image_of(value)


def chartqapro_answers(answer: Any) -> list[str]:
    if isinstance(answer, list):
        return [str(a) for a in answer if a]
    return [str(answer)] if answer else []


def chartqapro(source: Source, options: Options) -> Iterator[TaskItem]:
    """Ids are "<first year>_<row index>": the Task's own (year and Python's per-process
    string hash of the question) change from run to run, so they cannot be reproduced."""
    suffix = CHARTQAPRO_SUFFIX.read(options.evalmm_dir)
    for index, row in enumerate(
        source.rows(None, "test", ["Question", "image"], ["Year", "Answer"])
    ):
        years = row.get("Year")
        qid = f"{years[0] if years else 'unknown'}_{index}"
        prompt = f"{row['Question'][0]}{suffix}"
        answers = chartqapro_answers(row.get("Answer", []))
        yield item(qid, prompt, [chartqapro_image(row["image"])], answers)
