import sys

from fuzzfarm.cli import main

sys.exit(main())
