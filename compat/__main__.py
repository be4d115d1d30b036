"""`python -m compat`: the host command line (compat/cli/main.py)."""

import sys

from compat.cli.main import main

sys.exit(main())
