import sys

from patches.matrix.cli import main

sys.exit(main())
