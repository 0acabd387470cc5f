"""``python3 -m storagebench.agent`` (and the zipapp's entry point)."""

import sys

from storagebench.agent.cli import main

sys.exit(main())
