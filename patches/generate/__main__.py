import sys

from patches.generate.cli import main

sys.exit(main())
