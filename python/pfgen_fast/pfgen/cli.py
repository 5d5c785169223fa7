"""pfgen-bench's commands, at the top level of `python -m pfgen_fast` (one module each in
`pfgen_fast.pfgen.commands`; `data` is the published data's)."""

from pfgen_fast.common.rooms import Command, Room

COMMANDS = "pfgen_fast.pfgen.commands"

ROOM = Room(
    word=None,
    help="pfgen-bench: fluency, truthfulness and helpfulness of Japanese answers",
    commands=(
        Command(
            "score",
            "score JSON lines of answers (question, answer) against the reference data",
            f"{COMMANDS}.score",
            without_cycle_collector=True,
        ),
        Command(
            "eval",
            "evaluate trials files and write result.json beside each (the benchmark's make)",
            f"{COMMANDS}.eval",
            without_cycle_collector=True,
        ),
        Command(
            "data",
            "fetch the published benchmark data or verify a data directory",
            "pfgen_fast.pfgen.data:PUBLISHED",
        ),
        Command(
            "prompt",
            "print the published prompt of every question for one trial",
            f"{COMMANDS}.prompt",
        ),
        Command(
            "generate",
            "generate trials with a model server, with the published protocol",
            f"{COMMANDS}.generate",
        ),
        Command(
            "lm-eval-tasks",
            "print the folder of pfgen-bench's lm-evaluation-harness tasks (--include_path)",
            f"{COMMANDS}.lm_eval_tasks",
        ),
        Command(
            "lm-eval-import",
            "write run folders for `eval` from lm-evaluation-harness samples (--log_samples)",
            f"{COMMANDS}.lm_eval_import",
        ),
        Command(
            "build-refs",
            "build reference answer sets (Qxx.json) from generated candidates, with a step report",
            f"{COMMANDS}.build_refs",
        ),
        Command(
            "synth",
            "write synthetic candidate answers to one question (for benchmarks)",
            f"{COMMANDS}.synth",
        ),
        Command(
            "report",
            "write README.md beside each result.json, the leaderboard into a README, exports",
            f"{COMMANDS}.report",
            without_cycle_collector=True,
        ),
        Command(
            "plot",
            "draw the paper's figures (PNG and SVG) from result.json files",
            f"{COMMANDS}.plot",
            without_cycle_collector=True,
        ),
        Command(
            "stability",
            "score every run with one reference source at a time and print Pearson r per pair",
            f"{COMMANDS}.stability",
            without_cycle_collector=True,
        ),
    ),
)
