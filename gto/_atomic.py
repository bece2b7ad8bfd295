"""Atomic file writes: a temporary file in the same folder, then a rename."""
from __future__ import annotations

import os
import tempfile


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
