"""Importing this plugin fails, as a half-installed plugin's would."""

import ragassay_dependency_that_is_not_installed  # noqa: F401
