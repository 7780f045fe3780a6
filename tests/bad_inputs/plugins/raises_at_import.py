"""A plugin that raises while it is imported."""

raise RuntimeError("this plugin fails at import")
