"""Generating trials as pfgen-bench's `run-openai.py` does (at 03db7c4, with the runners'
`generated` mark, `--num-retries` and `--ignore-failure` of its PRs #94/#95; docs/generate.md): the
run's parameters, directory and config.json, the runner's requests (sent through the shared LLM
client, concurrently across trials) and its answer clean-up; each trial written atomically once
complete, then packed as trials.jsonl.xz. A run resumes from its finished trial files and,
within the others, from the client's response cache (every reply is stored as it comes): an
interrupted run repeats only the calls that were in flight. An empty answer is asked again with
the same request, which the cache would answer with the same empty reply: those second asks go
through a client without the cache (`Clients.fresh`), so a resumed run asks them once more."""

from __future__ import annotations

import datetime
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pfgen_fast.common.errors import InputError, PfgenError
from pfgen_fast.common.llm import (
    ChatRequest,
    CompletionRequest,
    LLMClient,
    LLMError,
    LLMReply,
    cut_warning,
)
from pfgen_fast.common.reasoning import strip_reasoning, unanswered
from pfgen_fast.pfgen.outputs import config_text, run_folder, write_config
from pfgen_fast.pfgen.prompts import Example, Mode, build_task, unescape_prefix
from pfgen_fast.pfgen.trials import (
    TRIAL_FILES,
    pack_trials,
    read_raw,
    read_trials,
    trial_path,
    write_trial,
)

# The `engine` parameter of runs asked through an OpenAI-compatible server.
ENGINE = "openai-api"
# How often the runner asks a question whose answer comes back empty or failed before it gives
# the answer up (its rounds of asking again; `--num-retries`).
ANSWER_ATTEMPTS = 10
# The answer the runners write, with `"generated": false`, for an answer given up under
# `--ignore-failure`.
GIVEN_UP_ANSWER = "(FAILED TO GENERATE AN ANSWER)"
# What `--disable-thinking` puts before the prompt: Qwen3's switch, as the runner sends it.
NO_THINK = "/no_think\n"
# Requests handed to the client at once, per allowed concurrent request (rounded up to whole
# trials): enough that connections rarely wait for the last answers of a batch.
BATCH_PER_CONNECTION = 16


class GenerationError(PfgenError):
    """The server cannot produce the answers (unreachable, refusing, never answering)."""


@dataclass(frozen=True)
class Clients:
    """The client of a run (`cached`: with the response cache unless --no-cache) and one for
    the questions asked again after an empty answer (`fresh`: never the cache)."""

    cached: LLMClient
    fresh: LLMClient

    @property
    def concurrency(self) -> int:
        return self.cached.concurrency


@dataclass(frozen=True)
class Persistence:
    """How hard a run tries for each answer (not part of the run's config): the asks of a
    question before its answer is given up, and whether a trial with an answer given up is
    written (the answer as GIVEN_UP_ANSWER, `"generated": false`) or given up itself."""

    attempts: int = ANSWER_ATTEMPTS
    ignore_failure: bool = False


@dataclass(frozen=True)
class RunParameters:
    """What defines a run: its config.json and directory hash (private settings such as the
    server address, timeouts and concurrency are not part of it), and the stop strings it adds
    to the requests."""

    engine: str
    model: str
    mode: Mode
    temperature: float
    top_p: float | None  # None: not sent, the server's default (as the published API runs)
    max_tokens: int = 300
    num_examples: int = 20
    prefix: str = ""  # as typed, escapes not yet interpreted, as the published runners store it
    seed: str = ""
    enable_thinking: bool = True  # False: NO_THINK before each prompt
    strip_reasoning: bool = False
    # Merged into every request by the client; its keys are recorded in the config.
    extra_body: dict[str, Any] = field(default_factory=dict)
    # Sent with the stop words, not recorded (as the runner's --extra-eos-tokens).
    extra_eos_tokens: tuple[str, ...] = ()

    @property
    def stop(self) -> list[str]:
        """The stop words of the config."""
        return ["Q:", "\n\n"] if self.mode == "completion" else ["Q:"]

    @property
    def stop_sent(self) -> list[str]:
        """The stop words of each request: with the extra ones, each once. The runner sends
        `list(set(...))`, whose order changes from one Python process to the next (string
        hashing is randomised); servers take the list as a set, so this keeps the first
        occurrences' order, the same in every run (and so in the cache key)."""
        return list(dict.fromkeys([*self.stop, *self.extra_eos_tokens]))

    def config(self) -> dict[str, Any]:
        """The parameters config.json records."""
        params: dict[str, Any] = {
            **self.extra_body,
            "engine": self.engine,
            "model": self.model,
            "mode": self.mode,
            "num_examples": self.num_examples,
            "stop": self.stop,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "enable_thinking": self.enable_thinking,
        }
        if self.top_p is not None:
            params["top_p"] = self.top_p
        if self.prefix:
            params["prefix"] = self.prefix
        if self.seed:
            # Not a published parameter (the runners offer no seed); keeps runs apart.
            params["seed"] = self.seed
        if self.strip_reasoning:
            params["strip_reasoning"] = True
        return params

    def config_text(self) -> str:
        """config.json's text, without its final newline (`outputs.config_text`)."""
        return config_text(self.config())

    def run_directory(self, out: Path) -> Path:
        """{out}/{model's folder}/{first 7 hex digits of the SHA-1 of the config}."""
        return run_folder(out, self.config())


def request_for(
    parameters: RunParameters, task: dict[str, Any], trial: int
) -> ChatRequest | CompletionRequest:
    """The runner's request for a task of a trial: completions for `completion` mode, chat
    completions for `qa` (one user message) and `chat` (system and user messages); NO_THINK
    goes before the prompt, the system prompt in chat. Trials are samples: two trials whose
    prompts are the same (no examples, or the same ones) are still asked apart."""
    no_think = "" if parameters.enable_thinking else NO_THINK
    params: dict[str, Any] = {
        "max_tokens": parameters.max_tokens,
        "temperature": parameters.temperature,
        "top_p": parameters.top_p,  # None: not sent
        "stop": parameters.stop_sent,
    }
    if parameters.mode == "completion":
        return CompletionRequest(no_think + task["prompt"], params, sample=trial)
    if parameters.mode == "qa":
        messages = [{"role": "user", "content": no_think + task["prompt"]}]
        return ChatRequest(messages, params, sample=trial)
    messages = [
        {"role": "system", "content": no_think + task["system_prompt"]},
        {"role": "user", "content": task["user_prompt"]},
    ]
    return ChatRequest(messages, params, sample=trial)


def reply_answer(text: str, mode: Mode) -> str:
    """The runner's answer in a reply: stripped, and in qa and chat without a leading `A:`;
    "" is no answer."""
    if mode != "completion":
        text = text.removeprefix("A:")
    return text.strip()


def clean_answer(answer: str, mode: Mode) -> str:
    """The answer recorded: in qa and chat only what follows its first `A:`; stripped."""
    if mode != "completion" and "A:" in answer:
        answer = answer.split("A:", 1)[1]
    return answer.strip()


def check_trial_files(run_dir: Path, examples: list[Example]) -> None:
    """Every trial file already in the run folder holds one answer line per question, each as
    `eval` reads it; a damaged one (cut mid-line, an answer that is not a string, a question
    missing or twice) is an error naming the file and the line, before any request: it would
    otherwise be packed as finished."""
    expected = {example.question for example in examples}
    for path in sorted(run_dir.glob(TRIAL_FILES)):
        try:
            trials = read_trials(path, read_raw(path))
            answered: set[str] = set()
            for line, record in zip(trials.line_numbers, trials.records, strict=True):
                question = record["question"]
                if question not in expected or question in answered:
                    what = "a second answer to" if question in answered else "not a question of"
                    raise InputError(
                        f'{path}:{line}: field "question": {what} the data: {question[:40]!r}'
                    )
                answered.add(question)
            if answered != expected:
                missing = next(e.question for e in examples if e.question not in answered)
                raise InputError(f"{path}: no answer to {missing[:40]!r}")
        except InputError as error:
            raise GenerationError(
                f"{error} (a damaged trial file: remove it to ask that trial again)"
            ) from None


@dataclass
class TrialInProgress:
    """The tasks of one trial and the answer records received so far."""

    tasks: list[dict[str, Any]]
    records: list[dict[str, Any] | None]
    attempts: list[int]  # empty or failed answers so far, per question

    @classmethod
    def start(
        cls, parameters: RunParameters, examples: list[Example], prefix: str, trial: int
    ) -> TrialInProgress:
        tasks = [
            build_task(
                examples,
                example.question,
                parameters.mode,
                trial,
                parameters.num_examples,
                prefix,
                parameters.seed,
            )
            for example in examples
        ]
        return cls(tasks, [None] * len(tasks), [0] * len(tasks))

    def finished(self) -> bool:
        return all(record is not None for record in self.records)


class TrialAnswers:
    """The trials being answered: their tasks, the answers received so far, the questions to
    ask again, and the trials given up."""

    def __init__(
        self,
        parameters: RunParameters,
        examples: list[Example],
        on_answer: Callable[[], None],
        on_trial: Callable[[int, list[dict[str, Any]]], None],
        persistence: Persistence = Persistence(),
    ) -> None:
        self.parameters = parameters
        self.persistence = persistence
        self.examples = examples
        self.prefix = unescape_prefix(parameters.prefix)
        self.on_answer = on_answer
        self.on_trial = on_trial
        self.in_progress: dict[int, TrialInProgress] = {}
        # (trial, question index, after an empty answer) to ask once more.
        self.again: list[tuple[int, int, bool]] = []
        self.given_up: list[str] = []  # one line per trial given up: why
        self.answers_given_up: dict[int, list[str]] = {}  # by trial: the questions

    def start(self, trial: int) -> list[tuple[int, int, bool]]:
        """The trial's questions, as (trial, question index, False)."""
        self.in_progress[trial] = TrialInProgress.start(
            self.parameters, self.examples, self.prefix, trial
        )
        return [(trial, index, False) for index in range(len(self.examples))]

    def ask(self, clients: Clients, jobs: list[tuple[int, int, bool]]) -> None:
        """Asks the questions at once, taking each result as it comes: those asked again after
        an empty answer without the cache, the others through it."""
        for fresh in (False, True):
            chosen = [
                (trial, index)
                for trial, index, empty in jobs
                if empty == fresh and trial in self.in_progress
            ]
            if not chosen:
                continue
            requests = [
                request_for(self.parameters, self.in_progress[t].tasks[i], t) for t, i in chosen
            ]

            def take(position: int, result: LLMReply | LLMError) -> None:
                self.take(*chosen[position], result)  # noqa: B023 (run before the next loop)

            (clients.fresh if fresh else clients.cached).run(requests, on_result=take)

    def answer_of(self, result: LLMReply | LLMError) -> tuple[str, str | None]:
        """The answer to record, or "" and why there is none."""
        if isinstance(result, LLMError):
            return "", getattr(result, "reason", None) or str(result)
        text = strip_reasoning(result.text) if self.parameters.strip_reasoning else result.text
        answer = reply_answer(text, self.parameters.mode)
        reason = unanswered(answer, result.finish_reason)
        if reason is None:
            return clean_answer(answer, self.parameters.mode), None
        return "", reason

    def take(self, trial: int, index: int, result: LLMReply | LLMError) -> None:
        """Keeps an answer (handing on the trial once complete), or queues the question again;
        a question left without an answer `persistence.attempts` times has its answer given
        up (with `ignore_failure`) or gives its trial up (its other replies still coming are
        dropped)."""
        state = self.in_progress.get(trial)
        if state is None:
            return
        answer, reason = self.answer_of(result)
        generated = reason is None
        if not generated:
            state.attempts[index] += 1
            attempts = self.persistence.attempts
            question = state.tasks[index]["question"]
            if state.attempts[index] < attempts:
                self.again.append((trial, index, not isinstance(result, LLMError)))
                return
            if not self.persistence.ignore_failure:
                del self.in_progress[trial]
                self.given_up.append(
                    f"trial {trial}: no answer to {question!r} after {attempts} asks "
                    f"(last: {reason})"
                )
                return
            answer = GIVEN_UP_ANSWER
            self.answers_given_up.setdefault(trial, []).append(question)
        state.records[index] = {
            "question": state.tasks[index]["question"],
            "answer": answer,
            "generated": generated,
            "timestamp": datetime.datetime.now().isoformat(),
        }
        self.on_answer()
        if state.finished():
            del self.in_progress[trial]
            self.on_trial(trial, [r for r in state.records if r is not None])


def answer_trials(answers: TrialAnswers, clients: Clients, trials: list[int]) -> None:
    """Asks every question of the given trials through the client, in trial order and in
    batches of whole trials, so that trials finish one after the other; `answers.on_trial`
    gets each trial's records (in questions.jsonl order) as soon as it is complete. Empty or
    failed answers are asked again in the next batch, first. A server that the client finds
    down, or refusing the requests, ends the run with an LLMError."""
    fresh = deque(trials)
    batch = BATCH_PER_CONNECTION * clients.concurrency
    while answers.again or fresh:
        jobs, answers.again = answers.again, []
        while fresh and len(jobs) < batch:
            jobs += answers.start(fresh.popleft())
        answers.ask(clients, jobs)


def generate(
    parameters: RunParameters,
    clients: Clients,
    examples: list[Example],
    out: Path,
    num_trials: int,
    on_answer: Callable[[], None],
    on_trial: Callable[[], None],
    warn: Callable[[str], None],
    persistence: Persistence = Persistence(),
) -> Path:
    """Writes config.json and every missing trial file of trials 1..num_trials, then packs
    them; returns the run directory. Finished trials are checked first, then kept and never
    rewritten. Each trial given up, the answers given up per trial (with
    `persistence.ignore_failure`) and the replies cut at max_tokens are reported through `warn`;
    a trial given up or a server that cannot answer is a GenerationError once the other trials
    are written."""
    run_dir = parameters.run_directory(out)
    check_trial_files(run_dir, examples)
    write_config(run_dir, parameters.config())
    missing = []
    for trial in range(1, num_trials + 1):
        if trial_path(run_dir, trial).exists():
            on_trial()
        else:
            missing.append(trial)

    def finish_trial(trial: int, records: list[dict[str, Any]]) -> None:
        write_trial(trial_path(run_dir, trial), records)
        on_trial()

    answers = TrialAnswers(parameters, examples, on_answer, finish_trial, persistence)
    failure = ""
    try:
        answer_trials(answers, clients, missing)
    except LLMError as error:
        failure = str(error)
    # Every reply cut counts, those of a trial given up too (dropped when they come).
    cut = cut_warning(clients.cached.stats.cut + clients.fresh.stats.cut)
    if cut is not None:
        warn(cut)
    for trial, questions in sorted(answers.answers_given_up.items()):
        warn(
            f"trial {trial}: {len(questions)} answer(s) given up after {persistence.attempts} "
            f'asks, written as {GIVEN_UP_ANSWER!r} with "generated": false: '
            + ", ".join(repr(question) for question in questions)
        )
    for line in answers.given_up:
        warn(line)
    if answers.given_up and not failure:
        count = len(answers.given_up)
        failure = f"{count} trial{'s' if count > 1 else ''} given up"
    if failure:
        kept = sum(trial_path(run_dir, t).exists() for t in range(1, num_trials + 1))
        raise GenerationError(
            f"{failure}; {kept} of {num_trials} trials finished in {run_dir} "
            "(run the same command again to resume)"
        )
    pack_trials(run_dir)
    return run_dir
