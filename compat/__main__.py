"""`python -m compat`: `annotations` runs with only onnx/onnxruntime/numpy installed."""

import sys

if sys.argv[1:2] == ["annotations"]:
    from compat.annotations_cli import main

    sys.exit(main(sys.argv[2:]))

from compat.cli import main

sys.exit(main())
