"""A process that keeps exchanging a directory and a symlink (``renameat2`` with
``RENAME_EXCHANGE``: the name is always one or the other, never missing), for race tests."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_LOOP = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print("ready", flush=True)
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit(f"renameat2 failed: errno {ctypes.get_errno()}")
"""


def _exchange_works(a: Path, b: Path) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    there: bool = renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) == 0
    back: bool = there and renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) == 0
    return back


@contextmanager
def swapping(directory: Path, outside: Path) -> Iterator[None]:
    """While inside, ``directory`` flips between itself and a symlink to ``outside``."""
    link = directory.with_name(directory.name + ".link")
    link.symlink_to(outside, target_is_directory=True)
    if not _exchange_works(directory, link):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available on this kernel/filesystem (Linux >= 3.15)")
    proc = subprocess.Popen([sys.executable, "-c", _LOOP, str(directory), str(link)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        yield
    finally:
        proc.kill()
        proc.wait()
        if directory.is_symlink():  # leave the directory where it was
            os.rename(link, directory.with_name("tmp-swap"))
            os.rename(directory, link)
            os.rename(directory.with_name("tmp-swap"), directory)
    assert proc.returncode == -9, "the swapper stopped by itself"
