"""``python -m patches`` is ``python -m patches.generate``."""
import sys

from .generate import main

sys.exit(main())
