"""``python -m ragassay`` runs the CLI."""

from .cli.main import main

main()
