"""`python -m compat`."""

import sys

from compat.cli import main

sys.exit(main())
