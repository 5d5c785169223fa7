"""Small local copies of llm-jp-eval-mm's datasets in the Hub layout (parquet files with the
`huggingface` features metadata, a README.md whose YAML lists configs and splits), with
Pillow-made images, one writer per task."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from pfgen_fast.evalmm.tasks.items import BLINK_CONFIGS

IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
Columns = dict[str, list[Any]]


def make_image(
    seed: int,
    size: tuple[int, int] = (24, 16),
    fmt: str = "PNG",
    mode: str = "RGB",
    orientation: int | None = None,
) -> bytes:
    """An image whose pixels depend on `seed` (a gradient and a block), saved as `fmt`."""
    image = Image.new("RGB", size)
    width, height = size
    image.putdata(
        [
            ((x * 7 + seed * 31) % 256, (y * 11 + seed * 17) % 256, ((x + y) * 5 + seed) % 256)
            for y in range(height)
            for x in range(width)
        ]
    )
    if mode == "P":
        image = image.quantize(16)
    elif mode != "RGB":
        image = image.convert(mode)
    buffer = BytesIO()
    options: dict[str, Any] = {}
    if orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = orientation
        options["exif"] = exif.tobytes()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def stored(data: bytes | None) -> dict[str, Any] | None:
    return None if data is None else {"bytes": data, "path": None}


def write_table(
    file: Path, columns: Columns, images: tuple[str, ...] = (), image_lists: tuple[str, ...] = ()
) -> None:
    """A parquet file with `images` (and lists of them) stored as `datasets`' Image feature."""
    import datasets

    arrays, names = [], []
    for name, values in columns.items():
        if name in images:
            arrays.append(pa.array([stored(v) for v in values], type=IMAGE_TYPE))
        elif name in image_lists:
            arrays.append(
                pa.array([[stored(v) for v in vs] for vs in values], type=pa.list_(IMAGE_TYPE))
            )
        else:
            arrays.append(pa.array(values))
        names.append(name)
    table = pa.Table.from_arrays(arrays, names=names)
    features = datasets.Features.from_arrow_schema(table.schema)
    for name in images:
        features[name] = datasets.Image()
    for name in image_lists:
        features[name] = datasets.List(datasets.Image())
    metadata = {"huggingface": json.dumps({"info": {"features": features.to_dict()}})}
    file.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(metadata), file, row_group_size=3)


def write_repo(
    folder: Path,
    configs: dict[str, dict[str, Columns]],
    images: tuple[str, ...] = (),
    image_lists: tuple[str, ...] = (),
    under: str = "data",
    shards: int = 1,
) -> Path:
    """A dataset repository: config → split → columns, configs listed in the README in the
    order given. Files go under `under`/<config>/ (a config named "default": `under`/; MMMU
    and JMMMU keep theirs at the top, `under` empty), each split in `shards` files of
    consecutive rows (`test-00001-of-00002.parquet`, as the Hub names them)."""
    lines = ["---", "configs:"]
    for config, splits in configs.items():
        lines.append(f"- config_name: {config}")
        lines.append("  data_files:")
        prefix = "/".join(part for part in (under, "" if config == "default" else config) if part)
        for split, columns in splits.items():
            lines.append(f"  - split: {split}")
            lines.append(f"    path: {prefix + '/' if prefix else ''}{split}-*")
            rows = len(next(iter(columns.values())))
            files = min(shards, rows)  # no empty file
            for shard in range(files):
                start, stop = rows * shard // files, rows * (shard + 1) // files
                part = {name: values[start:stop] for name, values in columns.items()}
                name = f"{split}-{shard:05d}-of-{files:05d}.parquet"
                write_table(folder / prefix / name, part, images, image_lists)
    lines += ["---", "", "A small dataset for pfgen_fast's tests."]
    (folder / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


# --- one writer per task -------------------------------------------------------------------


def ja_vg_vqa_500(folder: Path) -> Path:
    columns = {
        "image_id": [11, 12],
        "image": [make_image(1, fmt="JPEG", orientation=6), make_image(2, (20, 30))],
        "qas": [
            [
                {"qa_id": 101, "question": "何色ですか？", "answer": "赤"},
                {"qa_id": 102, "question": "何人いますか？", "answer": "二人"},
            ],
            [{"qa_id": 103, "question": "<image>ここはどこ？", "answer": "駅"}],
        ],
    }
    return write_repo(folder, {"default": {"test": columns}}, images=("image",))


def ja_vlm_bench_in_the_wild(folder: Path) -> Path:
    columns = {
        "page_url": ["https://example.com/1", "https://example.com/2", "https://example.com/3"],
        "image": [
            make_image(3, fmt="JPEG", orientation=6),
            make_image(4, mode="RGBA"),
            make_image(5, fmt="WEBP"),
        ],
        "question": ["この看板には何と書いてありますか？", "猫は何匹？", "天気は？"],
        "answer": ["営業中", "3匹", "晴れ"],
    }
    return write_repo(folder, {"default": {"test": columns}}, images=("image",))


def mmmu_like(folder: Path, split: str, japanese: bool) -> Path:
    """Two subjects (in a non-alphabetical order, each in its own top-level folder as in the
    MMMU and JMMMU repositories), multiple-choice and open questions with numbered image
    placeholders in the question and the options, image columns with gaps (a row naming
    only <image 3>, with image_1 present and image_2 empty)."""
    subjects = ["Math", "Art"] if not japanese else ["Japanese_Art", "Accounting"]
    configs = {}
    for s, subject in enumerate(subjects):
        question_1 = (
            "<image 2> と <image1> を比べよ。" if japanese else "Compare <image 2> and <image1>."
        )
        question_2 = "What is shown in <image 1>?"
        columns = {
            "id": [f"{split}_{subject}_{n}" for n in range(1, 5)],
            "question": [question_1, question_2, "How many? No image here.", "See <image 3>."],
            "options": [str(["A cat", "<image 3>", "None"]), "[]", str(["1", "2"]), "[]"],
            "explanation": ["", "", "", ""],
            "image_1": [make_image(10 + s, mode="P"), make_image(12 + s), None, make_image(18)],
            "image_2": [make_image(14 + s, mode="RGBA"), None, None, None],
            "image_3": [
                make_image(16 + s, fmt="JPEG"),
                None,
                None,
                make_image(19 + s, fmt="JPEG", orientation=6),
            ],
            "image_4": [None] * 4,
            "image_5": [None] * 4,
            "image_6": [None] * 4,
            "image_7": [None] * 4,
            "img_type": ["['Photo']", "['Photo']", "[]", "['Diagrams']"],
            "answer": ["B", "a flower", "A", "12"],
            "topic_difficulty": ["Easy", "Medium", "Hard", "Easy"],
            "question_type": ["multiple-choice", "open", "multiple-choice", "open"],
            "subfield": ["x", "y", "z", "w"],
        }
        configs[subject] = {split: columns, "dev": {k: v[:1] for k, v in columns.items()}}
    image_columns = tuple(f"image_{n}" for n in range(1, 8))
    return write_repo(folder, configs, images=image_columns, under="")


def jmmmu(folder: Path) -> Path:
    return mmmu_like(folder, "test", japanese=True)


def mmmu(folder: Path) -> Path:
    return mmmu_like(folder, "validation", japanese=False)


def mecha_ja(folder: Path) -> Path:
    columns = {
        "question_id": ["q-a", "q-b"],
        "question": ["この建物は何？", "何が見えますか？"],
        "options": [["寺", "城", "塔", "駅"], ["山", "海", "川", "空"]],
        "answer": [1, 3],
        "answer_type": [0, 1],
        "image": [make_image(20, fmt="JPEG", orientation=8), make_image(21)],
        "background_text": [None, "背景の説明"],
    }
    return write_repo(folder, {"default": {"test": columns}}, images=("image",))


def japanese_heron_bench(folder: Path) -> Path:
    columns = {
        "question_id": [1, 2, 3],
        "image": [make_image(30), make_image(31, fmt="JPEG"), make_image(32, mode="L")],
        "text": ["写真について説明してください。", "<image>何が写っていますか？", "色は？"],
        "context": ["公園の写真", "駅の写真", "花の写真"],
        "category": ["detail", "conv", "complex"],
        "answer": [
            {"gpt-4-0125-preview": "公園です。", "claude-3-opus-20240229": "公園"},
            {"gpt-4-0125-preview": "電車です。", "claude-3-opus-20240229": "電車"},
            {"gpt-4-0125-preview": "赤です。", "claude-3-opus-20240229": "赤"},
        ],
    }
    return write_repo(folder, {"default": {"train": columns}}, images=("image",))


def ja_multi_image_vqa(folder: Path) -> Path:
    columns = {
        "images": [
            [make_image(40), make_image(41, fmt="JPEG", orientation=6)],
            [make_image(42, mode="RGBA")],
        ],
        "question": ["<image> <image> 二つの画像の違いは？", "<image>この画像は何？<image>"],
        "answer": ["色が違う", "犬"],
        "page_url": ["a", "b"],
    }
    return write_repo(folder, {"default": {"test": columns}}, image_lists=("images",))


def jdocqa(folder: Path) -> Path:
    columns = {
        "question_id": [7, 8, 9],
        "question": ["この文書の題名は？", "はいかいいえで答えて。", "何年ですか？"],
        "answer": ["報告書", "はい", "2020年"],
        "answer_type": [3, 0, 2],
        "image_0": [make_image(50), make_image(51), make_image(52)],
        "image_1": [make_image(53, fmt="JPEG"), None, make_image(54)],
        "image_2": [None, None, make_image(55)],
        "image_3": [None, None, None],
    }
    return write_repo(
        folder,
        {"default": {"test": columns}},
        images=("image_0", "image_1", "image_2", "image_3"),
    )


def llava_bench_in_the_wild(folder: Path) -> Path:
    columns = {
        "question_id": [0, 1],
        "question": ["What is unusual about this image?", "Describe the photo."],
        "image": [make_image(60, fmt="JPEG"), make_image(61)],
        "caption": ["c0", "c1"],
        "gpt_answer": ["A man ironing.", "A sunny beach."],
        "category": ["complex", "detail"],
        "image_id": ["001", "002"],
    }
    return write_repo(folder, {"default": {"train": columns}}, images=("image",))


def jic_vqa(folder: Path) -> Path:
    """The parquet file scripts/prepare_jic_vqa.py writes, as folder/jic_vqa.parquet: the
    category (the answer) and the URL as webdataset gives them back, 224x224 JPEGs, integer
    ids, and a null domain for a question naming none of the script's four keywords."""
    urls = ["https://example.com/a.jpg", "https://example.com/b.jpg", "https://example.com/c.jpg"]
    columns = {
        "category": ["桜", "東京タワー", "寿司"],
        "url": [url.encode() for url in urls],
        "input_text": ["この花の名前は？", "これは何ですか？", "この食べ物は何ですか？"],
        "answer": ["桜", "東京タワー", "寿司"],
        "image": [make_image(70 + n, (224, 224), fmt="JPEG") for n in range(3)],
        "question_id": [1001, 1068, 1002],
        "domain": ["jaflower30", None, "jafood101"],
    }
    write_table(folder / "jic_vqa.parquet", columns, images=("image",))
    return folder


def mmmlu(folder: Path) -> Path:
    def columns(language: str) -> Columns:
        return {
            "Unnamed: 0": [0, 1],
            "Question": [f"{language}: 1+1は？", f"{language}: 日本の首都は？"],
            "A": ["1", "大阪"],
            "B": ["2", "東京"],
            "C": ["3", "京都"],
            "D": ["4", "札幌"],
            "Answer": ["B", "B"],
            "Subject": ["math", "geography"],
        }

    configs = {
        "default": {"test": columns("all")},
        "FR_FR": {"test": columns("fr")},
        "JA_JP": {"test": columns("ja")},
    }
    return write_repo(folder, configs)


def cc_ocr(folder: Path) -> Path:
    def columns(kind: str) -> Columns:
        return {
            "index": [0, 1, 2, 3],
            "l2-category": ["Japanese", "Korean", "Japanese", "French"],
            "question": [f"{kind}: 画像の文字を読んで", "q", f"{kind}: 文字を全部", "q"],
            "answer": ["こんにちは", "x", "さようなら", "y"],
            "image": [
                base64_text(make_image(80)),
                base64_text(make_image(81)),
                base64_text(make_image(82, fmt="JPEG")),
                base64_text(make_image(83)),
            ],
        }

    configs = {"doc_parsing": {"test": columns("doc")}, "multi_lan_ocr": {"test": columns("ocr")}}
    return write_repo(folder, configs)


def cvqa(folder: Path) -> Path:
    columns = {
        "image": [
            make_image(90 + i, fmt="JPEG" if i % 2 else "PNG", orientation=3 if i == 3 else None)
            for i in range(4)
        ],
        "ID": ["a", "b", "c", "d"],
        "Subset": [
            "('Japanese', 'Japan')",
            "('Korean', 'South Korea')",
            "('Japanese', 'Japan')",
            "('Japanese', 'Japan')",
        ],
        "Question": ["これは何？", "q", "どこ？", "いつ？"],
        "Translated Question": ["What?", "q", "Where?", "When?"],
        "Options": [["寿司", "天ぷら", "蕎麦", "うどん"], ["a", "b", "c", "d"]]
        + [["東", "西", "南", "北"]] * 2,
        "Translated Options": [["s", "t", "so", "u"], ["a", "b", "c", "d"]]
        + [["e", "w", "s", "n"]] * 2,
        "Label": [2, 0, 3, 0],
        "Category": ["food", "x", "place", "time"],
    }
    return write_repo(folder, {"default": {"test": columns}}, images=("image",))


def ai2d(folder: Path) -> Path:
    columns = {
        "question": ["Which label shows the sun?", "What eats grass?"],
        "options": [["A", "B", "C", "D"], ["cow", "lion", "grass"]],
        "answer": ["2", "0"],
        "image": [make_image(100), make_image(101, fmt="JPEG")],
    }
    return write_repo(folder, {"default": {"test": columns}}, images=("image",))


def blink(folder: Path) -> Path:
    """The fourteen configs listed in the README in an order other than the Task's (which
    reads its own list), each with val and test splits and empty image columns."""
    configs = {}
    for c, config in enumerate(reversed(BLINK_CONFIGS)):
        rows = 1 + c % 2
        images = [[make_image(110 + c * 4 + n) for _ in range(rows)] for n in range(4)]
        columns = {
            "idx": [f"val_{config}_{r}" for r in range(rows)],
            "question": [f"{config} question {r}" for r in range(rows)],
            "sub_task": [config] * rows,
            "image_1": images[0],
            "image_2": images[1] if c % 3 else [None] * rows,
            "image_3": images[2] if c % 3 == 2 else [None] * rows,
            "image_4": [None] * rows,
            "choices": [["(A) left", "(B) right"]] * rows,
            "answer": ["(A)", "B"][:rows],
            "prompt": [f"{config}?\nSelect from the following choices.\n(A) left\n(B) right"]
            * rows,
            "explanation": [""] * rows,
        }
        configs[config] = {"val": columns, "test": columns}
    image_columns = ("image_1", "image_2", "image_3", "image_4")
    return write_repo(folder, configs, images=image_columns)


def docvqa_repo(folder: Path) -> Path:
    """Two configs, each split in two files (the items run on across them); test rows have
    no answers."""

    def columns(kind: str, offset: int, answered: bool = True) -> Columns:
        return {
            "questionId": [f"{offset + n}" for n in range(3)],
            "question": [f"{kind}: what is the date?", f"{kind}: who signed?", f"{kind}: total?"],
            "question_types": [["handwritten"], ["layout"], ["table/list"]],
            "image": [
                make_image(offset % 200),
                make_image(offset % 200 + 1, fmt="JPEG"),
                make_image(offset % 200 + 2, mode="L"),
            ],
            "docId": [offset, offset, offset + 1],
            "ucsf_document_id": ["x", "y", "z"],
            "ucsf_document_page_no": ["1", "2", "1"],
            "answers": [["1/2/1990", "Jan 2 1990"], ["Smith"], ["$10"]]
            if answered
            else [None, None, None],
            "data_split": ["val"] * 3 if answered else ["test"] * 3,
        }

    configs = {
        "DocVQA": {"validation": columns("doc", 120), "test": columns("doctest", 130, False)},
        "InfographicVQA": {
            "validation": columns("info", 140),
            "test": columns("infotest", 150, False),
        },
    }
    return write_repo(folder, configs, images=("image",), shards=2)


def textvqa(folder: Path) -> Path:
    """Train, validation and test splits (test without answers), validation in two files."""
    columns = {
        "image_id": ["i1", "i2", "i3"],
        "question_id": [34602, 34603, 34604],
        "question": ["what is the brand?", "what time is it?", "what does the sign say?"],
        "question_tokens": [["what", "is"], ["what", "time"], ["what", "sign"]],
        "image": [make_image(160, fmt="JPEG"), make_image(161), make_image(162, mode="RGBA")],
        "image_width": [24, 24, 24],
        "image_height": [16, 16, 16],
        "flickr_original_url": ["u1", "u2", "u3"],
        "flickr_300k_url": ["s1", "s2", "s3"],
        "answers": [["nokia"] * 3 + ["toshiba"], ["noon", "12:00"], ["stop"] * 10],
        "image_classes": [["phone"], ["clock"], ["sign"]],
        "set_name": ["val"] * 3,
        "ocr_tokens": [["nokia"], ["12"], []],
    }
    test = {**{k: v[:1] for k, v in columns.items()}, "answers": [None], "set_name": ["test"]}
    train = {**{k: v[1:] for k, v in columns.items()}, "set_name": ["train"] * 2}
    splits = {"train": train, "validation": columns, "test": test}
    return write_repo(folder, {"default": splits}, images=("image",), shards=2)


def okvqa(folder: Path) -> Path:
    columns = {
        "question_id": ["2971475", "5766825"],
        "question": ["What sport can you use this for?", "Name the type of plant this is?"],
        "image": [make_image(170), make_image(171, fmt="JPEG")],
        "answers": [["race", "race", "motocross", "race", "motocross"], ["ivy"] * 10],
        "answer_type": ["other", "other"],
    }
    return write_repo(folder, {"default": {"val2014": columns}}, images=("image",))


def chartqa(folder: Path) -> Path:
    columns = {
        "type": ["human_test", "augmented_test"],
        "question": ["How many bars are there?", "What is the highest value?"],
        "answer": ["4", "12.5"],
        "image": [make_image(180), make_image(181)],
    }
    return write_repo(folder, {"default": {"test": columns}}, images=("image",))


def chartqapro(folder: Path) -> Path:
    """Images as plain binary (not an Image feature), which the Task opens itself: no EXIF
    orientation applied."""
    columns = {
        "Question": [["Which year is highest?"], ["What is the trend?", "Why?"], ["Max?"]],
        "Answer": [["2020"], ["rising", ""], []],
        "Question Type": ["Factoid", "Conversational", "Factoid"],
        "image": [
            make_image(190),
            make_image(191, fmt="JPEG"),
            make_image(192, fmt="JPEG", orientation=6),
        ],
        "Year": [["2020", "2021"], [], ["1999"]],
        "Paragraph": ["", "", "p"],
    }
    return write_repo(folder, {"default": {"test": columns}})


def jawildtext(folder: Path) -> Path:
    """One repository, three configs (the three JaWildText tasks)."""
    board = {
        "question": ["この掲示板の締め切りは？", None],
        "answer": ["3月1日", None],
        "image": [make_image(200, fmt="JPEG", orientation=6), make_image(201)],
    }
    handwriting = {
        "polygons": [
            [
                {"polygon": [[10.0, 40.0], [30.0, 40.0], [30.0, 50.0]], "text": "下の行"},
                {"polygon": [[50.0, 5.0], [60.0, 5.0], [60.0, 15.0]], "text": "右上"},
                {"polygon": [[1.0, 5.0], [9.0, 5.0], [9.0, 15.0]], "text": "左上"},
                {"polygon": [], "text": "先頭"},
                {"polygon": [[2.0, 2.0]], "text": ""},
            ],
            [],
        ],
        "image": [make_image(202), make_image(203, fmt="JPEG", orientation=8)],
    }
    receipt = {
        "fields": [
            {
                "store_name": {"value": "コンビニ"},
                "store_address": {"value": None},
                "receipt_id": None,
                "date": {"value": "2024/01/02"},
                "time": {"value": "12:34"},
                "total_amount": {"value": "¥1,080"},
                "tax_amount": {"value": "¥80"},
                "line_items": [
                    {
                        "item_name": {"value": "おにぎり"},
                        "item_price": {"value": "150"},
                        "item_quantity": None,
                    }
                ],
            },
            None,
        ],
        "image": [make_image(204, fmt="JPEG", orientation=3), make_image(205)],
    }
    configs = {
        "board_vqa": {"train": board},
        "handwriting_ocr": {"train": handwriting},
        "receipt_kie": {"train": receipt},
    }
    return write_repo(folder, configs, images=("image",))


WRITERS: dict[str, Callable[[Path], Path]] = {
    "ja-vg-vqa-500": ja_vg_vqa_500,
    "japanese-heron-bench": japanese_heron_bench,
    "ja-vlm-bench-in-the-wild": ja_vlm_bench_in_the_wild,
    "jmmmu": jmmmu,
    "ja-multi-image-vqa": ja_multi_image_vqa,
    "jdocqa": jdocqa,
    "mmmu": mmmu,
    "llava-bench-in-the-wild": llava_bench_in_the_wild,
    "jic-vqa": jic_vqa,
    "mecha-ja": mecha_ja,
    "mmmlu": mmmlu,
    "cc-ocr": cc_ocr,
    "cvqa": cvqa,
    "ai2d": ai2d,
    "blink": blink,
    "docvqa": docvqa_repo,
    "infographicvqa": docvqa_repo,
    "textvqa": textvqa,
    "chartqa": chartqa,
    "chartqapro": chartqapro,
    "okvqa": okvqa,
    "jawildtext-board-vqa": jawildtext,
    "jawildtext-handwriting-ocr": jawildtext,
    "jawildtext-receipt-kie": jawildtext,
}


def base64_text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
