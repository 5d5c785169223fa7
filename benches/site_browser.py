"""A real headless Chromium (Debian's chromium and chromium-driver) through selenium, with the
network cut: every request goes to a proxy on a closed 127.0.0.1 port, so anything that is not
a local file fails. Console messages, every request (the DevTools performance log) and downloads
are captured. The site's tests and `bench_site.py` drive it."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'pfgen_fast[test]')"
    if CHROMIUM is None or CHROMEDRIVER is None:
        return "Chromium is not installed (apt-get install chromium chromium-driver)"
    return None


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def chromium(downloads: Path | None = None, width: int = 1280, height: int = 900) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
        f"--proxy-server=127.0.0.1:{closed_port()}",
        "--proxy-bypass-list=<-loopback>",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    if downloads is not None:
        options.add_experimental_option(
            "prefs",
            {
                "download.default_directory": str(downloads),
                "download.prompt_for_download": False,
            },
        )
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    try:
        if downloads is not None:
            driver.execute_cdp_cmd(
                "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
            )
        yield driver
    finally:
        driver.quit()


def requested_urls(driver: Any) -> list[str]:
    """The URLs of every request the browser made since the last call (DevTools log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls
