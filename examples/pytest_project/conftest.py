"""Loads the ragassay pytest plugin where its ``pytest11`` entry point is not installed (an editable checkout
of an older ragassay); with an installed ragassay this file is not needed."""

from importlib.metadata import entry_points

INSTALLED = any(ep.name == "ragassay" for ep in entry_points(group="pytest11"))
pytest_plugins = [] if INSTALLED else ["ragassay.testing.pytest_plugin"]
