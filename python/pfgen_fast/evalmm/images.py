"""Images as llm-jp-eval-mm's Tasks hand them to the model, and as `mm run` sends them.

The original's Tasks give the model decoded pixels: `datasets` applies an image's EXIF
orientation when it decodes it. A server given the stored file may or may not apply that tag,
so an image whose orientation is not the identity is sent as a PNG of the pixels the Task
gives (the turn baked in, no EXIF); every other image is sent as stored where the format allows.
`image_file` is that rule for any set of formats (the site shows its images by it).

Pillow warns of an image between its pixel limit and twice that (DecompressionBombWarning) and
refuses a larger one (DecompressionBombError). The original's Task decodes the former, so they
are sent, without the warning; the latter fail their items."""

from __future__ import annotations

import base64
import binascii
import io
import re
import warnings
from collections.abc import Container, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pfgen_fast.common.errors import DataError, PfgenError

if TYPE_CHECKING:
    from PIL import Image as PILImage

IMAGE_FORMATS = ("original", "png", "jpeg")
# Formats every OpenAI-compatible vision server takes as they are.
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
# The image modes Pillow writes to PNG.
PNG_MODES = frozenset({"1", "L", "LA", "P", "RGB", "RGBA", "I;16", "I;16B"})
# The image modes with an alpha band (premultiplied or not).
ALPHA_MODES = frozenset({"LA", "La", "PA", "RGBA", "RGBa"})
ORIENTATION = 0x0112  # the EXIF tag
# Orientations that move pixels (1 is the identity; other values are ignored by Pillow).
TURNING_ORIENTATIONS = range(2, 9)
# A Python object's default repr (`<_io.BytesIO object at 0x…>`), kept out of item errors.
OBJECT_REPR = re.compile(r"\s*<[\w.]+ object at 0x[0-9a-fA-F]+>")


@contextmanager
def pixel_limit_quiet() -> Iterator[None]:
    """Pillow's DecompressionBombWarning silenced while an image is opened or decoded."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        yield


def turns(image: PILImage.Image) -> bool:
    """Whether the image carries an EXIF orientation that turns or mirrors it."""
    return image.getexif().get(ORIENTATION) in TURNING_ORIENTATIONS


def decode(data: bytes) -> PILImage.Image:
    """An image file as `datasets`' Image feature decodes it: loaded, EXIF orientation
    applied."""
    from PIL import Image, ImageOps

    with pixel_limit_quiet():
        image: PILImage.Image = Image.open(io.BytesIO(data))
        image.load()
        if image.getexif().get(ORIENTATION) is not None:
            image = ImageOps.exif_transpose(image)
    return image


def encode_as_datasets(image: PILImage.Image) -> bytes:
    """An image as `datasets` stores a PIL image it is given: saved in its own format when
    Pillow can both read and write that format, else PNG (or TIFF for other modes)."""
    from PIL import Image

    Image.init()
    writable = set(Image.OPEN) & set(Image.SAVE)
    if image.format in writable:
        target = image.format
    else:
        target = "PNG" if image.mode in ("1", "L", "LA", "RGB", "RGBA") else "TIFF"
    buffer = io.BytesIO()
    image.save(buffer, format=target)
    return buffer.getvalue()


def viewable(image: PILImage.Image, modes: Container[str]) -> PILImage.Image:
    """The image in a mode among `modes` (those a file format holds): as it is when its mode
    is one, else converted as Pillow's viewers show it: RGBA where it has transparency, else
    its base mode (L or RGB: CMYK, YCbCr and LAB as RGB, 32-bit integers and floats as L)."""
    from PIL import Image

    if image.mode in modes:
        return image
    if image.mode in ALPHA_MODES or "transparency" in image.info:
        return image.convert("RGBA")
    return image.convert(Image.getmodebase(image.mode))


def png_bytes(image: PILImage.Image) -> bytes:
    """The pixels as PNG, without EXIF (Pillow writes no orientation unless asked), in a mode
    PNG holds (`viewable`)."""
    buffer = io.BytesIO()
    viewable(image, PNG_MODES).save(buffer, format="PNG")
    return buffer.getvalue()


def stored_format(data: bytes) -> tuple[str | None, bool]:
    """Pillow's name of the file's format (None: not an image it reads) and whether its EXIF
    orientation turns it (read from the header, the pixels are not decoded)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with pixel_limit_quiet(), Image.open(io.BytesIO(data)) as image:
            return image.format, turns(image)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None, False


def check_decodes(data: bytes, kind: str) -> None:
    """Raises Pillow's error when stored image bytes do not decode. Cheap where it can be: a
    PNG's chunk checksums, a JPEG's end marker (decoding it only when that is missing: some
    writers add bytes after it); other formats are decoded."""
    from PIL import Image

    if kind == "JPEG" and data.endswith(b"\xff\xd9"):
        return
    with pixel_limit_quiet(), Image.open(io.BytesIO(data)) as image:
        if kind == "PNG":
            image.verify()
        else:
            image.load()


def data_url_part(media_type: str, data: bytes) -> dict[str, Any]:
    url = f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


@dataclass(frozen=True, kw_only=True)
class TaskImage:
    """One image of an item, kept as the dataset stores it and decoded only when asked.

    `decoding`: "datasets" (an Image feature: decoded as `datasets` does) or "plain" (bytes the
    Task opens itself with `PIL.Image.open`). `base64_text`: `data` is base64 text (CC-OCR,
    ChartQAPro). `resaves`: how many times llm-jp-eval-mm's Task has `datasets` re-encode the
    decoded image before use (JA-VG-VQA-500's flattening, MECHA-ja's map and rotation: JPEG
    and WebP re-saved at Pillow's default quality); `open()` replays them, `stored()` gives
    the dataset's own bytes. `problem`: why the dataset's value gives no image (a file that
    cannot be read, a value that is not an image), raised when the image is used, so that it
    fails its item alone."""

    data: bytes
    decoding: Literal["datasets", "plain"] = "datasets"
    convert_rgb: bool = False
    resaves: int = 0
    base64_text: bool = False
    problem: str | None = None

    def raw(self) -> bytes:
        if self.problem is not None:
            raise DataError(self.problem)
        if not self.base64_text:
            return self.data
        text = self.data
        if text.startswith(b"data:image"):
            text = text.split(b",", 1)[1]
        try:
            return base64.b64decode(text)
        except (binascii.Error, ValueError) as error:
            raise DataError(f"not valid base64 ({error})") from None

    def stored(self) -> tuple[bytes, str | None, bool]:
        """The image file's bytes, Pillow's name of its format (None: not an image) and whether
        its EXIF orientation turns it."""
        data = self.raw()
        kind, turned = stored_format(data)
        return data, kind, turned

    def open(self) -> PILImage.Image:
        """The image exactly as the Task class gives it to the model."""
        from PIL import Image, UnidentifiedImageError

        data = self.raw()
        try:
            image: PILImage.Image
            if self.decoding == "plain":
                with pixel_limit_quiet():
                    image = Image.open(io.BytesIO(data))
                    image.load()
            else:
                image = decode(data)
                for _ in range(self.resaves):
                    image = decode(encode_as_datasets(image))
            return image.convert("RGB") if self.convert_rgb else image
        except UnidentifiedImageError:
            raise DataError(f"not an image Pillow can read ({len(data)} bytes)") from None
        except (OSError, ValueError, SyntaxError) as error:
            raise DataError(f"undecodable image ({error})") from None


def first_line(error: BaseException) -> str:
    """An error's first line (its type's name when it says nothing)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def image_failure(number: int, image: TaskImage, error: BaseException) -> str:
    """Why an item's image `number` cannot be sent, in plain words: Pillow's own error (under
    the task's wrapping of it), without Python object reprs."""
    from PIL import Image, UnidentifiedImageError

    if image.problem is not None:
        return f"image {number}: {image.problem}"
    cause = error
    while isinstance(cause, PfgenError) and cause.__context__ is not None:
        cause = cause.__context__
    if isinstance(cause, Image.DecompressionBombError):
        return f"image {number}: too many pixels to decode ({first_line(cause)})"
    if not image.data:
        return f"image {number}: empty (0 bytes)"
    if isinstance(cause, UnidentifiedImageError):
        return f"image {number}: not an image Pillow can read ({len(image.data)} bytes)"
    return f"image {number}: cannot decode it ({OBJECT_REPR.sub('', first_line(cause))})"


def image_file(image: TaskImage, formats: Container[str]) -> tuple[bytes, str]:
    """An image as one file, with Pillow's name of its format: the stored file when its format
    is among `formats` and no EXIF orientation turns it (checked to decode), else a PNG of
    the pixels the Task gives."""
    data, kind, turned = image.stored()
    if kind is not None and kind in formats and not turned:
        check_decodes(data, kind)
        return data, kind
    return png_bytes(image.open()), "PNG"


def request_part(image: TaskImage, image_format: str) -> dict[str, Any]:
    """One image of a request as a data URL part. "original": the stored file when its format
    is one every server takes and its EXIF orientation does not turn it (checked to decode),
    else a PNG of the pixels the Task gives; "png": always that PNG; "jpeg": as the original's
    API adapter sends it (JPEG at Pillow's default quality, `detail: auto`)."""
    if image_format == "original":
        data, kind = image_file(image, MEDIA_TYPES)
        return data_url_part(MEDIA_TYPES[kind], data)
    decoded = image.open()
    if image_format == "jpeg":
        if decoded.mode not in ("RGB", "L"):
            decoded = decoded.convert("RGB")
        buffer = io.BytesIO()
        decoded.save(buffer, format="JPEG")
        part = data_url_part("image/jpeg", buffer.getvalue())
        part["image_url"]["detail"] = "auto"
        return part
    return data_url_part("image/png", png_bytes(decoded))
