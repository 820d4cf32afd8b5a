"""``python -m ragloom`` runs the CLI."""

from ragloom.cli.app import main

main()
