"""Generating trials with the published protocol (docs/generation.md) through an
OpenAI-compatible server: run directory and config hash, one file per trial written
atomically, resumable, then packed as trials.jsonl.xz."""

from __future__ import annotations

import datetime
import hashlib
import json
import lzma
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pfgen_fast.errors import PfgenError
from pfgen_fast.prompts import Example, build_task
from pfgen_fast.results import write_atomically

# Rounds of retrying the answers still missing (empty or failed) before a trial is given up.
ANSWER_ROUNDS = 5


class GenerationError(PfgenError):
    """The server cannot produce the answers (unreachable, refusing, never answering)."""


class FatalServerError(GenerationError):
    """An answer that retrying cannot change (authentication, unknown model, bad request)."""


@dataclass(frozen=True)
class Settings:
    model: str
    mode: str
    base_url: str
    num_trials: int
    temperature: float
    top_p: float
    max_tokens: int
    num_examples: int
    seed: str
    prefix: str
    concurrency: int
    timeout: float
    max_retries: int
    engine: str = "openai"

    def stop(self) -> list[str]:
        return ["Q:", "\n\n"] if self.mode == "completion" else ["Q:"]

    def config(self) -> dict[str, Any]:
        """The run's parameters, sorted by name (prompt-changing options only when set)."""
        params: dict[str, Any] = {
            "engine": self.engine,
            "model": self.model,
            "mode": self.mode,
            "num_examples": self.num_examples,
            "stop": self.stop(),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
        }
        if self.seed:
            params["seed"] = self.seed
        if self.prefix:
            params["prefix"] = self.prefix
        return dict(sorted(params.items()))


def config_text(settings: Settings) -> str:
    return json.dumps(settings.config(), ensure_ascii=False)


def run_directory(out: Path, settings: Settings) -> Path:
    """result/{model}/{first 7 hex digits of the SHA-1 of the config}."""
    digest = hashlib.sha1(config_text(settings).encode("utf-8")).hexdigest()[:7]
    return out / settings.model / digest


class OpenAIBackend:
    """Completions (completion, qa) or chat completions (chat) of an OpenAI-compatible server,
    with timeouts and retries with exponential backoff."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.api_key = os.environ.get("OPENAI_API_KEY", "")

    def request(self, task: dict[str, Any]) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
            "stop": s.stop(),
            "seed": task["seed"],
        }
        if s.mode == "chat":
            body["messages"] = [
                {"role": "system", "content": task["system_prompt"]},
                {"role": "user", "content": task["user_prompt"]},
            ]
        else:
            body["prompt"] = task["prompt"]
        return body

    def complete(self, task: dict[str, Any]) -> str:
        endpoint = "/chat/completions" if self.settings.mode == "chat" else "/completions"
        url = self.settings.base_url.rstrip("/") + endpoint
        data = json.dumps(self.request(task), ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        delay = 0.5
        for attempt in range(self.settings.max_retries + 1):
            try:
                request = urllib.request.Request(url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=self.settings.timeout) as response:
                    reply = json.loads(response.read())
                choice = reply["choices"][0]
                if self.settings.mode == "chat":
                    return str(choice["message"]["content"] or "")
                return str(choice["text"] or "")
            except urllib.error.HTTPError as error:
                if error.code in (401, 403):
                    raise FatalServerError(
                        f"{url}: authentication failed (HTTP {error.code}); set OPENAI_API_KEY"
                    ) from None
                if error.code in (400, 404):
                    raise FatalServerError(f"{url}: HTTP {error.code}: {error.reason}") from None
                last = f"HTTP {error.code}"
            except (urllib.error.URLError, TimeoutError, OSError) as error:
                last = str(getattr(error, "reason", error)) or type(error).__name__
            except (ValueError, KeyError, IndexError, TypeError):
                last = "malformed reply"
            if attempt < self.settings.max_retries:
                time.sleep(delay)
                delay = min(delay * 2, 8.0)
        tries = self.settings.max_retries + 1
        raise GenerationError(f"{url}: no answer after {tries} tries ({last})")


def clean_answer(answer: str, mode: str) -> str:
    """qa and chat: keep only what follows the first `A:`; always stripped."""
    if mode != "completion" and "A:" in answer:
        answer = answer.split("A:", 1)[1]
    return answer.strip()


def trial_path(run_dir: Path, trial: int) -> Path:
    return run_dir / f"trial_{trial:03d}.jsonl"


def generate_trial(
    backend: OpenAIBackend,
    examples: list[Example],
    settings: Settings,
    trial: int,
    on_answer: Callable[[], None],
) -> list[dict[str, Any]]:
    """All answers of one trial, in questions.jsonl order; failed or empty answers are asked
    again for a few rounds."""
    tasks = [
        build_task(
            examples,
            e.question,
            settings.mode,
            trial,
            settings.num_examples,
            settings.prefix,
            settings.seed,
        )
        for e in examples
    ]
    answers: dict[int, str] = {}
    last_error: GenerationError | None = None

    def ask(index: int) -> tuple[int, str | None]:
        nonlocal last_error
        try:
            answer = clean_answer(backend.complete(tasks[index]), settings.mode)
        except FatalServerError:
            raise
        except GenerationError as error:
            last_error = error
            return index, None
        return index, answer or None

    with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as pool:
        for _ in range(ANSWER_ROUNDS):
            missing = [i for i in range(len(tasks)) if i not in answers]
            if not missing:
                break
            answered = 0
            for index, answer in pool.map(ask, missing):
                if answer is not None:
                    answers[index] = answer
                    answered += 1
                    on_answer()
            if answered == 0 and last_error is not None:
                break  # a whole round without any answer: the server is down, not flaky
    missing_count = len(tasks) - len(answers)
    if missing_count:
        reason = f": {last_error}" if last_error else " (empty answers)"
        raise GenerationError(
            f"trial {trial}: {missing_count} answer(s) still missing after {ANSWER_ROUNDS} "
            f"rounds{reason}"
        )
    return [
        {
            "question": tasks[i]["question"],
            "answer": answers[i],
            "timestamp": datetime.datetime.now().isoformat(),
        }
        for i in range(len(tasks))
    ]


def pack_trials(run_dir: Path) -> Path:
    """trials.jsonl.xz: every trial file's lines, sorted bytewise, xz -9."""
    lines: list[bytes] = []
    for path in sorted(run_dir.glob("trial_[0-9][0-9][0-9].jsonl")):
        lines.extend(line for line in path.read_bytes().splitlines(keepends=True) if line.strip())
    lines = [line if line.endswith(b"\n") else line + b"\n" for line in lines]
    lines.sort()
    target = run_dir / "trials.jsonl.xz"
    write_atomically(target, lzma.compress(b"".join(lines), preset=9))
    return target


def generate(
    settings: Settings,
    examples: list[Example],
    out: Path,
    on_answer: Callable[[], None],
    on_trial: Callable[[], None],
) -> Path:
    """Writes config.json and every missing trial file, then packs them; returns the run
    directory. Finished trials are never rewritten."""
    run_dir = run_directory(out, settings)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(run_dir / "config.json", (config_text(settings) + "\n").encode("utf-8"))
    backend = OpenAIBackend(settings)
    for trial in range(1, settings.num_trials + 1):
        path = trial_path(run_dir, trial)
        if path.exists():
            on_trial()
            continue
        records = generate_trial(backend, examples, settings, trial, on_answer)
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        write_atomically(path, text.encode("utf-8"))
        on_trial()
    pack_trials(run_dir)
    return run_dir
