"""The ``ragassay`` command line. One module per command group; heavy imports happen inside commands."""
