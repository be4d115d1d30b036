r"""Make the scanned fixtures (issue #27): small models written by real producers
installed from the package index, each beside a seeded ``.npz`` of its inputs, for
``onnx-compat scan`` (tests/test_scan_exporters.py) to be measured on models nobody here
spelled by hand.

The producers run in a venv of their own holding nothing but them, pinned, made with uv
in a cache — ``$ONNX_COMPAT_SCANNED_VENV``, else
``$XDG_CACHE_HOME/onnx-compat/scanned-venv`` — and ``producers.py`` beside this script
runs in it to write the models. Each
model is written the way the producer's documentation writes one; nothing is edited
after the producer returns it.

==============================  ===============  ==============================================
model                           producer         what it carries (the scan's detector)
==============================  ===============  ==============================================
onnxscript_pad_value_ints       onnxscript       ``op.Pad(x, op.Constant(value_ints=[...]))``,
                                0.7.2            the seed's spelling: onnx < 1.21's strict
                                                 shape inference rejects it
                                                 (pad_pads_from_constant.value_ints)
onnxscript_function_while       onnxscript       a script function with a float attribute
                                0.7.2            (``LeakyRelu(alpha=@alpha)`` in a model-local
                                                 function: local_function.linked_attribute)
                                                 and a Python ``while`` loop (``Loop("", cond,
                                                 ...)``: loop_trip_count_omitted.empty_trip_count)
skl2onnx_kmeans                 skl2onnx 1.20.0  scikit-learn's KMeans on iris at opset 18:
                                (scikit-learn    ReduceSumSquare with its axes as an input and
                                1.9.1)           ``noop_with_empty_axes`` unset, a near miss of
                                                 the reduce_sum_square_empty_axes detectors;
                                                 nothing to find
==============================  ===============  ==============================================

Usage (any Python 3.10+; uv on PATH)::

    python tests/data/scanned/make_models.py                 # rewrite the committed files
    python tests/data/scanned/make_models.py --out DIR       # write them into DIR
    python tests/data/scanned/make_models.py --check         # verify them byte for byte
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/data: fixture_files
import fixture_files
from fixture_files import sha256

HERE = Path(__file__).resolve().parent
#: the producers and what they need, pinned: the venv holds these and their dependencies
PRODUCERS = (
    "onnxscript==0.7.2",
    "onnx-ir==1.1.0",
    "skl2onnx==1.20.0",
    "scikit-learn==1.9.1",
    "scipy==1.17.1",
    "onnx==1.23.2",
    "numpy==2.4.6",
    "protobuf==7.36.2",
    "ml-dtypes==0.7.0",
)


def venv_dir() -> Path:
    return fixture_files.cache_dir("scanned-venv", "ONNX_COMPAT_SCANNED_VENV")


def producers_python() -> Path:
    """The venv's interpreter, the pinned producers installed into it (once)."""
    venv = venv_dir()
    python = venv / "bin" / "python"
    marker = venv / ".complete"
    wanted = "\n".join(PRODUCERS) + "\n"
    if marker.is_file() and marker.read_text() == wanted and python.exists():
        return python
    uv = fixture_files.find_uv()
    shutil.rmtree(venv, ignore_errors=True)
    for command in (
        [uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            "--only-binary",
            ":all:",
            *PRODUCERS,
        ],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"make_models.py: {' '.join(command[:3])}: {done.stderr.strip()}")
    marker.write_text(wanted)
    return python


# ---- from any Python ---------------------------------------------------------------------


def made(out: Path) -> list[Path]:
    """The fixtures written into `out` by the producers' venv."""
    command = [str(producers_python()), str(HERE / "producers.py"), str(out)]
    # onnxscript orders a loop's carried values as a set iterates: a fixed hash seed
    environ = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environ)
    if done.returncode != 0:
        sys.exit(f"make_models.py: the producers failed:\n{done.stderr.strip()}")
    return [out / name for name in done.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where (default: beside this)")
    parser.add_argument("--check", action="store_true", help="verify the committed files")
    args = parser.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            paths = made(Path(tmp))
            differ = [p.name for p in paths if (HERE / p.name).read_bytes() != p.read_bytes()]
        if differ:
            sys.exit("differ from the committed files: " + ", ".join(differ))
        print(f"ok: {len(paths)} files reproduce byte for byte")
        return
    for path in made(args.out):
        print(f"{path.stat().st_size:>9,d}  {sha256(path)[:16]}  {path.name}")


if __name__ == "__main__":
    main()
