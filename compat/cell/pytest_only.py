"""A pytest plugin for a failing suite's rerun: only the tests the first attempt reported
failing run, every other one is deselected (as `--deselect` would).

compat/cell/command.py copies this file into the command's own temp folder under the
name `onnx_compat_only_failing`, puts that folder on PYTHONPATH and names the plugin in
PYTEST_ADDOPTS, so every pytest the command starts loads it, whatever its arguments;
the ids are in the file ONNX_COMPAT_ONLY names, one a line. An id names a test
(`tests/test_x.py::test_a[p]`), or a file or class whose collection failed
(`tests/test_x.py`): everything under it runs. Each id that selected a test is written
to the file ONNX_COMPAT_CHOSEN names, so the host can tell a test that passed alone
from one this run never reached. A pytest run of the command that holds none of them
(`pytest src` in `pytest src && pytest tests`, when only tests failed) ends with exit 0,
not 5 ("no tests ran"), so the command goes on to the run that does.

A file that holds none of them is not even collected (a test module that imports torch
costs seconds to import); folders, `__init__.py` and `conftest.py` always are, so a
package and its fixtures load as in the whole run.
"""

import os
from importlib.metadata import version

_NOTHING_CHOSEN = "_onnx_compat_nothing_chosen"
_ALWAYS = ("__init__.py", "conftest.py")
_read: "dict[str, set[str]]" = {}  # the ids and their files, read once


def _wanted():
    """The ids to run, read once per process."""
    if "ids" not in _read:
        with open(os.environ["ONNX_COMPAT_ONLY"], encoding="utf-8") as f:
            _read["ids"] = {line.rstrip("\n") for line in f if line.strip()}
        _read["files"] = {nodeid.split("::", 1)[0] for nodeid in _read["ids"]}
    return _read["ids"]


def chosen_by(nodeid, wanted):
    """The id of `wanted` that `nodeid` is or is under, else None."""
    parts = nodeid.split("::")
    for i in range(len(parts), 0, -1):
        prefix = "::".join(parts[:i])
        if prefix in wanted:
            return prefix
    return None


def _ignored(path, config):
    """True for a file under the rootdir that holds no wanted test; None (no opinion: the
    other plugins and pytest decide) for anything else."""
    if os.path.basename(path) in _ALWAYS or os.path.isdir(path):
        return None
    root = str(getattr(config, "rootpath", None) or config.rootdir)
    relative = os.path.relpath(path, root).replace(os.sep, "/")
    _wanted()
    files = _read["files"]
    if relative.startswith("../") or relative in files:
        return None
    if any(relative.startswith(f + "/") for f in files):  # under a folder an id names
        return None
    return True


if int(version("pytest").split(".")[0]) >= 7:

    def pytest_ignore_collect(collection_path, config):
        return _ignored(str(collection_path), config)

else:  # pytest < 7 names the argument `path` (a py.path.local)

    def pytest_ignore_collect(path, config):
        return _ignored(str(path), config)


def pytest_collection_modifyitems(session, config, items):
    wanted = _wanted()
    by = [chosen_by(item.nodeid, wanted) for item in items]
    kept = [item for item, want in zip(items, by) if want is not None]
    dropped = [item for item, want in zip(items, by) if want is None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    setattr(config, _NOTHING_CHOSEN, not kept)
    found = sorted({want for want in by if want is not None})
    if found:  # appended: xdist's workers and a second pytest of the command add theirs
        with open(os.environ["ONNX_COMPAT_CHOSEN"], "a", encoding="utf-8") as f:
            f.write("".join(nodeid + "\n" for nodeid in found))


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 5 and getattr(session.config, _NOTHING_CHOSEN, False):
        session.exitstatus = 0
