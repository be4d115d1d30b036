"""Test with different environment setups."""

import nox

nox.options.error_on_missing_interpreters = False

COMMON_TEST_DEPENDENCIES = ("hypothesis", "parameterized", "pytest")


@nox.session(tags=["build"])
def build(session: nox.Session) -> None:
    """Build the wheel."""
    session.install("build")
    session.run("python", "-m", "build")


@nox.session(tags=["test"])
def test(session: nox.Session) -> None:
    """Run the doctests and the unit tests beside the code, then the tests folder."""
    session.install(*COMMON_TEST_DEPENDENCIES)
    session.install(".")
    session.run("pytest", "src", "--doctest-modules", *session.posargs)
    session.run("pytest", "tests", *session.posargs)
