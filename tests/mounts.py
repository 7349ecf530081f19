"""File-system faults for tests: a read-only folder, a small tmpfs (a disk that fills up).

Under root, permission bits do not stop writes, so a read-only folder is a read-only bind mount there (and file
modes otherwise); a tmpfs needs the right to mount (root with CAP_SYS_ADMIN): :func:`tmpfs_available` says.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path


def can_make_read_only() -> bool:
    """Whether :func:`read_only` can work here (a non-root user, or root allowed to bind-mount)."""
    return os.geteuid() != 0 or tmpfs_available()


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` and the files in it read-only: a read-only bind mount under root (root ignores permission
    bits), file modes otherwise."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
            yield
        finally:
            subprocess.run(["umount", str(folder)], capture_output=True)
        return
    modes = {path: path.stat().st_mode for path in [folder, *folder.iterdir()]}
    for path, mode in modes.items():
        path.chmod(mode & ~0o222)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def tmpfs_available() -> bool:
    """Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    probe = Path("/tmp") / f"rg-tmpfs-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)], capture_output=True)
        if mounted.returncode != 0:
            return False
        subprocess.run(["umount", str(probe)], capture_output=True)
        return True
    finally:
        probe.rmdir()


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: int) -> Iterator[None]:
    """A tmpfs of ``size`` bytes mounted on ``folder`` (its contents hidden until it is unmounted)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
