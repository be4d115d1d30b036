"""Text from models, configs and commands is data: how every renderer writes it.

Names, details, reasons and command output come from strangers' models, a config's
known-failure tables and the output of `--run` commands. None of it may become markup
(a `<img onerror=…>` in a docs page), a link to anything but an http(s) address, a
terminal escape sequence (a title change, a cleared screen) or a character XML cannot
hold (a junit.xml a CI system refuses). Ordinary text — letters, digits, `_ . - · ≥`,
an onnxruntime message's `[ONNXRuntimeError]`, a range's `<1.21` — comes out as it
went in, so the same results render the same files as before.
"""

from __future__ import annotations

import re
from urllib.parse import quote
from xml.sax.saxutils import escape

#: C0 controls but tab and newline, DEL, C1 controls, lone surrogates (what
#: `surrogateescape` makes of undecodable bytes) and the two non-characters XML refuses.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
#: Markup in inline Markdown: a backslash that could escape our punctuation (before
#: punctuation, or last, where our own markup follows), `]` that could make a link,
#: `<` opening a tag or an autolink, a backtick no other closes, pipes (table cells).
_MARKUP = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)|\](?=[(\[])|<(?=[A-Za-z/!?])|[`|]")
#: A reference definition's start (`[x]: address`, where a block starts), or a text in
#: brackets that our `: address` could follow: its `[` is escaped.
_REFERENCE = re.compile(r"^( {0,3})\[(?=(?:[^\[\]\\]|\\.)*\](?::|$))")
#: A code span: a run of backticks, text, the same run (CommonMark's rule).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
#: What a code span may not hold to stay one where it may hold a pipe: a GitHub table
#: splits its cells at a pipe even inside a code span unless it is escaped, and after
#: a backslash (literal in a code span) the escape is read as an escaped backslash.
_UNSAFE_IN_CODE = re.compile(r"\\(?=.*\|)")
#: Characters a link's address keeps as they are; the rest is percent-encoded, so the
#: address cannot end a Markdown link, a table cell or an HTML attribute early.
_URL_SAFE = "/:?#[]@!$&'*+,;=%~"


def _escape_control(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\r":
        return "\\r"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that did not decode, kept as that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character written as a visible escape (`\\x1b`, `\\x07`,
    `\\r`, `\\x80` for an undecodable byte); tabs and newlines stay. Safe on a terminal
    and in XML."""
    return _CONTROL.sub(_escape_control, text)


def xml_text(text: str) -> str:
    """Text for XML (an SVG) in element content or a double-quoted attribute:
    printable, with `& < > "` as entities."""
    return escape(printable(text), {'"': "&quot;"})


def one_line(text: str) -> str:
    """Printable, with line breaks as spaces: for places one line long."""
    return printable(text.replace("\r\n", " ").replace("\n", " ").replace("\r", " "))


def _escape_markup(text: str) -> str:
    return _MARKUP.sub(lambda m: "&lt;" if m.group() == "<" else "\\" + m.group(), text)


def md_text(text: str) -> str:
    """Inline Markdown that reads as `text` and is nothing but text: one line, no tag,
    no link, no table cell boundary. Its code spans (`pads`) stay code spans, which
    are inert, their pipes escaped as a GitHub table needs (a backslash shows outside
    one), unless a backslash would undo that."""
    text = one_line(text)
    out = []
    at = 0
    for span in _CODE_SPAN.finditer(text):
        if _UNSAFE_IN_CODE.search(span.group(2)):
            continue  # escaped as text instead, with what is around it
        out += [_escape_markup(text[at : span.start()]), span.group().replace("|", "\\|")]
        at = span.end()
    out.append(_escape_markup(text[at:]))
    return _REFERENCE.sub(r"\1\\[", "".join(out))


def md_code(text: str, in_table: bool = False) -> str:
    """`text` as a code span, fenced by more backticks than it holds in a row. Inside a
    GitHub table (`in_table`), where a pipe ends the cell even in a code span, its pipes
    are escaped; when a backslash would undo that, it is escaped text instead."""
    text = one_line(text)
    if in_table and _UNSAFE_IN_CODE.search(text):
        return _escape_markup(text)
    if in_table:
        text = text.replace("|", "\\|")
    runs = [len(run) for run in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    if text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def md_fence(text: str, info: str = "") -> str:
    """`text` as a fenced code block whose fence no line of it can close."""
    text = printable(text)
    runs = [len(run) for run in re.findall("`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def safe_link(url: str) -> str:
    """The address to link to: `url` when it is an absolute http(s) address, with the
    characters that could end a link or attribute percent-encoded; "" for any other
    scheme (`javascript:`, `data:`), a relative address or text with controls."""
    url = url.strip()
    if not re.match(r"https?://[^/\s]", url, re.IGNORECASE) or _CONTROL.search(url):
        return ""
    return quote(url, safe=_URL_SAFE)


def md_link(label: str, url: str) -> str:
    """`[label](url)` for an http(s) address; otherwise the label as text and the address
    in a code span after it, never a link."""
    href = safe_link(url)
    if href:
        return f"[{md_text(label)}]({href})"
    return md_code(url) if label == url else f"{md_text(label)} ({md_code(url)})"


def md_address(url: str) -> str:
    """An address shown as text: an http(s) one as it is (a viewer may link it), any
    other in a code span, inert."""
    return md_text(url) if safe_link(url) else md_code(url)


def md_path(path: str) -> str:
    """A relative link target (`families/pads.md#checker`) percent-encoded: no scheme,
    no character that ends the link."""
    return quote(path, safe="/#")


def md_anchor(text: str) -> str:
    """An anchor (an HTML id, a link's `#fragment`) made of `text`: word characters,
    dots and hyphens as they are, any other character a hyphen."""
    return re.sub(r"[^\w.-]", "-", text, flags=re.ASCII)
