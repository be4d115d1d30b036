"""The reference pages of the docs site, generated from the code at every site build:
every command and option from the parsers themselves, every `[tool.compat]` key, the
checks, outcomes, rewrites, JSON formats and families from their tables
(compat/cli/reference_pages.py).

Generated rather than written, so the reference cannot drift: an option added to a
parser is on the page at the next build. The site's mkdocs hook (docs/hooks.py) adds
these pages to the build without writing them into docs/; `python -m
compat.cli.reference DIR` writes them to DIR, to read or diff them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from compat.cli import options
from compat.cli.commands import COMMANDS
from compat.plan.schema import SCHEMA_FILE
from compat.render.text import md_code, md_text

#: The option groups several commands share, documented once: (anchor, heading, the
#: function that adds the group), from the table `--help` reads (compat/cli/options.py).
GROUPS: tuple[tuple[str, str, Callable[..., None]], ...] = tuple(options.GROUPS)

#: Defaults that depend on the machine the page is built on, said in words.
_MACHINE_DEFAULTS = {"jobs": "the number of CPUs"}

#: The example every command's `--help` ends with: its parser's epilog, `example: …`.
EXAMPLE_PREFIX = "example: "


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of command `name` as `onnx-compat NAME` builds it; `annotations` is
    the in-cell checker's own parser, to which `onnx-compat annotations` hands over."""
    if name == "annotations":
        from compat.cell.annotations_cli import build_parser as annotations_parser

        return annotations_parser()
    from compat.cli.main import build_parser

    parser = build_parser(name)
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    chosen: argparse.ArgumentParser = commands.choices[name]
    return chosen


def actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A parser's options and arguments, `--help` left out."""
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def _group(add: Callable[[argparse.ArgumentParser], None]) -> list[argparse.Action]:
    parser = argparse.ArgumentParser(add_help=False)
    add(parser)
    return actions(parser)


def groups_of(parser: argparse.ArgumentParser) -> list[int]:
    """The shared groups a command takes (indexes into GROUPS): every option of the
    group is among its options."""
    flags = {flag for action in actions(parser) for flag in action.option_strings}
    return [
        i
        for i, (_, _, add) in enumerate(GROUPS)
        if all(set(a.option_strings) <= flags for a in _group(add))
    ]


def own_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options and arguments of a command that no shared group it takes has."""
    shared = {f for i in groups_of(parser) for a in _group(GROUPS[i][2]) for f in a.option_strings}
    return [
        a for a in actions(parser) if not set(a.option_strings) <= shared or not a.option_strings
    ]


def invocation(action: argparse.Action) -> str:
    """How an option is written: `--onnx V1,V2`, `--package {onnx,onnxruntime}`, `MODEL`."""
    choices = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
    metavar = action.metavar if isinstance(action.metavar, str) else None
    value = metavar or choices or action.dest.upper()
    if not action.option_strings:
        return f"{value} ..." if action.nargs in ("*", "+") else value
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    if action.nargs == "?":
        value = f"[{value}]"
    return ", ".join(f"{flag} {value}" for flag in action.option_strings)


def default(action: argparse.Action) -> str:
    """The default worth saying: a value, not a flag's False or an empty list."""
    if action.dest in _MACHINE_DEFAULTS:
        return _MACHINE_DEFAULTS[action.dest]
    value = action.default
    if value is None or isinstance(value, bool) or value == [] or value == argparse.SUPPRESS:
        return ""
    return md_code(str(value))


def meaning(action: argparse.Action) -> str:
    """An option's help, said as a table cell, with "repeatable" where it is."""
    text = md_text(action.help or "")
    repeatable = isinstance(action, argparse._AppendAction)
    if repeatable and "repeatable" not in text:
        text = f"{text} (repeatable)" if text else "repeatable"
    if action.required and action.option_strings:
        text = f"required: {text}"
    return text


def option_table(found: Sequence[argparse.Action]) -> list[str]:
    lines = ["| option | meaning | default |", "|---|---|---|"]
    for action in found:
        lines.append(f"| {md_code(invocation(action))} | {meaning(action)} | {default(action)} |")
    return lines


def example(parser: argparse.ArgumentParser) -> str:
    """The command line of a parser's `example: …` epilog ("" without one)."""
    epilog = parser.epilog or ""
    return epilog[len(EXAMPLE_PREFIX) :].strip() if epilog.startswith(EXAMPLE_PREFIX) else ""


def _differing(parser: argparse.ArgumentParser, taken: list[int]) -> list[str]:
    """The shared options whose default this command changes: `--out reports/scoreboard`."""
    own = {a.dest: a for a in actions(parser)}
    said = []
    for i in taken:
        for shared in _group(GROUPS[i][2]):
            mine = own.get(shared.dest)
            if mine is not None and mine.default != shared.default:
                value = "none" if mine.default is None else str(mine.default)
                said.append(md_code(f"{shared.option_strings[0]} {value}"))
    return said


def command_section(name: str) -> list[str]:
    parser = command_parser(name)
    row = COMMANDS[name]
    lines = [
        f"## `onnx-compat {name}` {{#{name}}}",
        "",
        md_text(row.help[:1].upper() + row.help[1:]) + ".",
    ]
    if parser.description and name != "annotations":
        lines += ["", md_text(parser.description)]
    if example(parser):
        lines += ["", "Example:", "", "```bash", example(parser), "```"]
    found = own_actions(parser)
    if found:
        lines += ["", *option_table(found)]
    taken = groups_of(parser)
    if taken:
        links = ", ".join(f"[{GROUPS[i][1].lower()}](#{GROUPS[i][0]})" for i in taken)
        lines += ["", f"It also takes the shared options: {links}."]
        changed = _differing(parser, taken)
        if changed:
            lines[-1] += f" Its own defaults: {', '.join(changed)}."
    return lines


def commands_page() -> str:
    lines = [
        "# Commands",
        "",
        "Generated from the command-line parsers at every build of this site: every "
        "option of every command is here, as `onnx-compat COMMAND --help` shows it.",
        "",
        "`python -m compat COMMAND` is the same program. In this repository, and in a "
        "project set up by `onnx-compat init`, `nox -s COMMAND -- OPTIONS` runs "
        "`onnx-compat COMMAND OPTIONS` in nox's environment (`matrix`, `repro`, `bisect`, "
        "`triage` and `report`; this repository adds `scoreboard` and `merge`).",
        "",
        "| command | what it does |",
        "|---|---|",
        *(f"| [`{name}`](#{name}) | {md_text(row.help)} |" for name, row in COMMANDS.items()),
    ]
    for name in COMMANDS:
        lines += ["", *command_section(name)]
    lines += [
        "",
        "## Shared options",
        "",
        "Options several commands take, with the same meaning in each: a `bisect` or "
        "a `repro` builds its cells as the `matrix` did.",
    ]
    for anchor, heading, add in GROUPS:
        lines += ["", f"### {heading} {{#{anchor}}}", "", *option_table(_group(add))]
    return "\n".join(lines) + "\n"


def pages(docs_dir: Path, cases_dir: Path) -> dict[str, str]:
    """Every generated page, by its path in the site's docs folder."""
    from compat.cli import reference_pages as made
    from compat.cli.reference_json import json_page

    return {
        "reference/commands.md": commands_page(),
        "reference/configuration.md": made.configuration_page(),
        "reference/checks.md": made.checks_page(),
        "reference/outcomes.md": made.outcomes_page(),
        "reference/rewrites.md": made.rewrites_page(),
        "reference/json.md": json_page(),
        "reference/families.md": made.families_page(cases_dir, docs_dir),
        # published as it ships: editors and validate-pyproject read this same file
        "reference/tool_compat.schema.json": SCHEMA_FILE.read_text(encoding="utf-8"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m compat.cli.reference DIR`: writes the generated pages under DIR."""
    parser = argparse.ArgumentParser(prog="python -m compat.cli.reference")
    parser.add_argument("out", type=Path, help="folder the reference/ pages go into")
    parser.add_argument("--cases", type=Path, default=Path("cases"), help="the case modules")
    args = parser.parse_args(argv)
    for name, text in pages(Path("docs"), args.cases).items():
        path = args.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
