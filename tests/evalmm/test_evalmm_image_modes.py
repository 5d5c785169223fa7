"""Every image mode Pillow reads from a file goes out in each `--image-format`: a mode the
chosen format cannot hold is converted as Pillow's viewers show it (RGBA where there is
transparency, else RGB or L), its EXIF orientation applied; through `mm run` too, where such
images (CMYK TIFF, float TIFF, a turned CMYK JPEG) used to fail their items."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from test_evalmm_run import TASK, mm_run, one_image_task

from pfgen_fast.evalmm.images import IMAGE_FORMATS, ORIENTATION, TaskImage, request_part
from pfgen_fast.testing import serve

SIZE = (24, 16)
# Every mode Pillow writes to a file (TIFF holds each) and reads back.
FILE_MODES = ["1", "L", "LA", "P", "PA", "RGB", "RGBA", "CMYK", "YCbCr", "LAB", "I", "I;16"]
FILE_MODES += ["I;16B", "F"]
# What a viewer shows of each mode a PNG cannot hold.
SHOWN_AS = {"PA": "RGBA", "CMYK": "RGB", "YCbCr": "RGB", "LAB": "RGB", "I": "L", "F": "L"}


def source(mode: str) -> Image.Image:
    """A picture with varied pixels in `mode` (transparent where the mode has alpha)."""
    picture = Image.linear_gradient("L").resize(SIZE).convert("RGBA")
    picture.putalpha(Image.linear_gradient("L").rotate(90).resize(SIZE))
    if mode in ("I", "I;16", "I;16B", "F"):
        return picture.convert("L").convert(mode)
    if mode == "PA":
        return picture.convert("RGB").convert("P").convert("PA")
    return picture.convert(mode)


def tiff(image: Image.Image, orientation: int | None = None) -> bytes:
    buffer = io.BytesIO()
    exif = Image.Exif()
    if orientation is not None:
        exif[ORIENTATION] = orientation
    image.save(buffer, format="TIFF", exif=exif)
    return buffer.getvalue()


def sent(part: dict[str, object]) -> Image.Image:
    url = part["image_url"]["url"]  # type: ignore[index]
    image = Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2])))
    image.load()
    return image


@pytest.mark.parametrize("image_format", IMAGE_FORMATS)
@pytest.mark.parametrize("mode", FILE_MODES)
def test_every_mode_goes_out_in_every_format(mode: str, image_format: str) -> None:
    data = tiff(source(mode))
    stored = Image.open(io.BytesIO(data))
    stored.load()
    assert stored.mode == mode
    out = sent(request_part(TaskImage(data=data), image_format))
    assert out.size == SIZE
    if image_format == "jpeg":
        assert out.mode in ("RGB", "L")
        return
    expected = stored.convert(SHOWN_AS[mode]) if mode in SHOWN_AS else stored
    assert out.format == "PNG"
    assert out.mode == expected.mode or {out.mode, expected.mode} == {"I;16", "I;16B"}
    assert np.array_equal(np.asarray(out), np.asarray(expected))


@pytest.mark.parametrize("image_format", IMAGE_FORMATS)
def test_a_turned_cmyk_jpeg_is_turned_in_every_format(image_format: str) -> None:
    buffer = io.BytesIO()
    exif = Image.Exif()
    exif[ORIENTATION] = 6  # turned a quarter clockwise
    source("CMYK").save(buffer, format="JPEG", exif=exif)
    out = sent(request_part(TaskImage(data=buffer.getvalue()), image_format))
    assert out.size == (SIZE[1], SIZE[0])
    assert out.mode == "RGB"


def test_mm_run_sends_images_png_cannot_hold(tmp_path: Path) -> None:
    turned = io.BytesIO()
    exif = Image.Exif()
    exif[ORIENTATION] = 6
    source("CMYK").save(turned, format="JPEG", exif=exif)
    cmyk = io.BytesIO()
    source("CMYK").save(cmyk, format="JPEG")
    images = [tiff(source("CMYK")), tiff(source("F")), turned.getvalue(), cmyk.getvalue()]
    data = one_image_task(tmp_path / "data", images)
    for image_format in ("original", "png"):
        out = tmp_path / image_format
        out.mkdir()
        with serve() as vlm:
            result = mm_run(vlm.base_url, data, out / "r", "--image-format", image_format)
        assert result.returncode == 0, result.stderr
        assert not (out / "r" / TASK / "org" / "vlm-1" / "error_message.jsonl").exists()
        sizes = sorted(request.images[0][1:] for request in vlm.received)
        assert sizes == sorted([SIZE, SIZE, (SIZE[1], SIZE[0]), SIZE]), image_format
