"""A model's name as a folder of results (`generate`'s `OUT/<model>/`, `mm run`'s
`OUT/<task>/<model>/`): any name a server serves stays inside OUT, and two names never share
a folder."""

from __future__ import annotations

import urllib.parse


def model_folder(model: str) -> str:
    """The name itself when each of its `/`-separated parts is a plain folder name, neither
    empty nor starting with `.` (so `org/model` is `org/model/`, as the benchmarks write it);
    else the whole name percent-encoded as one folder, a leading `.` too (`/models/m`, vLLM's
    name for a local model, is `%2Fmodels%2Fm`; `./m` is `%2E%2Fm`). A plain name holds no `%`
    and an encoded one always does, so two names never share a folder."""
    parts = model.split("/")
    if "%" not in model and all(part and not part.startswith(".") for part in parts):
        return model
    encoded = urllib.parse.quote(model, safe="")
    # A leading "." encoded too: no hidden folder, never "." or "..".
    return "%2E" + encoded[1:] if encoded.startswith(".") else encoded
