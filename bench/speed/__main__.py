"""``python -m bench.speed``: see bench/speed/cli.py."""

from bench.speed.cli import main

main()
