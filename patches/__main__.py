"""``python -m patches`` is ``python -m patches.generate``."""

import sys

from patches.generate.cli import main

sys.exit(main())
