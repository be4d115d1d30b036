"""The one-line meanings the reference shows beside what the code declares without words:
each `[tool.compat]` key (read from its JSON schema, which holds them), each field of
matrix.json and of the case spec a cell reads, and each exit code.

The fields themselves stay in their records (compat/core/report.py,
compat/core/outcomes.py, compat/cell/protocol.py): tests/test_docs_site.py holds each
table here equal to them, so a field added without its meaning fails a test instead of
going undocumented. A configuration key cannot be added without one: the schema that
admits it carries its `description`.
"""

from __future__ import annotations

from compat.plan.schema import meanings

#: Each table of the configuration, by its TOML header: key -> meaning. Read from the
#: schema (compat/resources/tool_compat.schema.json), where each key's `description` is
#: written once: editors, validate-pyproject and this reference show the same words.
CONFIG: dict[str, dict[str, str]] = meanings()

#: What each record of matrix.json holds, by its place in the file: field -> meaning.
MATRIX_JSON: dict[str, dict[str, str]] = {
    "the file": {
        "schema_version": "the format's version (1); a reader refuses another",
        "run": "metadata of the run (below): never shown in tables",
        "axes": "each axis's name and its cells' ids, in column order",
        "families": "each family and its one-line description",
        "cells": "every cell of the run, as built (below)",
        "cases": "every case of the run (below)",
        "results": "every check of every case in every cell (below), one a line",
    },
    "cells[]": {
        "id": "the cell's id: `onnx1.18.0-ort1.24.4` (`py3.12-` first on a Python axis)",
        "onnx": "the onnx release pinned",
        "onnxruntime": "the onnxruntime release pinned",
        "state": "`ready`, `install-error`, `import-error` or `no-wheel` (see Outcomes)",
        "packages": "the installed versions of onnx, onnxruntime, numpy, protobuf and every "
        "extra axis's package",
        "python": "the cell's Python version",
        "platform": "the cell's platform string",
        "detail": "why a cell is not ready: the installer's or Python's own message",
        "requirements": "the requirements the cell was built from",
        "limits": "the newest IR version and default-domain opset its onnxruntime loads",
        "installed": "every distribution installed and its version (cells that run your "
        "project; a repro's requirements)",
    },
    "cases[]": {
        "id": "the case id, `family.variant`",
        "family": "its family",
        "description": "one line: what the case is",
        "sha256": "the hash of its content (model bytes, arrays, expectations)",
        "checks": "`[check, package]` pairs: each check it gets and the package it exercises",
        "known": "its known failures: package, versions, checks, outcomes, reason, link, "
        "and what each looks like: phase, raises, match",
        "tags": "free-form labels",
    },
    "results[]": {
        "cell": "the cell's id",
        "case": "the case's id",
        "check": "the check's id",
        "outcome": "`pass`, `fail`, `error`, `crash`, `timeout`, `skip`, `xfail`, `xpass` "
        "or `flaky`",
        "phase": "where a fail or an error happened: `load`, `check`, `infer`, `session@level`, "
        "`run@level`, ...",
        "detail": "the message: what differs, the exception, why it was skipped",
        "seconds": "the worker's time on it in this cell",
        "known": "the link of the known failure that made it `xfail` or `xpass`",
        "traceback": "the worker's traceback (with `--tracebacks`)",
        "origin": '`""`: computed in this cell; another cell\'s id: shared from it (same '
        "versions of what the check depends on); `cache`: an earlier run's",
        "log": "a command's whole output, relative to the report directory (commands only)",
        "failing": "a test command's failing tests as its runner named them (pytest node "
        "ids, unittest names); a baseline compares a suite failing on both sides by them "
        "(commands only, when any)",
    },
    "run": {
        "started": "when the run started (ISO 8601)",
        "host": "the machine's name",
        "host_python": "the host's Python version",
        "generator_onnx": "the host's onnx, which wrote every model",
        "jobs": "cells run at once",
        "timeout": "the seconds a check might run",
        "phases": "seconds per phase: `cases`, `environments`, `checks`",
        "seconds": "the run's wall time",
        "executed": "checks computed in a cell this run",
        "reran": "unexpected results run again",
        "digest": "the hash of every input of the run: a run with the same one is remembered",
        "remembered": "true when nothing changed and the run was answered from memory",
        "interrupted": "`{signal, cells_done}` when Ctrl-C or a CI cancel stopped the run",
        "plan_cells": "the ids of every cell of the whole plan (of every shard)",
        "plan_axes": "the whole plan's axes: name -> cell ids",
        "options": "the options the cases were loaded with, when not the defaults (the "
        "repro commands carry them)",
        "junit_scope": "`all` or `unexpected`",
        "axes_followed": "the releases each range axis resolved to on the package index",
        "shard": "`K/N`, for a shard's report",
        "merged_from": "the shard directories a merged report comes from",
        "pythons": "on a Python axis: each Python's onnx and onnxruntime pairs",
        "baseline": "with `--baseline`: `{given, label, identity, started, commit}`, the value "
        "given, the name of 'since …', what it resolved to (a commit, a file and its sha256), "
        "when its run started and the project's commit it was made of",
        "commit": "the project's git commit the run was made of (`with changes` when tracked "
        "files differed from it); absent outside a checkout",
        "changes": "with `--baseline`: `{changes, new_releases, gone_releases, new_results, "
        "gone_results}`, each change `{kind, case, check, cells, versions, before, after, "
        "release}` (compat/core/changes.py)",
    },
}

#: The case spec, the JSON document a cell's worker reads for each case
#: (compat/cell/protocol.py `CaseSpec`), and the documents inside it.
CASE_SPEC: dict[str, dict[str, str]] = {
    "CaseSpec": {
        "id": "the case id",
        "output_shapes": "value -> the dims strict shape inference must infer (ints, names, "
        "null for unknown)",
        "optimized": "the graph onnxruntime must execute (`OptimizedSpec`), or null",
        "custom_checks": "check name -> the case's own check (`CustomCheckSpec`)",
        "violations": "the annotation violations the case must produce: `value:axis`, "
        "`value:rank`, `value:dtype`",
        "oracle": "who computed the expected outputs: `numpy` (a corpus case) or "
        "`onnxruntime` (a drop-in model)",
        "convert_to": "the opset the version converter converts to, or null",
        "encoding": "how the arrays are stored beside it: `npz` or `pb`",
        "ort_levels": "the onnxruntime optimization levels `ort_run` compares",
        "rtol": "relative tolerance of every comparison",
        "atol": "absolute tolerance of every comparison",
        "command": "a command case's command (`CommandSpec`); absent otherwise",
        "tolerances": "output name -> `[rtol, atol]` for the outputs with a tolerance of "
        "their own; absent when none has",
    },
    "OptimizedSpec": {
        "op_counts": "op type -> how many the optimized graph has",
        "meaning": "what a mismatch means, in words",
        "level": "the optimization level: `basic`, `extended` or `all`",
    },
    "CustomCheckSpec": {
        "file": "the Python file of the case's own check",
        "function": "the function in it, called with the case",
    },
    "CommandSpec": {
        "command": "the shell command",
        "cwd": "the project's folder: each cell runs the command in its own copy of its "
        "tree (absent: where the worker runs)",
        "timeout": "its seconds, when the task gives none",
        "cache": '`"no"`: its results are never cached (`no-cache`); absent otherwise',
    },
}

#: Every exit code, and when a command returns it.
EXIT_CODES: dict[int, str] = {
    0: "every outcome is expected (`matrix`, `merge`, `repro`); the report or the tables "
    "are written (`triage`, `scoreboard`, `bisect`, `report`); the docs are in sync "
    "(`report --check`); every annotation holds (`annotations`)",
    1: "an unexpected outcome: a `fail`, `error`, `crash`, `timeout` or `flaky` outside a "
    "known bug, an `xpass`, a cell that cannot install or import; drifted docs "
    "(`report --check`); a violated annotation (`annotations`)",
    2: "bad usage: an unknown option, a nonsense value, a malformed `[tool.compat]`, a "
    "missing model or inputs that do not fit it; one line names the value and the fix",
    130: "stopped by Ctrl-C (SIGINT): the cells done are written, a rerun computes the rest",
    143: "stopped by SIGTERM (a CI cancel): as for Ctrl-C",
}

#: The configuration page's example: a project's `[tool.compat]`, every common key
#: (tests/test_docs_site.py loads it).
CONFIG_EXAMPLE = """\
[tool.compat]
run = ["tests=pytest -q tests"]          # your commands; --run replaces, --run +CMD adds
requires = ["pytest", "hypothesis>=6"]   # test dependencies: ranges resolved per cell
groups = ["test"]                        # PEP 735 [dependency-groups] of the project
corpus = "none"                          # built-in cases beside yours: "seed" or "all"
cases-dirs = ["models"]                  # every models/*.onnx is a case
timeout = 60                             # seconds one check of a model may run
command-timeout = 900                    # seconds one of your commands may run

[tool.compat.onnx]
versions = ">=1.14"      # every minor release since 1.14, its newest patch, at each run
pair = "1.24.4"          # the onnxruntime release every onnx cell runs with

[tool.compat.onnxruntime]
versions = ["1.17.3", "1.20.1", "1.24.4"]
pair = "1.23.2"          # the onnx release every onnxruntime cell runs with

[tool.compat.python]
versions = ["3.10", "3.12"]

[[tool.compat.constraints]]
package = "onnxruntime"
versions = "<1.18.1"
requires = ["numpy<2"]
reason = "onnxruntime wheels before 1.18.1 were built against numpy 1.x"

[[tool.compat.known]]
cases = "models.vad"
package = "onnxruntime"
versions = "<1.20"
checks = ["ort_run"]
phase = "run"                            # what it looks like: where it fails,
match = "Resize node"                    # and a regular expression its message holds
reason = "what fails and why, in one line"
link = "https://github.com/microsoft/onnxruntime/issues/NNNN"
"""
