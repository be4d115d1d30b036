r"""Make the real-model fixture set in this directory (issue #11).

Every ``*.onnx`` here is a model that a real converter or project produced,
next to a same-named ``*.npz`` of inputs it accepts (keys = its input names):

============================  ====================================================
skl_logreg_zipmap.onnx        LogisticRegression on iris, integer labels 0/1/2,
                              skl2onnx defaults: ZipMap on (a sequence of maps)
skl_tree_string_labels.onnx   RandomForestClassifier (3 trees, depth 3) on iris
                              with STRING labels, zipmap off: ai.onnx.ml
                              TreeEnsembleClassifier, label tensor + probabilities
skl_scaler_linreg.onnx        StandardScaler + LinearRegression on synthetic data:
                              a plain float model (ai.onnx.ml Scaler, LinearRegressor)
silero_vad_16k_op15.onnx      copied unchanged from the silero-vad 6.2.3 wheel
                              (MIT, see LICENSE.silero-vad): an If whose branch
                              holds an LSTM; inputs input, state, sr
============================  ====================================================

Exact environment (the files are byte-for-byte reproducible with it)::

    uv venv -p 3.11 /tmp/mk
    uv pip install --python /tmp/mk/bin/python \
        scikit-learn==1.7.2 skl2onnx==1.20.0 onnx==1.23.2 numpy==2.2.6 \
        scipy==1.17.1 protobuf==7.36.2
    uv pip install --python /tmp/mk/bin/python --no-deps silero-vad==6.2.3
    /tmp/mk/bin/python tests/data/real_models/make_models.py          # write
    /tmp/mk/bin/python tests/data/real_models/make_models.py --check  # verify

silero-vad is installed with ``--no-deps`` and never imported (importing it
imports torch): only its packaged ``.onnx`` file and LICENSE are read. Writing
overwrites the fixtures in this directory and prints each file's size and
sha256; ``--check`` makes everything in a temporary directory and exits 1 unless
it matches the committed files byte for byte. Everything is seeded: iris ships
inside scikit-learn, the synthetic data and the audio come from
``numpy.random.default_rng`` with fixed seeds, every estimator has
``random_state=0``, and the npz archives are written with a fixed zip date.

Opsets, as skl2onnx makes them:

* ``skl_logreg_zipmap`` keeps every default: skl2onnx imports the lowest opsets
  its nodes need (``""`` 9, ``ai.onnx.ml`` 1) but stamps IR version 10, taken
  from its latest tested opset (22): onnxruntime before 1.18 refuses to load it.
* ``skl_tree_string_labels`` and ``skl_scaler_linreg`` pass ``target_opset=17``:
  IR 8, loadable everywhere; skl2onnx lists ``("", 17)`` twice in
  ``opset_import`` there (kept as made; every checker tried accepts it).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/data: fixture_files
from fixture_files import save_npz

HERE = Path(__file__).resolve().parent

PINS = {
    "scikit-learn": "1.7.2",
    "skl2onnx": "1.20.0",
    "onnx": "1.23.2",
    "numpy": "2.2.6",
    "silero-vad": "6.2.3",
}

SILERO_FILE = "silero_vad_16k_op15.onnx"
SILERO_SHA256 = "7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49"


def _check_pins() -> None:
    wrong = []
    for name, want in PINS.items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = "missing"
        if have != want:
            wrong.append(f"{name} {have} (want {want})")
    if wrong:
        sys.exit("make_models.py: wrong environment: " + "; ".join(wrong) + " - see the docstring")


def _save(out: Path, name: str, model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    # skl2onnx lists opset_import in set order, which changes with the string
    # hash seed from run to run: sort it (the only edit made to converter
    # output; skl2onnx's duplicate ('', 17) entry is kept as it made it).
    imports = sorted((o.domain, o.version) for o in model.opset_import)
    del model.opset_import[:]
    for domain, version in imports:
        model.opset_import.add(domain=domain, version=version)
    onnx.checker.check_model(model)
    (out / f"{name}.onnx").write_bytes(model.SerializeToString())
    save_npz(out / f"{name}.npz", feeds, compress=False)


def _iris() -> tuple[np.ndarray, np.ndarray, list[str]]:
    from sklearn.datasets import load_iris

    iris = load_iris()
    return iris.data.astype(np.float32), iris.target, [str(n) for n in iris.target_names]


def _iris_feed(x: np.ndarray) -> np.ndarray:
    # 10 rows spread over the three classes (rows 0, 15, ..., 135).
    return np.ascontiguousarray(x[::15][:10], dtype=np.float32)


def make_logreg_zipmap(out: Path) -> None:
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression

    x, y, _ = _iris()
    clf = LogisticRegression(max_iter=500, random_state=0).fit(x, y)
    # Defaults on purpose: ZipMap on, target opset = skl2onnx's latest tested.
    model = to_onnx(clf, x[:1], model_optim=True)
    feeds = {model.graph.input[0].name: _iris_feed(x)}
    _save(out, "skl_logreg_zipmap", model, feeds)


def make_tree_string_labels(out: Path) -> None:
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier

    x, y, names = _iris()
    labels = np.array(names, dtype=object)[y]  # 'setosa', 'versicolor', 'virginica'
    clf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(x, labels)
    model = to_onnx(
        clf,
        x[:1],
        options={"zipmap": False},
        target_opset=17,
    )
    feeds = {model.graph.input[0].name: _iris_feed(x)}
    _save(out, "skl_tree_string_labels", model, feeds)


def make_scaler_linreg(out: Path) -> None:
    from skl2onnx import to_onnx
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    x = (rng.normal(size=(40, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -1.0]).astype(np.float32)
    y = x @ np.array([1.5, -0.2, 3.0], dtype=np.float32) + 0.5
    pipe = make_pipeline(StandardScaler(), LinearRegression()).fit(x, y)
    model = to_onnx(pipe, x[:1], target_opset=17)
    feeds = {model.graph.input[0].name: np.ascontiguousarray(x[:8])}
    _save(out, "skl_scaler_linreg", model, feeds)


def copy_silero(out: Path) -> None:
    # Located through the distribution's metadata, not imported: importing
    # silero_vad imports torch.
    src = Path(
        str(metadata.distribution("silero-vad").locate_file(f"silero_vad/data/{SILERO_FILE}"))
    )
    data = src.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SILERO_SHA256:
        sys.exit(
            f"make_models.py: {SILERO_FILE} in silero-vad has sha256 {digest}, not {SILERO_SHA256}"
        )
    (out / SILERO_FILE).write_bytes(data)
    # One 32 ms window at 16 kHz as the silero-vad wrapper feeds it: 64 samples
    # of context + 512 new samples; a 440 Hz tone with a little seeded noise.
    rng = np.random.default_rng(11)
    t = np.arange(576, dtype=np.float64) / 16000.0
    audio = 0.3 * np.sin(2 * np.pi * 440.0 * t) + 0.01 * rng.standard_normal(576)
    feeds = {
        "input": audio.astype(np.float32)[None, :],  # [batch=1, 576]
        "state": np.zeros((2, 1, 128), dtype=np.float32),  # LSTM h and c
        "sr": np.array(16000, dtype=np.int64),  # rank 0
    }
    save_npz(out / "silero_vad_16k_op15.npz", feeds, compress=False)
    lic = metadata.distribution("silero-vad").read_text("licenses/LICENSE")
    if lic is None:
        sys.exit("make_models.py: silero-vad's LICENSE not found in its dist-info")
    (out / "LICENSE.silero-vad").write_text(
        f"{SILERO_FILE} is copied unchanged from the silero-vad 6.2.3 wheel\n"
        f"(silero_vad/data/{SILERO_FILE}, sha256 {SILERO_SHA256}),\n"
        "https://github.com/snakers4/silero-vad, under this license:\n\n" + lic
    )


MAKERS = (make_logreg_zipmap, make_tree_string_labels, make_scaler_linreg, copy_silero)


def make_all(out: Path) -> list[Path]:
    for maker in MAKERS:
        maker(out)
    return sorted(
        p for p in out.iterdir() if p.suffix in (".onnx", ".npz") or p.name.startswith("LICENSE")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="make into a temporary directory and compare with the committed files",
    )
    args = parser.parse_args()
    _check_pins()
    if not args.check:
        for path in make_all(HERE):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            print(f"{path.stat().st_size:>9,d}  {digest[:16]}  {path.name}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        made = make_all(Path(tmp))
        differ = [
            p.name
            for p in made
            if not (HERE / p.name).exists() or (HERE / p.name).read_bytes() != p.read_bytes()
        ]
        shutil.rmtree(tmp, ignore_errors=True)
    if differ:
        sys.exit("differ from the committed files: " + ", ".join(differ))
    print(f"ok: {len(made)} files reproduce byte for byte")


if __name__ == "__main__":
    main()
