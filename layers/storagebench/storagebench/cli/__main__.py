"""``python -m storagebench.cli``: the ``storagebench`` command without its installed script."""

from storagebench.cli.main import main

main()
