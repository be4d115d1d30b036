"""Tiny models and case directories shared by the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import helper

from compat.core.case import Case, CustomCheck, Optimized
from compat.corpus.discover import write_case
from compat.corpus.make import const, model, tensor

#: the corpus's known failures that no model's own checks can show, so that no detector
#: predicts them (link -> why): a drop-in's shape_inference expects no shape, and a dim
#: left unknown fails nothing else (slanet_en passes it on onnx 1.16.2)
UNSEEN_BY_MODELS = {
    "https://github.com/onnx/onnx/pull/5963": "a constant OneHot depth's dim left unknown",
}

HOSTILE = str(Path(__file__).with_name("data") / "hostile_checks.py")


def add_one_model(x_dims: list[int] | None = None, one_dims: tuple[int, ...] = (1,)) -> object:
    """y = Identity(x) + 1: small enough to reason about, with an Identity to optimize away."""
    nodes = [
        helper.make_node("Identity", ["x"], ["x_copy"]),
        helper.make_node("Add", ["x_copy", "one"], ["y"]),
    ]
    return model(
        nodes,
        [tensor("x", np.float32, x_dims or [2])],
        [tensor("y", np.float32, [None])],
        [const("one", np.ones(one_dims, dtype=np.float32))],
    )


def add_one_case(**changes: object) -> Case:
    x = np.array([1.0, 2.0], dtype=np.float32)
    fields: dict[str, object] = {
        "id": "tiny.add_one",
        "description": "y = x + 1",
        "model": add_one_model(),
        "inputs": {"x": x},
        "expected": {"y": x + 1},
        "output_shapes": {"y": [2]},
        "optimized": Optimized(op_counts={"Identity": 0}, meaning="Identity kept"),
    }
    fields.update(changes)
    return Case(**fields)  # type: ignore[arg-type]


def hostile_case(*functions: str) -> Case:
    """A case whose custom checks misbehave on purpose (see data/hostile_checks.py)."""
    return add_one_case(
        id="tiny.hostile",
        custom_checks=tuple(CustomCheck(f, HOSTILE, f) for f in functions),
        builtin_checks=(),
    )


def case_dir(case: Case, root: Path) -> str:
    return str(write_case(case, root).directory)


CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def start_chromium(*flags: str, logs: bool = False) -> Any:
    """Debian's headless Chromium through Selenium, never a downloaded browser; skips the
    test when it is not installed (fails instead under COMPAT_REQUIRE_BROWSER, as in CI)."""
    import os

    import pytest

    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        if os.environ.get("COMPAT_REQUIRE_BROWSER"):
            pytest.fail(
                f"{CHROMIUM} or {CHROMEDRIVER} missing: apt-get install chromium chromium-driver"
            )
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium fetch a browser
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        *flags,
    ):
        options.add_argument(flag)
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def buried(
    core: list[Any],
    inputs: dict[str, np.ndarray],
    joined: str,
    unrelated: int = 30,
    opset: int = 17,
    seed: int = 0,
    exposed: dict[str, list[int]] | None = None,
) -> tuple[Any, dict[str, np.ndarray]]:
    """A model that buries `core` (nodes reading `inputs`, producing `joined`) among
    `unrelated` ordinary nodes: a chain of Relu/Add/Mul/Sigmoid/Transpose pairs on x
    [2, 3], with ReduceSum(joined) added into its middle, so the construct is neither
    first nor last; `exposed` values (name: shape) are graph outputs too (a wrong shape
    of an empty tensor shows only there). Returns (model, feeds)."""
    from compat.corpus.make import randn

    kinds = ("Relu", "Add", "Mul", "Sigmoid", "Transpose")
    chain: list[Any] = []
    value = "x"
    for i in range(unrelated):
        kind = kinds[i % len(kinds)]
        out = f"h{i}"
        if kind in ("Add", "Mul"):
            chain.append(helper.make_node(kind, [value, "w"], [out]))
        elif kind == "Transpose":  # twice: back to [2, 3]
            chain.append(helper.make_node(kind, [value], [out], perm=[1, 0]))
            out_back = f"h{i}t"
            chain.append(helper.make_node(kind, [out], [out_back], perm=[1, 0]))
            out = out_back
        else:
            chain.append(helper.make_node(kind, [value], [out]))
        value = out
        if i == unrelated // 2:  # the construct joins here
            chain.append(helper.make_node("ReduceSum", [joined], ["joined_sum"], keepdims=0))
            chain.append(helper.make_node("Add", [value, "joined_sum"], ["joined_in"]))
            value = "joined_in"
    chain.append(helper.make_node("Identity", [value], ["y"]))
    middle = len(chain) // 3
    nodes = chain[:middle] + list(core) + chain[middle:]
    feeds = {"x": randn(seed, 2, 3), **inputs}
    built = model(
        nodes,
        [tensor(name, feeds[name].dtype.type, list(feeds[name].shape)) for name in feeds],
        [tensor("y", np.float32, [2, 3])]
        + [tensor(name, np.float32, shape) for name, shape in (exposed or {}).items()],
        [const("w", np.full((2, 3), 0.5, dtype=np.float32))],
        opset=opset,
    )
    return built, feeds


def family_matrix(
    out: Path,
    state: Path,
    families: tuple[str, ...],
    axes: tuple[tuple[str, ...], tuple[str, ...]],
    pairs: list[tuple[str, str]],
) -> dict[str, Any]:
    """The families' matrix on these onnx and onnxruntime releases (`axes`), as the
    plain-venv truth tests compare it: it must exit 0, on exactly the cells of `pairs`."""
    import json

    from compat.cli.main import main
    from tests.conftest import ROOT

    onnx, ort = axes
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(state),
            "--out",
            str(out),
            "--onnx",
            ",".join(onnx),
            "--ort",
            ",".join(ort),
            "--cases",
            ",".join(f"{family}.*" for family in families),
            "--jobs",
            "1",
        ]
    )
    report: dict[str, Any] = json.loads((out / "matrix.json").read_text())
    unexpected = [r for r in report["results"] if r["outcome"] in ("fail", "error", "xpass")]
    assert code == 0, unexpected[:5]
    assert sorted(c["id"] for c in report["cells"]) == sorted(f"onnx{o}-ort{r}" for o, r in pairs)
    return report


#: The renderers' fixture matrix: the default matrix's releases when their golden files
#: were made (fixed here, so a new release in pyproject.toml changes no snapshot).
ONNX = (
    "1.14.1",
    "1.15.0",
    "1.16.2",
    "1.17.0",
    "1.18.0",
    "1.19.1",
    "1.20.1",
    "1.21.0",
    "1.22.0",
    "1.23.2",
)
ORT = (
    "1.15.1",
    "1.16.3",
    "1.17.3",
    "1.18.1",
    "1.19.2",
    "1.20.1",
    "1.21.1",
    "1.22.1",
    "1.23.2",
    "1.24.4",
    "1.25.1",
    "1.26.0",
    "1.27.0",
    "1.28.0",
    "1.29.0",
    "1.30.0",
    "1.31.1",
    "1.32.0",
)
