"""compat/cell/outputs.py: the one-line detail of a user's command, read from what it printed.

The marked tests run real pytest and unittest on throwaway projects (all at once, so the
module stays fast) and check the summary a user would read; the unmarked ones pin edge
cases on literal snippets copied from real runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat.cell.outputs import SUMMARY_LIMIT, TAIL_LIMIT, failing_ids, summarize

SAMPLE = {
    "tests/test_a.py": """
import warnings
import pytest

def test_ok():
    assert 1

def test_fail():
    assert 1 == 2, "one is not two"

@pytest.mark.parametrize("x", ["a b", "c[d]", 3])
def test_param(x):
    assert x == 3

@pytest.fixture
def broken():
    raise RuntimeError("fixture boom")

def test_err(broken):
    pass

@pytest.mark.skip(reason="nope")
def test_skip():
    pass

@pytest.mark.xfail
def test_xf():
    assert 0

def test_warn():
    warnings.warn("careful", DeprecationWarning)

class TestK:
    def test_m(self):
        raise ValueError("bad")
""",
    "tests/test_b.py": """
def test_b1():
    pass

def test_b2():
    assert [1, 2] == [1, 3]
""",
}
SAMPLE_COUNTS = "5 failed, 4 passed, 1 skipped, 1 xfailed, 1 warning, 1 error"
SAMPLE_IDS = {
    "tests/test_a.py::test_fail",
    "tests/test_a.py::test_param[a b]",
    "tests/test_a.py::test_param[c[d]]",
    "tests/test_a.py::TestK::test_m",
    "tests/test_a.py::test_err",
    "tests/test_b.py::test_b2",
}
COLLECT_ERROR = {
    "tests/test_c.py": "import nosuchmod\n\ndef test_x():\n    pass\n",
    "tests/test_ok.py": "def test_ok():\n    pass\n",
}
MANY = {
    "tests/test_many.py": """
import pytest

@pytest.mark.parametrize("n", range(52))
def test_n(n):
    assert n >= 50
""",
}
KILLED = {
    "tests/test_k.py": """
import os, signal

def test_a():
    assert 0

def test_b():
    os.kill(os.getpid(), signal.SIGKILL)
""",
}
UNITTEST = {
    "test_u.py": """
import unittest, warnings

class Case(unittest.TestCase):
    def test_ok(self):
        pass
    def test_fail(self):
        self.assertEqual(1, 2)
    def test_err(self):
        raise ValueError("boom")
    @unittest.skip("no")
    def test_skip(self):
        pass
    @unittest.expectedFailure
    def test_xf(self):
        self.fail()
    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i, name="a b"):
                self.assertLess(i, 1)
    def test_warn(self):
        warnings.warn("old", DeprecationWarning)

class Other(unittest.TestCase):
    def test_doc(self):
        \"\"\"A docstring line.\"\"\"
        self.assertTrue(False)
""",
    "test_bad.py": "import nosuch\n",
    "script.py": """
import warnings
def parse(text):
    raise ValueError("x is not a number: %r" % text)
print("loading")
parse("x")
""",
    "late_warning.py": """
import warnings
print("result: 3")
warnings.warn("this API is old", UserWarning)
""",
}
UNITTEST_IDS = [
    "test_u.Case.test_err",
    "test_u.Case.test_fail",
    "test_u.Case.test_sub (i=1, name='a b')",
    "test_u.Case.test_sub (i=2, name='a b')",
    "test_u.Other.test_doc",
]

#: name: (project, command after `python`)
RUNS: dict[str, tuple[dict[str, str], list[str]]] = {
    "q": (SAMPLE, ["-m", "pytest", "-q", "tests"]),
    "default": (SAMPLE, ["-m", "pytest", "tests"]),
    "v": (SAMPLE, ["-m", "pytest", "-v", "tests"]),
    "rA": (SAMPLE, ["-m", "pytest", "-rA", "tests"]),
    "tb_line": (SAMPLE, ["-m", "pytest", "--tb=line", "tests"]),
    "colour": (SAMPLE, ["-m", "pytest", "-q", "--color=yes", "tests"]),
    "no_warnings": (SAMPLE, ["-m", "pytest", "-p", "no:warnings", "tests"]),
    "v_rN": (SAMPLE, ["-m", "pytest", "-v", "-rN", "tests"]),
    "rN": (SAMPLE, ["-m", "pytest", "-rN", "tests"]),
    "x": (SAMPLE, ["-m", "pytest", "-x", "tests"]),
    "collect": (COLLECT_ERROR, ["-m", "pytest", "-q", "tests"]),
    "collect_rN": (COLLECT_ERROR, ["-m", "pytest", "-q", "-rN", "tests"]),
    "collect_continue": (
        COLLECT_ERROR,
        ["-m", "pytest", "-q", "--continue-on-collection-errors", "tests"],
    ),
    "none": ({}, ["-m", "pytest", "-q"]),
    "missing": ({}, ["-m", "pytest", "-q", "nosuchdir"]),
    "many": (MANY, ["-m", "pytest", "-q", "tests"]),
    "killed": (KILLED, ["-m", "pytest", "-v", "tests"]),
    "unittest": (UNITTEST, ["-m", "unittest", "test_u"]),
    "unittest_v": (UNITTEST, ["-m", "unittest", "-v", "test_u"]),
    "unittest_ok": (UNITTEST, ["-m", "unittest", "test_u.Case.test_ok"]),
    "unittest_import": (UNITTEST, ["-m", "unittest", "test_bad"]),
    "script": (UNITTEST, ["script.py"]),
    "late_warning": (UNITTEST, ["late_warning.py"]),
}
XDIST_RUNS = {
    "n2": (SAMPLE, ["-m", "pytest", "-p", "xdist.plugin", "-n", "2", "tests"]),
    "n2_v_rN": (SAMPLE, ["-m", "pytest", "-p", "xdist.plugin", "-n", "2", "-v", "-rN", "tests"]),
}


def _run_all(runs: dict[str, tuple[dict[str, str], list[str]]], base: Path) -> dict[str, str]:
    """Each command's combined output, the commands running side by side, each in a
    fresh project folder (a pytest.ini of its own, so nothing above it applies)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PY_COLORS"))}
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # installed plugins cost each run a second
    started = {}
    for name, (project, args) in runs.items():
        folder = base / name
        for rel, text in {"pytest.ini": "[pytest]\n", **project}.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
        if args[:2] == ["-m", "pytest"]:  # no cache: the runs share nothing
            args = ["-m", "pytest", "-p", "no:cacheprovider", *args[2:]]
        started[name] = subprocess.Popen(
            [sys.executable, *args],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    return {
        # generous: two pytest runs at once with -n 2 on a loaded 2-core machine
        name: proc.communicate(timeout=300)[0].decode("utf-8", "replace")
        for name, proc in started.items()
    }


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _run_all(RUNS, tmp_path_factory.mktemp("outputs"))


# real pytest


@pytest.mark.subprocess
@pytest.mark.parametrize("run", ["q", "default", "v", "rA", "tb_line", "colour", "v_rN"])
def test_a_pytest_run_is_its_counts_and_the_full_ids_of_what_failed(
    out: dict[str, str], run: str
) -> None:
    detail = summarize(out[run])
    assert detail.startswith(SAMPLE_COUNTS + ": "), detail
    assert set(failing_ids(out[run])) == SAMPLE_IDS
    assert all(nodeid in detail for nodeid in SAMPLE_IDS), detail
    assert " in 0." not in detail and "\x1b" not in detail  # no timing, no colour


@pytest.mark.subprocess
def test_a_pytest_run_without_its_warnings_plugin_counts_no_warning(out: dict[str, str]) -> None:
    detail = summarize(out["no_warnings"])
    assert detail.startswith("5 failed, 4 passed, 1 skipped, 1 xfailed, 1 error: "), detail
    assert set(failing_ids(out["no_warnings"])) == SAMPLE_IDS


@pytest.mark.subprocess
def test_without_a_short_summary_the_failure_headers_name_the_tests(out: dict[str, str]) -> None:
    assert failing_ids(out["rN"]) == [
        "test_err",
        "test_fail",
        "test_param[a b]",
        "test_param[c[d]]",
        "TestK.test_m",
        "test_b2",
    ]
    assert summarize(out["rN"]).startswith(SAMPLE_COUNTS + ": test_err, test_fail")


@pytest.mark.subprocess
def test_a_lone_failure_says_why_and_a_stop_says_so(out: dict[str, str]) -> None:
    assert summarize(out["x"]) == (
        "1 failed, 1 passed (stopping after 1 failures): "
        "tests/test_a.py::test_fail (AssertionError: one is not two)"
    )


@pytest.mark.subprocess
@pytest.mark.parametrize("run", ["collect", "collect_rN"])
def test_a_collection_error_names_the_module_and_its_import_error(
    out: dict[str, str], run: str
) -> None:
    assert summarize(out[run]) == (
        "1 error (Interrupted: 1 error during collection): "
        "tests/test_c.py (ModuleNotFoundError: No module named 'nosuchmod')"
    )


@pytest.mark.subprocess
def test_a_collection_error_beside_passing_tests(out: dict[str, str]) -> None:
    assert summarize(out["collect_continue"]) == (
        "1 passed, 1 error: tests/test_c.py (ModuleNotFoundError: No module named 'nosuchmod')"
    )


@pytest.mark.subprocess
def test_no_tests_ran_says_why_when_pytest_says(out: dict[str, str]) -> None:
    assert summarize(out["none"]) == "no tests ran"
    assert summarize(out["missing"]) == (
        "no tests ran (ERROR: file or directory not found: nosuchdir)"
    )


@pytest.mark.subprocess
def test_many_failures_are_cut_to_the_limit_keeping_the_counts_and_the_number_cut(
    out: dict[str, str],
) -> None:
    ids = failing_ids(out["many"])
    assert ids == [f"tests/test_many.py::test_n[{n}]" for n in range(50)]
    detail = summarize(out["many"])
    assert len(detail) <= SUMMARY_LIMIT
    head, _, listed = detail.partition(": ")
    assert head == "50 failed, 2 passed"
    shown, _, more = listed.partition(" … (+")
    assert len(shown.split(", ")) + int(more.removesuffix(" more)")) == 50


@pytest.mark.subprocess
def test_a_killed_pytest_run_names_what_failed_so_far_and_where_it_stopped(
    out: dict[str, str],
) -> None:
    assert summarize(out["killed"]) == (
        "pytest stopped before its summary; failed so far: tests/test_k.py::test_a"
        " | last: tests/test_k.py::test_b"
    )


@pytest.mark.subprocess
def test_xdist_runs_read_like_any_other(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    out = _run_all(XDIST_RUNS, tmp_path)
    for run in XDIST_RUNS:
        detail = summarize(out[run])
        assert detail.startswith(SAMPLE_COUNTS + ": "), detail
        assert set(failing_ids(out[run])) == SAMPLE_IDS


# real unittest and plain scripts


@pytest.mark.subprocess
@pytest.mark.parametrize("run", ["unittest", "unittest_v"])
def test_a_unittest_run_is_its_status_and_the_dotted_ids_of_what_failed(
    out: dict[str, str], run: str
) -> None:
    assert failing_ids(out[run]) == UNITTEST_IDS
    detail = summarize(out[run])
    # Python 3.12.0-3.12.x leaves skipped tests out of "Ran N tests"
    assert detail.startswith("FAILED (failures=4, errors=1, skipped=1, expected failures=1) of ")
    assert detail.endswith(" tests: " + ", ".join(UNITTEST_IDS))


@pytest.mark.subprocess
def test_a_unittest_module_that_fails_to_import_is_named_with_its_error(
    out: dict[str, str],
) -> None:
    assert summarize(out["unittest_import"]) == (
        "FAILED (errors=1) of 1 test: test_bad (ModuleNotFoundError: No module named 'nosuch')"
    )
    assert summarize(out["unittest_ok"]) == "ran 1 test: OK"


@pytest.mark.subprocess
def test_a_script_s_traceback_ends_with_its_exception(out: dict[str, str]) -> None:
    detail = summarize(out["script"])
    assert detail.endswith("ValueError: x is not a number: 'x'"), detail
    assert failing_ids(out["script"]) == []


@pytest.mark.subprocess
def test_a_warning_printed_last_is_not_the_detail(out: dict[str, str]) -> None:
    assert "UserWarning" in out["late_warning"]
    assert summarize(out["late_warning"]) == "result: 3"


# literal snippets from real runs


COLOURED = (
    "\x1b[36m\x1b[1m=========================== short test summary info"
    " ============================\x1b[0m\n"
    "\x1b[31mFAILED\x1b[0m tests/test_a.py::\x1b[1mtest_param[c[d]]\x1b[0m"
    " - AssertionError: assert 'c[d]' == 3\n"
    "\x1b[31mERROR\x1b[0m tests/test_a.py::\x1b[1mtest_err\x1b[0m - RuntimeError: fixture boom\n"
    "\x1b[31m\x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m4 passed\x1b[0m, \x1b[33m1 warning\x1b[0m,"
    " \x1b[31m\x1b[1m1 error\x1b[0m\x1b[31m in 1.12s\x1b[0m\x1b[0m\n"
)


def test_colour_codes_are_read_through() -> None:
    assert summarize(COLOURED) == (
        "1 failed, 4 passed, 1 warning, 1 error: "
        "tests/test_a.py::test_param[c[d]], tests/test_a.py::test_err"
    )


def test_a_collection_error_without_a_short_summary_reads_its_header() -> None:
    output = """\
_______________________ ERROR collecting tests/test_c.py _______________________
ImportError while importing test module '/tmp/p/tests/test_c.py'.
tests/test_c.py:1: in <module>
    import nosuchmod
E   ModuleNotFoundError: No module named 'nosuchmod'
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.74s
"""
    assert summarize(output) == (
        "1 error (Interrupted: 1 error during collection): "
        "tests/test_c.py (ModuleNotFoundError: No module named 'nosuchmod')"
    )


def test_a_warning_after_pytest_s_counts_is_skipped() -> None:
    output = """\
=========================== short test summary info ============================
FAILED tests/test_x.py::test_a - assert 0
==================== 1 failed, 606 passed, 3 skipped in 12.31s (0:00:12) ====================
/venv/lib/python3.9/site-packages/coverage/control.py:888: CoverageWarning: No data was collected.
  self._warn("No data was collected.", slug="no-data-collected")
"""
    assert (
        summarize(output) == "1 failed, 606 passed, 3 skipped: tests/test_x.py::test_a (assert 0)"
    )


def test_a_plain_tail_skips_warnings_and_progress() -> None:
    output = (
        "step 1\nstep 2\ndone: 3 models\n"
        "downloading  40%|####      | 4/10\rdownloading 100%|##########| 10/10\n"
        "/x/y.py:3: DeprecationWarning: old API\n  warnings.warn('old API')\n"
        "UserWarning: be careful\n\n"
    )
    assert summarize(output) == "step 1 | step 2 | done: 3 models"


def test_a_long_plain_tail_keeps_its_end() -> None:
    output = "Traceback (most recent call last):\n" + "x" * 500 + "\nValueError: bad\n"
    detail = summarize(output)
    assert len(detail) <= TAIL_LIMIT and detail.endswith("ValueError: bad")


def test_output_of_nothing_but_progress_still_says_where_it_stopped() -> None:
    assert summarize("..F.s") == "..F.s"
    assert summarize("") == ""


def test_more_than_forty_failures_keep_the_counts_and_say_how_many_are_cut() -> None:
    ids = [f"tests/test_model.py::test_export[opset{n}-dynamic shape]" for n in range(46)]
    output = "".join(
        [
            "=========================== short test summary info ============================\n",
            *(f"FAILED {nodeid} - AssertionError: mismatch\n" for nodeid in ids),
            "=========== 46 failed, 606 passed, 3 skipped, 2 warnings in 33.01s ===========\n",
        ]
    )
    assert failing_ids(output) == ids
    detail = summarize(output)
    assert len(detail) <= SUMMARY_LIMIT
    assert detail.startswith("46 failed, 606 passed, 3 skipped, 2 warnings: " + ids[0] + ", ")
    shown = detail.split(": ", 1)[1].split(" … ")[0].split(", ")
    assert shown == ids[: len(shown)]
    assert detail.endswith(f" … (+{46 - len(shown)} more)")


def test_parametrized_ids_keep_their_spaces_brackets_and_dashes() -> None:
    output = """\
=========================== short test summary info ============================
FAILED tests/t.py::test_p[a - b] - AssertionError: x
FAILED tests/t.py::test_p[[1, 2]-x y] - ValueError: y - z
FAILED tests/t.py::test_q
ERROR tests/t.py::TestC::test_r[unbalanced [ - id] - RuntimeError
======================== 3 failed, 1 error in 0.10s ========================
"""
    assert failing_ids(output) == [
        "tests/t.py::test_p[a - b]",
        "tests/t.py::test_p[[1, 2]-x y]",
        "tests/t.py::test_q",
        "tests/t.py::TestC::test_r[unbalanced [ - id]",
    ]


def test_xdist_verbose_status_lines_name_the_tests() -> None:
    output = """\
============================= test session starts ==============================
2 workers [4 items]
tests/test_a.py::test_param[a b]
tests/test_a.py::test_ok
[gw0] [ 25%] PASSED tests/test_a.py::test_ok
[gw1] [ 50%] FAILED tests/test_a.py::test_param[a b]
[gw1] [ 75%] ERROR tests/test_a.py::test_err
[gw0] [100%] FAILED tests/test_a.py::TestK::test_m
=================================== FAILURES ===================================
_______________________________ test_param[a b] ________________________________
[gw1] linux -- Python 3.11.7 /tmp/h3/bin/python
tests/test_a.py:12: AssertionError
================== 2 failed, 1 passed, 1 error in 2.30s ==================
"""
    assert failing_ids(output) == [
        "tests/test_a.py::test_param[a b]",
        "tests/test_a.py::test_err",
        "tests/test_a.py::TestK::test_m",
    ]


def test_python_3_9_unittest_names_the_class_once() -> None:
    output = """\
======================================================================
ERROR: test_err (test_u.Case)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/u/test_u.py", line 9, in test_err
    raise ValueError("boom")
ValueError: boom

======================================================================
FAIL: test_sub (test_u.Case) (i=1, name='a b')
----------------------------------------------------------------------
AssertionError: 1 not less than 1

----------------------------------------------------------------------
Ran 8 tests in 0.001s

FAILED (failures=1, errors=1)
"""
    assert summarize(output) == (
        "FAILED (failures=1, errors=1) of 8 tests: "
        "test_u.Case.test_err, test_u.Case.test_sub (i=1, name='a b')"
    )


def test_the_runner_whose_summary_comes_last_is_the_one_read() -> None:
    pytest_then_unittest = "1 passed in 0.01s\n" + "Ran 3 tests in 0.002s\n\nOK\n"
    assert summarize(pytest_then_unittest) == "ran 3 tests: OK"
    unittest_then_pytest = "Ran 3 tests in 0.002s\n\nOK\n" + "===== 2 passed in 0.01s =====\n"
    assert summarize(unittest_then_pytest) == "2 passed"
