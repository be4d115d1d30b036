"""Report files get the mode `open` would give them: 0666 less the user's umask (0644
under umask 022), so a docs server's other users can read them; a private umask keeps
them private. Real processes, each with its own umask, writing the stored run's reports."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

WRITE = """
import os, sys
from pathlib import Path
from compat.core.report import read_json
from compat.render.outputs import write_reports
for path in write_reports(read_json(Path(sys.argv[1])), Path(sys.argv[2])):
    print(path)
"""


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)], ids=["022", "077", "002"]
)
def test_reports_are_written_with_the_users_umask(tmp_path: Path, umask: int, mode: int) -> None:
    out = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-c", WRITE, str(ROOT / "docs" / "matrix.json.gz"), str(out)],
        cwd=ROOT,
        preexec_fn=lambda: os.umask(umask),
        capture_output=True,
        text=True,
        check=True,
    )
    written = [Path(line) for line in done.stdout.splitlines()]
    assert len(written) > 5, done.stdout
    modes = {p.relative_to(out).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in written}
    assert set(modes.values()) == {mode}, {k: oct(v) for k, v in modes.items()}
    stamp = out / ".compat-rendered"
    assert stat.S_IMODE(stamp.stat().st_mode) == mode
