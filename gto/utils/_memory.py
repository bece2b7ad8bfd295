"""Memory this machine can give a computation (to refuse sizes that cannot fit, up front)."""
from __future__ import annotations

import os

#: share of the available memory a single search may plan to use
MEMORY_SHARE = 0.8


def available_bytes():
    """Bytes of memory available now (``MemAvailable`` of /proc/meminfo, else the
    physical memory; None when neither is known)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def gib(n_bytes):
    """``n_bytes`` as a short text in GiB or MiB."""
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.0f} MiB"


def check_fits(n_bytes, what, advice):
    """MemoryError-free refusal: ValueError naming ``what`` when ``n_bytes`` exceed
    MEMORY_SHARE of the available memory (``advice``: what to change)."""
    free = available_bytes()
    if free is not None and n_bytes > MEMORY_SHARE * free:
        raise ValueError(f"{what} needs about {gib(n_bytes)} of memory, more than this machine "
                         f"can give ({gib(free)} available); {advice}")
