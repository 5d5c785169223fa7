import sys

from pfgen_fast.cli import main

sys.exit(main())
