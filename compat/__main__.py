"""`python -m compat`: the host command line (compat/cli.py)."""

import sys

from compat.cli import main

sys.exit(main())
