#!/usr/bin/env python3
"""Reproduces @case@ · @check@ from the onnx-compat cell @cell@ (Python @python@).

Recorded: @outcome@

The check: @what@.

@howto@

Everything it needs is inside this file: the model and its arrays, and the
onnx-compat code that ran the check inside the cell (compat/cell/).
"""

# The template of every repro.py (compat/followup/repro.py fills it in): a real file, so
# editors, linters and tests see it; it must stay valid on Python 3.9.

import base64
import json
import os
import shutil
import sys
import tempfile

CASE = "@case@"
CHECK = "@check@"
SPEC = json.loads("@spec@")
BLOBS = {"@blobs@": ""}


def main():
    folder = tempfile.mkdtemp(prefix="compat-repro-")
    try:
        return run_in(folder)
    finally:  # the unpacked case and code: nothing left behind in the temp folder
        shutil.rmtree(folder, ignore_errors=True)


def run_in(folder):
    for name, text in BLOBS.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode("".join(text.split())))
    for name, custom in SPEC["custom_checks"].items():
        custom["file"] = os.path.join(folder, "custom", name + ".py")
    with open(os.path.join(folder, "case", "case.json"), "w") as f:
        json.dump(SPEC, f)
    sys.path.insert(0, os.path.join(folder, "code"))
    from compat.cell.loop import run_task

    task = {"case": CASE, "check": CHECK, "case_dir": os.path.join(folder, "case")}
    record = run_task({}, task)
    import onnx
    import onnxruntime

    print("onnx %s, onnxruntime %s" % (onnx.__version__, onnxruntime.__version__))
    head = record["outcome"] + ("@" + record["phase"] if record["phase"] else "")
    print("%s · %s: %s: %s" % (CASE, CHECK, head, record["detail"]))
    if record.get("traceback"):
        print(record["traceback"])
    return 0 if record["outcome"] in ("pass", "skip") else 1


if __name__ == "__main__":
    sys.exit(main())
