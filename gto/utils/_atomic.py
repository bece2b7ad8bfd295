"""Safe file writes: atomic for regular files, write-through for anything else.

* A symlink is followed: its target is written, the link stays.
* A regular file (or a new path) is written to a temporary file in the same
  folder, then renamed over it, so readers see the old file or the whole new
  one.  A new file gets the mode the umask gives (as ``open`` would), an
  overwritten file keeps its mode (and, where allowed, its owner).
* Anything else that exists (a FIFO, a device, a socket) is never replaced:
  the text is written through to it.  A folder is an error.
* A write-protected file (no write permission for us, or - for root, who may
  write anything - no write bit at all, as ``rm`` asks before removing) is
  never replaced: PermissionError.
* Errors name the path asked for, never the temporary file.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid


def _target(path):
    real = os.path.realpath(os.fspath(path))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real, None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{path} is a folder, not a file")
    return real, st


def _protected(real, st):
    """True for an existing file we must not replace (see the module docstring)."""
    return not os.access(real, os.W_OK) or (st.st_mode & 0o222) == 0


@contextlib.contextmanager
def _naming(path):
    """OSErrors inside name ``path`` (not a temporary file's name)."""
    try:
        yield
    except OSError as exc:
        if exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None


def check_writable(path):
    """Raise OSError now if ``path`` cannot be written later (call before long work).

    A missing folder is an error (FileNotFoundError), not created: a mistyped
    output path should not leave new folders behind."""
    real, st = _target(path)
    if st is not None and _protected(real, st):
        raise PermissionError(errno.EACCES, "the file is write-protected", os.fspath(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        return
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "no such folder", os.path.dirname(os.fspath(path)) or folder)
    with _naming(path):
        probe = os.path.join(folder, f".gto-probe-{uuid.uuid4().hex}")
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` (UTF-8) by the rules of the module docstring."""
    real, st = _target(path)
    data = text.encode("utf-8")
    if st is not None and _protected(real, st):
        raise PermissionError(errno.EACCES, "the file is write-protected", os.fspath(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        with _naming(path), open(real, "wb") as fh:  # FIFO, device, socket: never replace
            fh.write(data)
        return
    folder = os.path.dirname(real)
    with _naming(path):
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".tmp-{uuid.uuid4().hex}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if st is not None:
                os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
                with contextlib.suppress(OSError):
                    if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                        os.fchown(fh.fileno(), st.st_uid, st.st_gid)
            os.fsync(fh.fileno())
        os.replace(tmp, real)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None:
            raise type(exc)(exc.errno, exc.strerror, os.fspath(path)) from None
        raise
