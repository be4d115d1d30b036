"""`python -m compat.cell COMMAND ...`: the cell's entry points.

run PLAN.json RESULTS.jsonl START   run a plan's checks (the host's worker)
serve [LIMITS_JSON]                 one task per stdin line, one answer per stdout line
probe                               prove the stack works, print what is installed
annotations MODEL.onnx ...          do the model's shape annotations hold?
"""

from __future__ import annotations

import sys


def main(argv):
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "run":
        from compat.cell.loop import main as run
    elif command == "serve":
        from compat.cell.serve import main as run
    elif command == "probe":
        from compat.cell.probe import main as run
    elif command == "annotations":
        from compat.cell.annotations_cli import main as run
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
