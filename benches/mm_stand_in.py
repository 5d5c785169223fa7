"""The benchmark's stand-in for a vision model's server: an OpenAI-compatible
`/chat/completions` on 127.0.0.1 that reads each request's body and answers at once with the
same reply, on one asyncio loop (keep-alive connections, no threads), so that what the bench
measures is the client. It prints its base URL and serves until its standard input closes.

    python benches/mm_stand_in.py
"""

from __future__ import annotations

import asyncio
import json
import sys

REPLY = json.dumps(
    {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "写真です。"}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    },
    ensure_ascii=False,
).encode()
RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    + f"Content-Length: {len(REPLY)}\r\n\r\n".encode()
    + REPLY
)


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers the requests of one connection until the client closes it."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve() -> None:
    server = await asyncio.start_server(answer, "127.0.0.1", 0, limit=1 << 24)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # serve until stdin closes
    server.close()


if __name__ == "__main__":
    asyncio.run(serve())
