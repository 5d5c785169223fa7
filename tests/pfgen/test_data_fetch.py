"""`data fetch` from a real HTTP server on 127.0.0.1, and `data verify`."""

from __future__ import annotations

import functools
import http.server
import io
import os
import shutil
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_runner import run_cli


def only_cache(cache: Path) -> dict[str, str]:
    """The environment of a user whose cache is `cache` and who set no data directory."""
    return {"PFGEN_FAST_CACHE": str(cache), "PFGEN_DATA_DIR": ""}


def archive_of(data_dir: Path, tamper: bool = False) -> bytes:
    """A GitHub-style archive: pfgen-bench-REF/data/... with the question files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(data_dir.glob("Q*.json")) + [data_dir / "questions.jsonl"]:
            content = path.read_bytes()
            if tamper and path.name == "Q07.json":
                content = content.replace("です".encode(), "でした".encode(), 1)
            info = tarfile.TarInfo(f"pfgen-bench-test/data/{path.name}")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        readme = b"not data"
        info = tarfile.TarInfo("pfgen-bench-test/README.md")
        info.size = len(readme)
        tar.addfile(info, io.BytesIO(readme))
    return buffer.getvalue()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging each request to standard error, which the command run in
    this process writes its own messages to."""

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server(data_dir: Path, tmp_path_factory) -> Iterator[str]:
    """Serves good.tar.gz and tampered.tar.gz from a temporary folder."""
    root = tmp_path_factory.mktemp("www")
    (root / "good.tar.gz").write_bytes(archive_of(data_dir))
    (root / "tampered.tar.gz").write_bytes(archive_of(data_dir, tamper=True))
    handler = functools.partial(QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_fetch_verifies_and_installs_into_the_cache(server: str, tmp_path):
    fetched = run_cli("data", "fetch", "--url", f"{server}/good.tar.gz", env=only_cache(tmp_path))
    assert fetched.returncode == 0, fetched.stderr
    data = tmp_path / "data"
    assert len(list(data.glob("Q*.json"))) == 50
    assert (data / "questions.jsonl").is_file() and not (data / "README.md").exists()
    verified = run_cli(
        "data", "verify", env=only_cache(tmp_path)
    )  # the cache is the default directory
    assert verified.returncode == 0, verified.stderr
    assert "every file matches" in verified.stdout


def test_tampered_archive_is_refused_and_nothing_is_replaced(server: str, tmp_path):
    good = run_cli("data", "fetch", "--url", f"{server}/good.tar.gz", env=only_cache(tmp_path))
    assert good.returncode == 0
    before = (tmp_path / "data" / "Q07.json").read_bytes()
    bad = run_cli("data", "fetch", "--url", f"{server}/tampered.tar.gz", env=only_cache(tmp_path))
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "Q07.json: SHA-1" in bad.stderr
    assert (tmp_path / "data" / "Q07.json").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["data"]  # no staging left behind


def test_verify_reports_a_modified_directory(data_dir: Path, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(data_dir, copy, ignore=shutil.ignore_patterns("final", "meta"))
    (copy / "Q03.json").write_bytes((copy / "Q03.json").read_bytes() + b" ")
    (copy / "Q50.json").unlink()
    result = run_cli("data", "verify", copy, env=only_cache(tmp_path))
    assert result.returncode == 1
    assert "Q03.json: SHA-1" in result.stderr and "Q50.json: missing" in result.stderr


def test_a_missing_archive_is_a_clear_error(server: str, tmp_path):
    result = run_cli("data", "fetch", "--url", f"{server}/none.tar.gz", env=only_cache(tmp_path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr == f"error: {server}/none.tar.gz: download failed: HTTP 404\n"


def test_a_destination_that_is_a_link_stays_a_link(server: str, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "old.txt").write_text("replaced by the fetch")
    link = tmp_path / "data-link"
    link.symlink_to("real")
    fetched = run_cli(
        "data", "fetch", "--url", f"{server}/good.tar.gz", "--dest", link, env=only_cache(tmp_path)
    )
    assert fetched.returncode == 0, fetched.stderr
    assert link.is_symlink() and len(list((tmp_path / "real").glob("Q*.json"))) == 50
    assert not (tmp_path / "real" / "old.txt").exists()


@pytest.mark.parametrize("kind", ["file", "fifo"])
def test_a_destination_that_is_not_a_folder_is_left_alone(server: str, tmp_path, kind: str):
    destination = tmp_path / "dest"
    if kind == "file":
        destination.write_text("kept")
    else:
        os.mkfifo(destination)
    fetched = run_cli(
        "data",
        "fetch",
        "--url",
        f"{server}/good.tar.gz",
        "--dest",
        destination,
        env=only_cache(tmp_path),
    )
    assert fetched.returncode == 1
    assert fetched.stderr == f"error: {destination}: cannot write: not a directory\n"
    assert destination.is_fifo() if kind == "fifo" else destination.read_text() == "kept"
