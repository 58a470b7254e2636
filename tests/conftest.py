"""Suite-wide fixtures: nothing here may touch the network or the user's files."""

from __future__ import annotations
