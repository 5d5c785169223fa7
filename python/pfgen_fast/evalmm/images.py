"""Images as llm-jp-eval-mm's Tasks hand them to the model, and as `mm run` sends them.

The original's Tasks give the model decoded pixels: `datasets` applies an image's EXIF
orientation when it decodes it. A server given the stored file may or may not apply that tag,
so an image whose orientation is not the identity is sent as a PNG of the pixels the Task
gives (the turn baked in, no EXIF); every other image is sent as stored where the format allows.
`upright_image` is the same rule for a file alone (the site's thumbnails)."""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image as PILImage

    from pfgen_fast.evalmm.tasks.items import TaskImage

IMAGE_FORMATS = ("original", "png", "jpeg")
# Formats every OpenAI-compatible vision server takes as they are.
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
ORIENTATION = 0x0112  # the EXIF tag
# Orientations that move pixels (1 is the identity; other values are ignored by Pillow).
TURNING_ORIENTATIONS = range(2, 9)


def turns(image: PILImage.Image) -> bool:
    """Whether the image carries an EXIF orientation that turns or mirrors it."""
    return image.getexif().get(ORIENTATION) in TURNING_ORIENTATIONS


def decode(data: bytes) -> PILImage.Image:
    """An image file as `datasets`' Image feature decodes it: loaded, EXIF orientation
    applied."""
    from PIL import Image, ImageOps

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


def png_bytes(image: PILImage.Image) -> bytes:
    """The pixels as PNG, without EXIF (Pillow writes no orientation unless asked)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def stored_format(data: bytes) -> tuple[str | None, bool]:
    """Pillow's name of the file's format (None: not an image it reads) and whether its EXIF
    orientation turns it (read from the header, the pixels are not decoded)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.format, turns(image)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None, False


def upright_image(data: bytes) -> tuple[bytes, str | None]:
    """An image file as the model sees it, with Pillow's name of its format: the same bytes
    when its EXIF orientation is absent or the identity, else a PNG of its pixels with the
    orientation applied as `datasets` applies it. Bytes Pillow cannot read come back as they
    are, with None."""
    kind, turned = stored_format(data)
    if not turned:
        return data, kind
    return png_bytes(decode(data)), "PNG"


def check_decodes(data: bytes, kind: str) -> None:
    """Raises Pillow's error when stored image bytes do not decode. Cheap where it can be: a
    PNG's chunk checksums, a JPEG's end marker (decoding it only when that is missing: some
    writers add bytes after it); other formats are decoded."""
    from PIL import Image

    if kind == "JPEG" and data.endswith(b"\xff\xd9"):
        return
    with Image.open(io.BytesIO(data)) as image:
        if kind == "PNG":
            image.verify()
        else:
            image.load()


def data_url_part(media_type: str, data: bytes) -> dict[str, Any]:
    url = f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def request_part(image: TaskImage, image_format: str) -> dict[str, Any]:
    """One image of a request as a data URL part. "original": the stored file when its format
    is one every server takes and its EXIF orientation does not turn it (checked to decode),
    else a PNG of the pixels the Task gives; "png": always that PNG; "jpeg": as the original's
    API adapter sends it (JPEG at Pillow's default quality, `detail: auto`)."""
    if image_format == "original":
        data, kind, turned = image.stored()
        if kind in MEDIA_TYPES and not turned:
            check_decodes(data, kind)
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
