"""Plugins shipped with ragassay. Each module is one plugin, registered through ragassay's own
``[project.entry-points.ragassay]``, exactly as a third-party plugin would be; core never imports them."""
