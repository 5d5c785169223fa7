"""What the LCTG tests share: where the benchmark's published files are, the benchmark's own
prompt functions loaded from its `prompt.py`, a deterministic remover and judge for the test
server."""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lctg_reference import no_blanks

from pfgen_fast.testing import Reply
from published import lctg_dir


def benchmark_prompt_module() -> types.ModuleType:
    """`scripts/utils/prompt.py` imported as the module it is. Its `import pandas` serves a
    function the tests do not call (pandas only names a parameter's type there), so a stand-in
    module with that one name answers it when pandas is absent."""
    path = lctg_dir() / "scripts" / "utils" / "prompt.py"
    spec = importlib.util.spec_from_file_location("lctg_benchmark_prompt", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    stand_in = "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None
    if stand_in:
        pandas = types.ModuleType("pandas")
        pandas.DataFrame = type("DataFrame", (), {})  # type: ignore[attr-defined]
        sys.modules["pandas"] = pandas
    try:
        spec.loader.exec_module(module)
    finally:
        if stand_in:
            del sys.modules["pandas"]
    return module


def benchmark_system_prompt() -> str:
    """The system message of the remover script, found in its text by a regular expression."""
    text = (lctg_dir() / "scripts" / "header_footer_remover.py").read_text(encoding="utf-8")
    match = re.search(r'"role": "system",\s*"content": "([^"]*)"', text)
    assert match is not None
    return match.group(1)


@dataclass
class StandIn:
    """A remover and judge that answer from tables: the exact prompt the benchmark's functions
    build -> the reply. A prompt not in the tables gets HTTP 422 (the client gives up at once),
    so a prompt that differs by one byte fails the run. Replies are decided per text (cleaned
    text -> judge replies), so items sharing a text share answers, as with any deterministic
    judge."""

    task: str
    module: types.ModuleType
    system_prompt: str
    remover: dict[str, Reply] = field(default_factory=dict)
    judge: dict[str, str] = field(default_factory=dict)
    retry: dict[str, str] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)
    params_seen: list[dict[str, Any]] = field(default_factory=list)

    def add(self, raw: str, cleaned: str | None, base_text: str, first: str, second: str) -> None:
        """`cleaned` None: the remover's server refuses the request (HTTP 400)."""
        m = self.module
        remover_prompt = m.get_header_footer_remover_prompt(self.task, raw)
        self.remover[remover_prompt] = (
            Reply(status=400, error="invalid request") if cleaned is None else Reply(text=cleaned)
        )
        judged = "Invalid Error" if cleaned is None else cleaned
        self.judge.setdefault(m.get_quality_check_prompt(self.task, judged, base_text), first)
        self.retry.setdefault(m.get_quality_check_prompt_bool(self.task, judged, base_text), second)

    def cleaned(self, raw: str) -> str:
        reply = self.remover[self.module.get_header_footer_remover_prompt(self.task, raw)]
        return "Invalid Error" if reply.status == 400 else str(reply.text)

    def label(self, cleaned: str, base_text: str) -> bool | str:
        """The benchmark's label for a cleaned text, by the spec's rules."""
        m = self.module
        first = self.judge[m.get_quality_check_prompt(self.task, cleaned, base_text)]
        if no_blanks(first) in ("適切", "不適切"):
            return no_blanks(first) == "適切"
        second = self.retry[m.get_quality_check_prompt_bool(self.task, cleaned, base_text)]
        return second == "True" if no_blanks(second) in ("True", "False") else no_blanks(second)

    def responder(self) -> Callable[[str, dict[str, Any]], Reply]:
        def respond(path: str, request: dict[str, Any]) -> Reply:
            messages = request["messages"]
            params = {k: v for k, v in request.items() if k not in ("messages", "model")}
            self.params_seen.append(params)
            if len(messages) != 2 or messages[0] != {
                "role": "system",
                "content": self.system_prompt,
            }:
                self.unexpected.append(repr(messages[:1]))
                return Reply(status=422, error="unexpected system message")
            prompt = messages[1]["content"]
            if prompt in self.remover:
                return self.remover[prompt]
            for table in (self.judge, self.retry):
                if prompt in table:
                    return Reply(text=table[prompt])
            self.unexpected.append(prompt)
            return Reply(status=422, error="unexpected prompt")

        return respond
