"""`python -m pfgen_fast.testing`: the stand-in's fast mode in a process of its own (it prints
its base URL, then answers every request at once until standard input closes)."""

import asyncio

from pfgen_fast.testing.server import serve_fast

asyncio.run(serve_fast())
