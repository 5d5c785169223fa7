"""The retry policy every HTTP request of the package follows (model calls in `common.llm`,
archive downloads in `common.archive`): which statuses are worth another try, the exponential
backoff with jitter between tries and the Retry-After a server asks for. httpx is the transport
of both. The jitter spreads the retries of requests that failed together (a server restarting
under a full batch), so they do not all come back at the same moment."""

from __future__ import annotations

import datetime
import email.utils
import math
import random
from collections.abc import Iterator

# Exponential backoff between tries of a request, in seconds.
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 16.0
# The longest Retry-After honoured as given, in seconds.
MAX_RETRY_AFTER = 600.0
# Statuses worth another try besides 5xx: request timeout, conflict, too early, rate limit.
RETRY_STATUSES = frozenset({408, 409, 425, 429})


def retryable(status: int) -> bool:
    """Whether a reply with this status may be different when asked again."""
    return status in RETRY_STATUSES or status >= 500


def backoff_limits() -> Iterator[float]:
    """The longest waits before the second, third, ... try: doubling from FIRST_BACKOFF up to
    MAX_BACKOFF."""
    backoff = FIRST_BACKOFF
    while True:
        yield backoff
        backoff = min(backoff * 2, MAX_BACKOFF)


def backoffs(rng: random.Random | None = None) -> Iterator[float]:
    """The waits before the second, third, ... try: each drawn uniformly between half its
    limit and the limit (`backoff_limits`)."""
    draw = rng.uniform if rng is not None else random.uniform
    for limit in backoff_limits():
        yield draw(limit / 2, limit)


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), if usable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        seconds = (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)
