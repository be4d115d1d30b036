"""The files `init` writes or extends, never overwriting: the templates it fills in
(compat/resources/) and the `.gitignore` entries."""

from __future__ import annotations

from pathlib import Path

from compat import resources

#: what a run leaves in the project: state (environments, cache), reports, nox's venvs
IGNORED = (".compat/", "reports/", ".nox/")


def template(name: str) -> str:
    """The text of compat/resources/NAME."""
    return resources.text(name)


def toml_list(values: list[str]) -> str:
    """`"a", "b"`: strings as TOML writes them inside a list."""
    return ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)


def _ignored(lines: list[str], entry: str) -> bool:
    bare = entry.rstrip("/")
    return any(line.strip().strip("/") == bare for line in lines)


def write_gitignore(project: Path) -> str:
    """Appends the entries .gitignore lacks (creating it); the line saying what was done."""
    path = project / ".gitignore"
    existing = path.read_text() if path.is_file() else ""
    missing = [e for e in IGNORED if not _ignored(existing.splitlines(), e)]
    if not missing:
        return f"{path.name}: ignores {', '.join(IGNORED)} already; left as it is"
    head = "\n" if existing and not existing.endswith("\n") else ""
    with path.open("a") as f:
        f.write(head + "# onnx-compat's state, reports and nox's environments\n")
        f.write("".join(e + "\n" for e in missing))
    return f"{path.name}: {', '.join(missing)} {'appended' if existing else 'written'}"
