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
) -> Path:
    """A dataset repository: config → split → columns; files under data/<config>/ and a README
    listing them (a config named "default" under data/)."""
    lines = ["---", "configs:"]
    for config, splits in configs.items():
        lines.append(f"- config_name: {config}")
        lines.append("  data_files:")
        prefix = "data" if config == "default" else f"data/{config}"
        for split, columns in splits.items():
            lines.append(f"  - split: {split}")
            lines.append(f"    path: {prefix}/{split}-*")
            file = folder / prefix / f"{split}-00000-of-00001.parquet"
            write_table(file, columns, images, image_lists)
    lines += ["---", "", "A small dataset for pfgen_fast's tests."]
    (folder / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


# --- one writer per task -------------------------------------------------------------------


def ja_vg_vqa_500(folder: Path) -> Path:
    columns = {
        "image_id": [11, 12],
        "image": [make_image(1, fmt="JPEG"), make_image(2, (20, 30))],
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
    """Two subjects (in a non-alphabetical order), multiple-choice and open questions with
    numbered image placeholders in the question and the options."""
    subjects = ["Math", "Art"] if not japanese else ["Japanese_Art", "Accounting"]
    configs = {}
    for s, subject in enumerate(subjects):
        question_1 = (
            "<image 2> と <image1> を比べよ。" if japanese else "Compare <image 2> and <image1>."
        )
        question_2 = "What is shown in <image 1>?"
        columns = {
            "id": [f"{split}_{subject}_1", f"{split}_{subject}_2", f"{split}_{subject}_3"],
            "question": [question_1, question_2, "How many? No image here."],
            "options": [str(["A cat", "<image 3>", "None"]), "[]", str(["1", "2"])],
            "explanation": ["", "", ""],
            "image_1": [make_image(10 + s, mode="P"), make_image(12 + s), None],
            "image_2": [make_image(14 + s, mode="RGBA"), None, None],
            "image_3": [make_image(16 + s, fmt="JPEG"), None, None],
            "image_4": [None, None, None],
            "image_5": [None, None, None],
            "image_6": [None, None, None],
            "image_7": [None, None, None],
            "img_type": ["['Photo']", "['Photo']", "[]"],
            "answer": ["B", "a flower", "A"],
            "topic_difficulty": ["Easy", "Medium", "Hard"],
            "question_type": ["multiple-choice", "open", "multiple-choice"],
            "subfield": ["x", "y", "z"],
        }
        configs[subject] = {split: columns, "dev": {k: v[:1] for k, v in columns.items()}}
    image_columns = tuple(f"image_{n}" for n in range(1, 8))
    return write_repo(folder, configs, images=image_columns)


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
        "image": [make_image(20, fmt="JPEG"), make_image(21)],
        "background_text": ["", "背景の説明"],
    }
    return write_repo(folder, {"default": {"test": columns}}, images=("image",))


WRITERS: dict[str, Callable[[Path], Path]] = {
    "ja-vg-vqa-500": ja_vg_vqa_500,
    "ja-vlm-bench-in-the-wild": ja_vlm_bench_in_the_wild,
    "jmmmu": jmmmu,
    "mmmu": mmmu,
    "mecha-ja": mecha_ja,
}


def base64_text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
