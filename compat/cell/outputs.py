"""One line that says how a user's command ended, read from what it printed.

A test runner's last line is rarely its verdict (pytest may end on a warning, xdist on
worker noise), so the detail of a `--run` result is the runner's own summary: pytest's
counts (`46 failed, 606 passed`) or unittest's `FAILED (failures=2)`, plus the ids of the
tests that failed. Output from anything else keeps its last meaningful lines, so a
script's traceback ends with its exception.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

#: Longest summary of a test run; the counts are always kept.
SUMMARY_LIMIT = 400
#: Longest tail kept from output that is not a known test runner's.
TAIL_LIMIT = 300
#: Lines such a tail keeps at most.
TAIL_LINES = 4
#: Longest single test id or message quoted.
ITEM_LIMIT = 150

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")

# pytest: `==== 5 failed, 4 passed, 1 warning in 0.70s ====`, `no tests ran in 0.01s`
_PYTEST_COUNTS = re.compile(
    r"^=*\s*(?P<counts>(?:\d+ [a-z]+(?:, )?)+|no tests ran)"
    r" in [\d.]+ ?s(?:econds)?(?: \([\d:.]+\))?\s*=*$"
)
_PYTEST_BANG = re.compile(r"^!{3,} (?P<text>.+?) !{3,}$")  # Interrupted, stopping after ...
_PYTEST_SECTION = re.compile(r"^={3,} (?P<title>.+?) ={3,}$")
_PYTEST_SHORT = re.compile(r"^(?:FAILED|ERROR) (?P<rest>.+)$")
_PYTEST_VERBOSE = re.compile(r"^(?P<id>\S+::.+?) (?:FAILED|ERROR)(?: +\[ *\d+%\])?$")
_XDIST_VERBOSE = re.compile(r"^\[gw\d+\] \[ *\d+%\] (?:FAILED|ERROR) (?P<id>.+)$")
_PYTEST_HEADER = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$")
_HEADER_PREFIX = re.compile(r"^(?:ERROR at (?:setup|teardown) of |ERROR collecting )")

# unittest: `Ran 12 tests in 0.010s`, then `OK`, `FAILED (failures=2)` or `NO TESTS RAN`
_UNITTEST_RAN = re.compile(r"^Ran (?P<n>\d+) tests? in [\d.]+s$")
_UNITTEST_STATUS = re.compile(r"^(?:OK|FAILED|NO TESTS RAN)(?: \(.*\))?$")
_UNITTEST_ID = re.compile(
    r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>\S+) \((?P<where>[^()\s]+)\)(?P<sub>.*)$"
)
_RULE = re.compile(r"^(?:={5,}|-{5,})$")

# what a generic tail leaves out: warnings (with the source line quoted under them),
# progress bars and lines of dots
_WARNING = re.compile(r"^(?:\S.*:\d+: )?\w*Warning: |^\s+warnings\.warn\(")
_PROGRESS = re.compile(r"\d+%\|.*\||^[.sxFEw]+(?: +\[ *\d+%\])?$|^[\W_]+$")


def clean_lines(output: str) -> List[str]:
    """The lines a terminal would show: colour codes gone, a carriage return's overwrite
    applied, trailing space stripped."""
    lines = []
    for raw in _ANSI.sub("", output).split("\n"):
        lines.append(raw.rstrip("\r").split("\r")[-1].rstrip())
    return lines


def clip(text: str, limit: int = ITEM_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _split_nodeid(rest: str) -> Tuple[str, str]:
    """A short-summary entry's node id and message: `tests/x.py::t[a b] - Error: y`.

    A parametrized id may hold spaces and brackets, so the id runs to the end of its
    balanced `[...]` rather than to the first space.
    """
    match = re.match(r"[^\s\[]+", rest)
    end = match.end() if match else 0
    if end < len(rest) and rest[end] == "[":
        depth = 0
        for i in range(end, len(rest)):
            depth += {"[": 1, "]": -1}.get(rest[i], 0)
            if depth == 0:
                end = i + 1
                break
        else:  # unbalanced: the id ends at the last `]` before pytest's ` - `
            end = rest.rfind("] - ") + 1 or len(rest)
    message = rest[end:].strip()
    return rest[:end], message[2:].strip() if message.startswith("- ") else message


def _dedup(items: List[str]) -> List[str]:
    return list(dict.fromkeys(items))


def _last_index(lines: List[str], pattern: re.Pattern[str]) -> int:
    for i in range(len(lines) - 1, -1, -1):
        if pattern.match(lines[i]):
            return i
    return -1


def _pytest_failures(lines: List[str]) -> List[Tuple[str, str]]:
    """(id, message) of each failed or erroring test: from the short test summary when
    there is one, else from `-v` status lines, else from the failure section headers."""
    short = []
    in_summary = False
    for line in lines:
        section = _PYTEST_SECTION.match(line)
        if section:
            in_summary = section.group("title") == "short test summary info"
            continue
        entry = _PYTEST_SHORT.match(line) if in_summary else None
        if entry:
            short.append(_split_nodeid(entry.group("rest")))
    if short:
        return short
    verbose = [m.group("id") for m in map(_PYTEST_VERBOSE.match, lines) if m]
    verbose += [m.group("id") for m in map(_XDIST_VERBOSE.match, lines) if m]
    if verbose:
        return [(nodeid, "") for nodeid in verbose]
    headers = [m.group("name") for m in map(_PYTEST_HEADER.match, lines) if m]
    return [(_HEADER_PREFIX.sub("", name), "") for name in headers]


def _pytest_message(lines: List[str], nodeid: str) -> str:
    """The first `E   ` line under the failure section of `nodeid` (the reason a
    collection error gives when its short-summary entry has none)."""
    name = nodeid.split("::")[-1] if "::" in nodeid else nodeid
    wanted = {name, nodeid.split("::", 1)[-1].replace("::", "."), "ERROR collecting " + nodeid}
    wanted |= {"ERROR at setup of " + name, "ERROR at teardown of " + name}
    inside = False
    for line in lines:
        header = _PYTEST_HEADER.match(line)
        if header or _PYTEST_SECTION.match(line):
            inside = header is not None and header.group("name") in wanted
        elif inside and line.startswith("E "):
            return line[1:].strip()
    return ""


def _unittest_failures(lines: List[str]) -> List[Tuple[str, str]]:
    failures = []
    for i, line in enumerate(lines):
        match = _UNITTEST_ID.match(line)
        if not match:
            continue
        name = match.group("name")
        where = match.group("where")
        if where.endswith("." + name):  # Python 3.11+ names the method twice
            where = where[: -len(name) - 1]
        # a module that failed to import is a test of unittest.loader named after it
        nodeid = name if where.startswith("unittest.loader.") else where + "." + name
        message = ""
        for later in lines[i + 2 :]:  # the traceback ends at a blank line or a rule
            if _RULE.match(later) or later.startswith(("Ran ", "FAIL: ", "ERROR: ")):
                break
            if later.strip() and not later.startswith(" "):
                message = later.strip()
        failures.append((nodeid + match.group("sub"), message))
    return failures


def _runner(lines: List[str]) -> Optional[str]:
    """Which test runner's summary ends the output: "pytest", "unittest" or None."""
    pytest_at = _last_index(lines, _PYTEST_COUNTS)
    unittest_at = _last_index(lines, _UNITTEST_RAN)
    if pytest_at < 0 and unittest_at < 0:
        if any(line.startswith("=") and "test session starts" in line for line in lines):
            return "pytest"  # one that never reached its summary (killed, timed out)
        return None
    return "pytest" if pytest_at > unittest_at else "unittest"


def runner(output: str) -> Optional[str]:
    """Which test runner's summary ends the output: "pytest", "unittest" or None."""
    return _runner(clean_lines(output))


def failing_ids(output: str) -> List[str]:
    """The ids of the tests a pytest or unittest run reports failed or in error, in
    the order it reports them (`tests/test_x.py::test_a[p]`, `module.Class.test_x`);
    an empty list when the output is neither's or nothing failed."""
    lines = clean_lines(output)
    runner = _runner(lines)
    if runner == "pytest":
        return _dedup([nodeid for nodeid, _ in _pytest_failures(lines)])
    if runner == "unittest":
        return _dedup([nodeid for nodeid, _ in _unittest_failures(lines)])
    return []


def with_ids(head: str, failures: List[Tuple[str, str]], limit: int = SUMMARY_LIMIT) -> str:
    """`head: id, id, … (+N more)` within `limit` characters; a lone failure also says
    why, when the runner said."""
    ids = _dedup([clip(nodeid) for nodeid, _ in failures])
    if not ids:
        return clip(head, limit)
    if len(ids) == 1 and failures[0][1]:
        return clip("%s: %s (%s)" % (head, ids[0], clip(failures[0][1])), limit)
    text = head + ": " + ids[0]
    for i, nodeid in enumerate(ids[1:], start=1):
        more = " … (+%d more)" % (len(ids) - i - 1) if i < len(ids) - 1 else ""
        if len(text) + 2 + len(nodeid) + len(more) > limit:
            return text + " … (+%d more)" % (len(ids) - i)
        text += ", " + nodeid
    return clip(text, limit)


def _pytest_summary(lines: List[str]) -> str:
    failures = _pytest_failures(lines)
    at = _last_index(lines, _PYTEST_COUNTS)
    if at < 0:  # killed or timed out: what failed so far, and where it stopped
        last = " | last: " + clip(tail(lines, 1), 100)
        head = "pytest stopped before its summary" + ("; failed so far" if failures else "")
        return with_ids(head, failures, SUMMARY_LIMIT - len(last)) + last
    head = _PYTEST_COUNTS.match(lines[at]).group("counts")  # type: ignore[union-attr]
    # why it stopped (`Interrupted: 1 error during collection`) and usage errors
    # (`ERROR: file or directory not found: x`)
    notes = [m.group("text") for m in map(_PYTEST_BANG.match, lines) if m][-1:]
    notes += [clip(line) for line in lines if line.startswith("ERROR: ")][:1]
    if notes:
        head += " (%s)" % "; ".join(notes)
    if len(failures) == 1 and not failures[0][1]:
        failures = [(failures[0][0], _pytest_message(lines, failures[0][0]))]
    return with_ids(head, failures)


def _unittest_summary(lines: List[str]) -> str:
    at = _last_index(lines, _UNITTEST_RAN)
    n = int(_UNITTEST_RAN.match(lines[at]).group("n"))  # type: ignore[union-attr]
    status = next((s for s in lines[at + 1 :] if _UNITTEST_STATUS.match(s)), "")
    ran = "%d test%s" % (n, "" if n == 1 else "s")
    if status.startswith("FAILED"):
        head = "%s of %s" % (status, ran)
    else:
        head = "ran %s: %s" % (ran, status) if status else "ran " + ran
    return with_ids(head, _unittest_failures(lines[:at]))


def tail(lines: List[str], count: int = TAIL_LINES, limit: int = TAIL_LIMIT) -> str:
    """The last `count` lines that are neither warnings nor progress, joined by ` | `;
    when too long, their end is what stays (a traceback's exception line)."""
    kept = [
        line.strip()
        for line in lines
        if line.strip() and not _WARNING.search(line) and not _PROGRESS.search(line.strip())
    ]
    if not kept:  # nothing but noise: its last line still says where it stopped
        kept = [line.strip() for line in lines if line.strip()]
    text = " | ".join(kept[-count:])
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def summarize(output: str) -> str:
    """One line for what a command printed (stdout and stderr together): a pytest or
    unittest run's counts and failing test ids, else the output's last meaningful lines."""
    lines = clean_lines(output)
    runner = _runner(lines)
    if runner == "pytest":
        return _pytest_summary(lines)
    if runner == "unittest":
        return _unittest_summary(lines)
    return tail(lines)
