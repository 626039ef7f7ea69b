"""``python -m memcli``."""

from memcli.cli.app import main

main()
