"""``python -m collector.metrics``: see :mod:`collector.metrics.cli`."""

import sys

from collector.metrics.cli import main

sys.exit(main())
