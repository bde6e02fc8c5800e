"""Whether a process of this machine still runs, by its pid: for the grader's own records (a
scratch folder whose grader is gone, a class run's marker), never about an untrusted child,
whose end its parent learns by waiting for it (sandbox)."""
from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """A process `pid` exists on this machine (in this pid namespace), whoever owns it. A pid can
    be reused: a False is certain, a True may be another process by now."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, and belongs to another user
        return True
    return True
