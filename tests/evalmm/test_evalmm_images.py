"""Images with an EXIF orientation reach the model as llm-jp-eval-mm's Tasks give them: each of
the eight orientations, in JPEG, PNG and WebP, against `datasets`' own decoding of the same
bytes (`datasets.Image().decode_example`), in every `--image-format`, through `mm run` to the
127.0.0.1 stand-in, and in `image_file` (the rule the site shows images by)."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from cli_runner import run_cli
from pfgen_fast.evalmm.images import MEDIA_TYPES, ORIENTATION, TaskImage, image_file, request_part
from pfgen_fast.testing import serve

datasets = pytest.importorskip("datasets")
import mm_datasets  # noqa: E402

ORIENTATIONS = range(1, 9)
FORMATS = ("JPEG", "PNG", "WEBP")
SIZE = (24, 16)  # stored width, height: orientations 5 to 8 swap them


def tagged(orientation: int | None, fmt: str = "JPEG", seed: int = 3) -> bytes:
    return mm_datasets.make_image(seed, SIZE, fmt=fmt, orientation=orientation)


def as_datasets_decodes(data: bytes) -> Image.Image:
    image: Image.Image = datasets.Image().decode_example({"bytes": data, "path": None})
    return image


def sent(part: dict[str, Any]) -> tuple[str, bytes]:
    head, _, payload = part["image_url"]["url"].partition(";base64,")
    return head.removeprefix("data:"), base64.b64decode(payload)


def opened(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def same_pixels(first: Image.Image, second: Image.Image) -> bool:
    return (first.size, first.mode, first.tobytes()) == (second.size, second.mode, second.tobytes())


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("orientation", ORIENTATIONS)
def test_each_orientation_is_sent_as_datasets_decodes_it(orientation: int, fmt: str) -> None:
    data = tagged(orientation, fmt)
    assert opened(data).getexif().get(ORIENTATION) == orientation
    expected = as_datasets_decodes(data)
    turned = orientation != 1
    image = TaskImage(data=data)
    assert same_pixels(image.open(), expected)

    media, original = sent(request_part(image, "original"))
    if turned:  # re-encoded losslessly, no tag left for a server to apply again
        assert media == "image/png"
        assert same_pixels(opened(original), expected)
        assert opened(original).getexif().get(ORIENTATION) is None
    else:  # byte for byte
        assert (media, original) == (f"image/{fmt.lower()}", data)

    media, png = sent(request_part(image, "png"))
    assert media == "image/png" and same_pixels(opened(png), expected)
    assert opened(png).getexif().get(ORIENTATION) is None

    part = request_part(image, "jpeg")
    media, jpeg = sent(part)
    buffer = io.BytesIO()
    expected.convert("RGB").save(buffer, format="JPEG")  # the original's API adapter
    assert (media, jpeg, part["image_url"]["detail"]) == ("image/jpeg", buffer.getvalue(), "auto")

    upright, kind = image_file(image, MEDIA_TYPES)  # the site's rule
    if turned:
        assert kind == "PNG" and upright == png
    else:
        assert (upright, kind) == (data, fmt)


def test_images_without_a_tag_are_kept() -> None:
    plain = tagged(None, "PNG")
    assert image_file(TaskImage(data=plain), MEDIA_TYPES) == (plain, "PNG")
    assert sent(request_part(TaskImage(data=plain), "original")) == ("image/png", plain)


def test_a_task_opening_its_own_bytes_gives_them_unturned() -> None:
    """CC-OCR and ChartQAPro open base64 text with PIL.Image.open, which applies no EXIF
    orientation: the model gets the stored pixels, so they go as PNG without the tag."""
    data = tagged(6, "JPEG")
    image = TaskImage(data=base64.b64encode(data), decoding="plain", base64_text=True)
    media, png = sent(request_part(image, "original"))
    assert media == "image/png" and opened(png).size == SIZE
    assert same_pixels(opened(png), opened(data))
    assert opened(png).getexif().get(ORIENTATION) is None


def test_mm_run_sends_turned_photos_as_the_task_gives_them(tmp_path: Path) -> None:
    columns = {
        "page_url": [f"https://example.com/{o}" for o in ORIENTATIONS],
        "image": [tagged(o, seed=o) for o in ORIENTATIONS],
        "question": [f"向き{o}：何が見えますか？" for o in ORIENTATIONS],
        "answer": [f"答え{o}" for o in ORIENTATIONS],
    }
    folder = mm_datasets.write_repo(
        tmp_path / "dataset", {"default": {"test": columns}}, images=("image",)
    )
    with serve() as vlm:
        result = run_cli(
            "mm", "run", "--task", "ja-vlm-bench-in-the-wild", "--model", "m",
            "--base-url", vlm.base_url, "--data", folder, "--out", tmp_path / "out",
            "--inference-only", cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    seen = {request.text.split("：")[0]: request.images for request in vlm.received}
    width, height = SIZE
    assert seen["向き1"] == [("image/jpeg", width, height)]
    for orientation in range(2, 5):
        assert seen[f"向き{orientation}"] == [("image/png", width, height)]
    for orientation in range(5, 9):
        assert seen[f"向き{orientation}"] == [("image/png", height, width)]
