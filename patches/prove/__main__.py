import sys

from patches.prove.cli import main

sys.exit(main())
