"""`python -m openmemd` is the `openmemd` command."""

import sys

from openmemd.cli import main

sys.exit(main())
