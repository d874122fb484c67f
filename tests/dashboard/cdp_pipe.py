"""A headless Chromium driven over its DevTools protocol on a pipe (`--remote-debugging-pipe`:
JSON messages ended by NUL on file descriptors 3 and 4), so a test can type into a page as a
person does, without a WebSocket library."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from typing import Any


class Browser:
    def __init__(self, chromium: str) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="omecdp")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the child's fds 3 and 4 must be the pipe's ends: dup them there in the child (via
        # fds above both, so neither end is overwritten by the other's move)
        def place() -> None:
            high_r, high_w = os.dup(to_browser_r) + 100, os.dup(from_browser_w) + 100
            os.dup2(to_browser_r, high_r)
            os.dup2(from_browser_w, high_w)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)
        self._proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-extensions", f"--user-data-dir={self._profile.name}",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4, to_browser_r, from_browser_w), preexec_fn=place,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target,
                                  flatten=True)["sessionId"]

    def call(self, method: str, *, session: str | None = None, timeout: float = 30,
             **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._next:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return dict(reply.get("result", {}))
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        raise TimeoutError(method)

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, session=self._session, **params)

    def evaluate(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        return result.get("result", {}).get("value")

    def goto(self, url: str) -> None:
        self.page("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")

    def wait_for(self, expression: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return
            time.sleep(0.1)
        raise TimeoutError(expression)

    def type(self, text: str) -> None:
        """Text typed into the focused element, then Enter."""
        self.page("Emulation.setFocusEmulationEnabled", enabled=True)
        self.page("Input.insertText", text=text)
        for kind in ("keyDown", "keyUp"):
            self.page("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                      windowsVirtualKeyCode=13, nativeVirtualKeyCode=13,
                      **({"text": "\r"} if kind == "keyDown" else {}))

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._profile.cleanup()
