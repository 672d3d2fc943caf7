"""A small Chrome DevTools protocol client over ``--remote-debugging-pipe`` (standard library only).

Chromium reads JSON commands separated by NUL bytes on its file descriptor 3 and writes replies and
events on 4. :class:`Browser` opens a page, waits for its load event, and reports what a reader would
see wrong: console errors, uncaught exceptions, failed resource loads, images that did not decode; and
writes a screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
import subprocess
import time

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser", shutil.which("chromium") or "")
                 if p and os.path.exists(p)), None)

BROKEN_IMAGES_JS = ("Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
                    ".map(i => i.getAttribute('src'))")


#: elements that stick out of the viewport (not inside a box that scrolls or clips sideways), and the page's
#: own horizontal overflow
WIDE_JS = """(() => {
  const W = document.documentElement.clientWidth, out = [];
  if (document.documentElement.scrollWidth > W + 1) out.push('page scrolls sideways: ' +
      document.documentElement.scrollWidth + ' > ' + W);
  const clipped = el => { for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right > W + 1 || r.left < -1) && !clipped(el))
      out.push(el.tagName.toLowerCase() + (el.getAttribute('src') ? ' ' + el.getAttribute('src') : '') +
               ' spans ' + Math.round(r.left) + '..' + Math.round(r.right) + ' px of ' + W);
  }
  return out.slice(0, 20);
})()"""

#: every image: its src, drawn width in CSS px at 100 %, natural width
IMAGES_JS = ("Array.from(document.images).map(i => ({src: i.getAttribute('src'), "
             "width: i.getBoundingClientRect().width, natural: i.naturalWidth}))")


def svg_min_font_and_width(path):
    """(smallest font size, viewBox width) of an SVG figure, in its user units (matplotlib: pt); the font
    size is None for an SVG without text."""
    text = open(path, encoding="utf-8").read()
    sizes = [float(x) for x in re.findall(r"font-size[:=]\s*['\"]?([0-9.]+)", text)]
    sizes += [float(x) for x in re.findall(r"font:\s*(?:[a-z]+\s+)*([0-9.]+)px", text)]
    vb = re.search(r"viewBox=['\"]\s*[-0-9.]+\s+[-0-9.]+\s+([0-9.]+)", text)
    return (min(sizes) if sizes else None), float(vb.group(1))


def png_text(path):
    """{keyword: text} of a PNG's tEXt chunks (matplotlib writes ``savefig(metadata=...)`` there)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    out, pos = {}, 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"tEXt":
            key, _, value = data[pos + 8:pos + 8 + length].partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        if kind == b"IEND":
            break
        pos += 12 + length
    return out


class Browser:
    def __init__(self, executable=CHROMIUM, timeout=60.0):
        self.timeout = timeout
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def fds():  # the child's fd 3 reads our commands, fd 4 carries its replies
            a, b = os.dup(to_child_r), os.dup(from_child_w)   # above 4, so the dup2s cannot clobber them
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--disable-extensions", "--hide-scrollbars", "about:blank"],
            pass_fds=(3, 4, to_child_r, from_child_w), preexec_fn=fds, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def _send(self, msg):
        os.write(self._w, json.dumps(msg).encode() + b"\0")

    def _read(self, deadline):
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=False):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self._send(msg)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method):
        deadline = time.monotonic() + self.timeout
        while True:
            if any(e.get("method") == method for e in self.events):
                return
            self.events.append(self._read(deadline))

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page."""
        return self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                         session=True)["result"]["value"]

    def wide_elements(self):
        """Elements wider than the page (see :data:`WIDE_JS`), as text; [] when everything fits."""
        return self.evaluate(WIDE_JS)

    def images(self):
        """[{src, width, natural}] of the page's images (width: CSS px drawn at 100 %)."""
        return self.evaluate(IMAGES_JS)

    def visit(self, url, screenshot=None, width=1100, height=1400):
        """Load ``url``; return a list of problems (console errors, exceptions, failed loads, broken images)."""
        self.events = []
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")
        broken = self.call("Runtime.evaluate", {"expression": BROKEN_IMAGES_JS, "returnByValue": True},
                           session=True)["result"]["value"]
        problems = [f"broken image {src}" for src in broken]
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                problems.append(f"exception: {p['exceptionDetails'].get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                problems.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                problems.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        if screenshot is not None:
            data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
            with open(screenshot, "wb") as f:
                f.write(base64.b64decode(data))
        return problems

    def close(self):
        try:
            self._send({"id": self._id + 1, "method": "Browser.close"})
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
