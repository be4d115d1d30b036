"""One attempt of a project's command: its log, and for a rerun, only the failing tests.

The first attempt writes the command's log anew; each rerun appends to it under a line
that says which attempt it is and what it ran, so the log a report names holds every
attempt. Each attempt's output streams into it as it comes, at most LOG_CAP bytes (the
log says what it cut), and ends with a line saying how the attempt ended. A pytest rerun
runs only the tests the first attempt reported failing (compat/cell/pytest_only.py,
loaded by every pytest the command starts).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import sys

#: The pytest plugin a rerun loads to run only the failing tests, by its module name.
ONLY_PLUGIN = "onnx_compat_only_failing"


#: Most bytes of one attempt's output a log keeps; past it, the first LOG_CAP - LOG_TAIL
#: and the last LOG_TAIL bytes, with a line that says how much was cut between.
LOG_CAP = 50 * 10**6
LOG_TAIL = 4 * 10**6
#: What the summary reads (compat/cell/outputs.py): the output's first bytes (a runner's
#: header) and its last (its summary), never the whole of a large output.
SUMMARY_HEAD = 256 * 2**10
SUMMARY_TAIL = 2 * 2**20


def size(count):
    """`count` bytes, for a person: "1.0 GB", "46 MB", "12 kB", "80 bytes"."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= 10 * scale:
            return "%d %s" % (count // scale, unit)
        if count >= scale:
            return "%.1f %s" % (count / scale, unit)
    return "%d bytes" % count


class Log:
    """A command's output, every attempt in the one file: the first writes it anew, each
    rerun appends under a line that says which attempt it is and what it ran.

    The output goes to the file as it comes (`add`), at most LOG_CAP bytes of it, and only
    a bounded head and tail of it stays in memory, for the summary (`text`); `end` writes
    what the tail holds and the attempt's status as its last line."""

    def __init__(self, path, command, cwd, source, task, cap=LOG_CAP):
        self.path = path
        self.command = command
        self.cwd = cwd
        self.source = source
        self.attempt = task.get("attempt") or 1
        self.only = task.get("only") or []
        self.cap = cap
        self.keep = min(LOG_TAIL, cap // 2)
        self.total = self.written = 0  # bytes of output seen, and written to the file
        self.head = bytearray()
        self.tail = bytearray()  # its first bytes, its last
        self._file = None
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._newline = True  # the file ends a line

    def _header(self):
        where = self.cwd
        if self.source and os.path.abspath(self.source) != os.path.abspath(self.cwd):
            where += " (this cell's copy of %s's tree)" % self.source
        head = "$ %s\n# in %s, with %s\n\n" % (self.command, where, sys.prefix)
        if self.attempt > 1:
            ran = "the whole command again"
            if self.only:
                tests = (
                    "%d failing tests" % len(self.only) if len(self.only) > 1 else "failing test"
                )
                ran = "only the %s attempt 1 reported" % tests
            head = "\n\n# ---- attempt %d: %s ----\n%s" % (self.attempt, ran, head)
        return head

    def start(self):
        """Writes the attempt's header (the command, where and with which Python it runs)."""
        if not self.path:
            return
        try:
            folder = os.path.dirname(self.path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            # open until `end`, unbuffered: what a killed worker wrote is in it
            self._file = open(self.path, "ab" if self.attempt > 1 else "wb", buffering=0)  # noqa: SIM115
            self._file.write(self._header().encode("utf-8"))
            self._file.flush()
        except OSError:
            self._close()

    def add(self, data):
        """More of the output: to the file while under the cap, its last bytes kept."""
        self.total += len(data)
        if len(self.head) < SUMMARY_HEAD:
            self.head += data[: SUMMARY_HEAD - len(self.head)]
        room = self.cap - self.keep - self.written
        if room > 0:
            self._write(self._decode(data[:room]))
            self.written += len(data[:room])
        self.tail += data
        if len(self.tail) > 2 * max(self.keep, SUMMARY_TAIL):
            del self.tail[: -max(self.keep, SUMMARY_TAIL)]

    def cut(self):
        """How many bytes of the output the log leaves out (0: none)."""
        return max(0, self.total - self.written - self.keep)

    def end(self, status):
        """Writes the rest of the output (past the cap: what was cut, then its tail) and
        `status` as the attempt's last line."""
        self._write(self._decode(b"", True))
        rest = self.total - self.written
        if self.cut():
            self._write(
                "\n# ---- %s of output cut here: the log keeps its first %s and its last %s "
                "(at most %s an attempt) ----\n"
                % (size(self.cut()), size(self.written), size(self.keep), size(self.cap))
            )
            rest = self.keep
        if rest:
            self._write(bytes(self.tail[-rest:]).decode("utf-8", "replace"))
        self._write(("" if self._newline else "\n") + "# %s\n" % status)
        self._close()

    def text(self):
        """The output as the summary reads it: whole when small, else its first
        SUMMARY_HEAD and last SUMMARY_TAIL bytes."""
        after = self.total - len(self.head)
        tail = bytes(self.tail[-min(after, SUMMARY_TAIL) :]) if after > 0 else b""
        gap = after - len(tail)
        middle = ("\n[%s of output not read]\n" % size(gap)).encode() if gap else b""
        return (bytes(self.head) + middle + tail).decode("utf-8", "replace")

    def _write(self, text):
        if self._file is None or not text:
            return
        try:
            self._file.write(text.encode("utf-8"))
            self._newline = text.endswith("\n")
        except OSError:  # a full disk: the summary still comes
            self._close()

    def _close(self):
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        self._file = None

    def write(self, output, status):
        """A whole attempt at once: its header, `output` and `status`."""
        self.start()
        self.add(output.encode("utf-8"))
        self.end(status)


def only_failing(env, ids, scratch):
    """Makes pytest run only the tests `ids` (a rerun's): the plugin compat/cell/
    pytest_only.py, copied into the command's own temp folder, named in PYTEST_ADDOPTS,
    with the ids in a file beside it; any pytest the command starts loads it. Returns
    the file where the plugin says which of the ids it ran (`observed`)."""
    folder = os.path.join(scratch, "onnx-compat-plugin")
    os.makedirs(folder)
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copyfile(os.path.join(here, "pytest_only.py"), os.path.join(folder, ONLY_PLUGIN + ".py"))
    listed = os.path.join(folder, "ids.txt")
    with open(listed, "w", encoding="utf-8") as f:
        f.write("".join(nodeid + "\n" for nodeid in ids))
    env["ONNX_COMPAT_ONLY"] = listed
    env["ONNX_COMPAT_CHOSEN"] = os.path.join(folder, "chosen.txt")
    env["PYTHONPATH"] = folder
    given = env.get("PYTEST_ADDOPTS", "")
    env["PYTEST_ADDOPTS"] = (given + " " if given else "") + "-p " + ONLY_PLUGIN
    return env["ONNX_COMPAT_CHOSEN"]


def observed(chosen):
    """The ids the plugin ran (`only_failing`'s file), or None when no pytest loaded it
    (the command ran no pytest, or kept PYTHONPATH from it: then it ran everything)."""
    try:
        with open(chosen, encoding="utf-8") as f:
            return sorted({line.rstrip("\n") for line in f if line.strip()})
    except OSError:
        return None
