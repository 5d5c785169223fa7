"""Errors meant for the user: the CLI prints them as one line, without a traceback."""


class PfgenError(Exception):
    """A problem with the user's input, data or environment; the message says where and what."""


class DataError(PfgenError):
    """A benchmark data file (Qxx.json, questions.jsonl, ...) is missing or malformed."""


class InputError(PfgenError):
    """The user's input is unusable: a file or folder given, a line of an input file (trials,
    candidates)."""


class UsageError(PfgenError):
    """Options or arguments refused before anything runs that only the command can check
    (against each other, or one of several required): exit status 2, as argparse's."""
