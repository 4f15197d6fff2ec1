import sys

from patches.validate.cli import main

sys.exit(main())
