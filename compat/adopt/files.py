"""The files `init` writes or extends, never overwriting: the templates it fills in
(compat/resources/), the TOML strings it writes into them, and the `.gitignore`
entries."""

from __future__ import annotations

from pathlib import Path

from compat import resources
from compat.adopt.writes import Edit, read_existing, shown
from compat.core.errors import UsageError

#: what a run leaves in the project: state (environments, cache), reports, nox's venvs
IGNORED = (".compat/", "reports/", ".nox/")

#: the escapes of a TOML basic string; every other control character is `\uXXXX`
ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def template(name: str) -> str:
    """The text of compat/resources/NAME."""
    return resources.text(name)


def toml_string(value: str) -> str:
    """`value` as a TOML basic string: quotes, backslashes and every control character
    escaped (TOML allows none raw but the tab; a raw newline ends the string, and the
    file no longer parses). A byte that is not UTF-8 (a surrogate escape) TOML cannot
    hold: a one-line error."""
    out = []
    for char in value:
        code = ord(char)
        if 0xD800 <= code <= 0xDFFF:
            raise UsageError(
                f"{shown(value)}: holds bytes that are not UTF-8 text, which a TOML file "
                "cannot hold: give it as UTF-8"
            )
        if char in ESCAPES:
            out.append(ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_list(values: list[str]) -> str:
    """`"a", "b"`: strings as TOML writes them inside a list."""
    return ", ".join(toml_string(v) for v in values)


def _ignored(lines: list[str], entry: str) -> bool:
    bare = entry.rstrip("/")
    return any(line.strip().strip("/") == bare for line in lines)


def gitignore_edit(project: Path) -> Edit:
    """The .gitignore with the entries it lacks appended (or a new one). Read and
    written as bytes: git reads it so, and a line that is not UTF-8 stays as it was."""
    name = Path(".gitignore")
    existing = read_existing(project, name)
    lines = existing.decode("utf-8", "replace").splitlines()
    missing = [e for e in IGNORED if not _ignored(lines, e)]
    if not missing:
        return Edit(name, None, [f"{name}: ignores {', '.join(IGNORED)} already; left as it is"])
    head = b"\n" if existing and not existing.endswith(b"\n") else b""
    added = "# onnx-compat's state, reports and nox's environments\n"
    added += "".join(e + "\n" for e in missing)
    said = f"{name}: {', '.join(missing)} {'appended' if existing else 'written'}"
    return Edit(name, existing + head + added.encode(), [said])
