"""Web tools."""
