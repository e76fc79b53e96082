"""``deep-tui serve`` driven from a real browser: Debian's Chromium through Playwright's client.

The server runs as the user would start it (a subprocess, offline model). What the page shows is read from
the websocket frames the browser received (xterm.js draws on a canvas, so the text is not in the DOM), and
what was recorded from the session's files. Without Chromium the browser tests skip, saying why; the
token checks need no browser and always run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOT = ROOT / "docs" / "images" / "serve.png"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--use-gl=swiftshader"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Served:
    """A running ``deep-tui serve`` and where it keeps its data."""

    process: subprocess.Popen[str]
    url: str
    port: int
    data: Path
    work: Path
    stderr_lines: list[str] = field(default_factory=list)

    @property
    def token(self) -> str:
        return self.url.rsplit("token=", 1)[1]

    def app_processes(self) -> list[int]:
        """The deep-tui processes the server started (one per open tab)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()] if children.exists() else []


@contextmanager
def serving(tmp_path: Path, *extra: str) -> Iterator[Served]:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir(exist_ok=True)
    (work / "note.txt").write_text("hello from the browser tab\n")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "serve", "--port", str(port), "--data-dir", str(data),
         "--model", "offline", "--workdir", str(work), *extra],
        cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("deep-tui serve: open http://127.0.0.1:"), first + (process.stderr.read() if process.stderr else "")
    served = Served(process, first.split("open ", 1)[1].strip(), port, data, work)
    try:
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serving(tmp_path) as running:
        yield running


def _status(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_wrong_or_missing_token_gets_403_never_the_app(served: Served) -> None:
    base = f"http://127.0.0.1:{served.port}"
    for url in (f"{base}/", f"{base}/?token=wrong", f"{base}/?token={served.token[:-1]}", f"{base}/ws",
                f"{base}/static/js/textual.js"):
        status, body = _status(url)
        assert status == 403, url
        assert "needs its token" in body and "textual.js" not in body
    # The right token enters once: a cookie, and the token leaves the address.
    status, _ = _status(served.url)
    assert status == 303
    # A page fetched under another host name (DNS rebinding) is refused even with the token.
    status, _ = _status(served.url, headers={"Host": f"attacker.example:{served.port}"})
    assert status == 403
    # The token is printed once, on stdout, and never logged.
    log = (served.data / "deep-tui.log").read_text() if (served.data / "deep-tui.log").exists() else ""
    assert served.token not in log


def test_refuses_plain_http_off_loopback_and_bad_ports(tmp_path: Path) -> None:
    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tui.cli", "serve", "--data-dir", str(tmp_path / "d"), *args],
                              capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})

    refused = serve("--host", "0.0.0.0")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "refusing to serve on 0.0.0.0 over plain HTTP" in refused.stderr
    assert serve("--port", "0").returncode == 2
    half_tls = serve("--tls-cert", str(tmp_path / "cert.pem"))
    assert half_tls.returncode == 2 and "go together" in half_tls.stderr


# -- the browser ---------------------------------------------------------------------------------------------

needs_browser = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="no Chromium: .ci/run installs Debian's chromium package (apt-get install chromium)")


TERMINAL_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


class Screen:
    """What one tab received: the terminal output bytes of its websocket, as text."""

    def __init__(self, page: object) -> None:
        self.received: list[str] = []
        page.on("websocket", self._watch)  # type: ignore[attr-defined]

    def _watch(self, websocket: object) -> None:
        websocket.on("framereceived", self._frame)  # type: ignore[attr-defined]

    def _frame(self, payload: str | bytes) -> None:
        self.received.append(payload.decode(errors="replace") if isinstance(payload, bytes) else payload)

    def text(self) -> str:
        """What the tab received with the terminal's control sequences taken out (a paint may style or move
        the cursor inside a line; the words stay in order)."""
        return TERMINAL_CONTROL.sub("", "".join(self.received))

    def wait_until_ready(self, page: object) -> None:
        """The app's prompt is on the page: give the terminal's input the focus before typing (the click right
        after the page loaded can come before the terminal exists on a loaded machine, and the keys typed then
        went nowhere). Focused directly, not clicked: a click would reach the app as a mouse event."""
        self.wait_for(page, "Type a message")
        page.focus(".xterm-helper-textarea")  # type: ignore[attr-defined]

    def type_prompt(self, page: object, text: str) -> None:
        """Type ``text`` into the app's prompt and see it there before going on. The browser may still be
        wiring its terminal when the prompt is first drawn; keys typed then are lost in the page, never
        reaching the app, so they are typed once more (the prompt cleared first) if they never show."""
        for attempt in range(2):
            if attempt:
                page.focus(".xterm-helper-textarea")  # type: ignore[attr-defined]
                page.keyboard.press("Control+u")  # type: ignore[attr-defined]
            page.keyboard.type(text)  # type: ignore[attr-defined]
            try:
                self.wait_for(page, text, timeout=20.0)
                return
            except AssertionError:
                if attempt:
                    raise

    def wait_for(self, page: object, needle: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            assert time.monotonic() < deadline, f"{needle!r} never reached the browser; last received: " \
                                                f"{self.text()[-1500:]!r}"
            page.wait_for_timeout(100)  # type: ignore[attr-defined]


@pytest.fixture
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's client is in the dev extra")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


def _open_tab(browser: object, served: Served) -> tuple[object, Screen]:
    page = browser.new_page(viewport={"width": 1100, "height": 700})  # type: ignore[attr-defined]
    screen = Screen(page)
    page.goto(served.url)
    assert "token" not in page.url  # the cookie holds it now
    page.click("#terminal")  # keys go to the terminal, as when a person clicks into the page
    return page, screen


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@needs_browser
def test_a_tab_runs_the_app_answers_and_ends_with_the_tab(served: Served, browser: object) -> None:
    page, screen = _open_tab(browser, served)
    screen.wait_until_ready(page)
    screen.type_prompt(page, "read note.txt")
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    screen.wait_for(page, "hello from the browser tab")
    # The picture in docs/usage.md: after the "still opening" notice has gone.
    page.wait_for_timeout(6000 if os.environ.get("DEEP_TUI_UPDATE_SCREENSHOT") == "1" else 200)  # type: ignore[attr-defined]
    shot = served.work / "serve.png"
    page.screenshot(path=str(shot))  # type: ignore[attr-defined]
    if os.environ.get("DEEP_TUI_UPDATE_SCREENSHOT") == "1":  # docs/usage.md shows this picture
        SCREENSHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
    # The session picker opens in the page.
    page.keyboard.press("Control+s")  # type: ignore[attr-defined]
    screen.wait_for(page, "Sessions")
    page.keyboard.press("Escape")  # type: ignore[attr-defined]

    (session,) = (served.data / "sessions").iterdir()
    recorded = json.loads((session / "messages.json").read_text())
    assert "hello from the browser tab" in json.dumps(recorded)
    assert len(served.app_processes()) == 1
    # Closing the tab ends its deep-tui within seconds, and its session is free again.
    page.close()  # type: ignore[attr-defined]
    _wait(lambda: not served.app_processes(), 10, "the tab's deep-tui outlived the tab")
    from tui.store.lock import is_locked

    assert not is_locked(session)


@needs_browser
def test_a_second_tab_on_the_same_session_is_told_it_is_open_elsewhere(tmp_path: Path, browser: object) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "tui.cli", "run", "--data-dir", str(data), "--model", "offline", "help"],
                   cwd=work, check=True, capture_output=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    with serving(tmp_path, "--continue") as served:
        first, first_screen = _open_tab(browser, served)
        first_screen.wait_for(first, "Type a message")
        _wait(lambda: len(served.app_processes()) == 1, 10, "no deep-tui for the first tab")
        second, second_screen = _open_tab(browser, served)
        second_screen.wait_for(second, "open in another")
        second.keyboard.press("Escape")  # type: ignore[attr-defined]
        _wait(lambda: len(served.app_processes()) == 1, 10, "the refused tab's deep-tui did not end")


@needs_browser
def test_killing_the_server_loses_nothing(served: Served, browser: object) -> None:
    page, screen = _open_tab(browser, served)
    screen.wait_until_ready(page)
    screen.type_prompt(page, "read note.txt")
    page.keyboard.press("Enter")  # type: ignore[attr-defined]
    screen.wait_for(page, "hello from the browser tab")
    (app_pid,) = served.app_processes()
    served.process.kill()  # SIGKILL: no goodbye to the tab's deep-tui
    served.process.wait()
    _wait(lambda: not Path(f"/proc/{app_pid}").exists() or "zombie" in _state(app_pid), 10,
          "the tab's deep-tui outlived its server")
    (session,) = (served.data / "sessions").iterdir()
    from tui.store.lock import is_locked

    assert not is_locked(session)
    assert "hello from the browser tab" in (session / "messages.json").read_text()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split("\n", 1)[0]
    except (OSError, IndexError):
        return "zombie"
