"""`tvm-course hub`: the class on a real JupyterHub on 127.0.0.1, with demo accounts.

Prints the hub's address and one line per account (`student: NAME password: PASSWORD`, then the
instructor's), then runs until interrupted (Ctrl-C, SIGTERM), and stops the hub, every user's
server and the proxy. `tvm-course hub remove` deletes the demo accounts and the state folder.
Exit codes: 0 stopped cleanly, 1 the hub failed, 2 usage (not root, a name or port taken).
"""
from __future__ import annotations

import shutil
import signal
import sys
import time
from pathlib import Path

from ..errors import ExitCode


def register(subparsers) -> None:
    from autograder.hub.accounts import DEFAULT_INSTRUCTOR, DEFAULT_STUDENTS
    from autograder.hub.server import DEFAULT_ASSIGNMENTS, DEFAULT_PORT, DEFAULT_STATE

    parser = subparsers.add_parser("hub", help="the class on a JupyterHub on 127.0.0.1 (demo accounts; needs root)",
                                   description="Start a JupyterHub on 127.0.0.1 for the course: a system user per demo "
                                               "account, each user's server spawned as that user, nbgrader's Assignments "
                                               f"and Formgrader, a shared exchange, the assignments a student runs in their own "
                                               f"kernel released ({' and '.join(DEFAULT_ASSIGNMENTS)}). Needs root, "
                                               "node/npm (for configurable-http-proxy) and the network to PyPI and npm once.")
    parser.add_argument("action", nargs="?", choices=["start", "remove"], default="start",
                        help="start (default) or remove: delete the demo accounts (their homes) and the state folder")
    parser.add_argument("-p", "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--state", default=str(DEFAULT_STATE), metavar="DIR",
                        help=f"the hub's folder: database, exchange, single-user environment (default {DEFAULT_STATE})")
    parser.add_argument("--students", default=",".join(DEFAULT_STUDENTS), metavar="A,B",
                        help=f"student accounts (default {','.join(DEFAULT_STUDENTS)})")
    parser.add_argument("--instructor", default=DEFAULT_INSTRUCTOR, metavar="NAME", help=f"(default {DEFAULT_INSTRUCTOR})")
    parser.set_defaults(handler=run_hub)


def run_hub(args) -> int:
    from autograder.hub.accounts import HubError, remove_system_user, require_root
    from autograder.hub.server import Hub, HubSettings

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    students = [name for name in args.students.split(",") if name]
    settings = HubSettings(state=Path(args.state), port=args.port, students=students, instructor=args.instructor)
    try:
        if args.action == "remove":
            require_root("removing the demo accounts")
            for name in [*students, args.instructor]:
                remove_system_user(name)
            shutil.rmtree(settings.state, ignore_errors=True)
            log(f"removed {', '.join([*students, args.instructor])} and {settings.state}")
            return ExitCode.OK
        began = time.monotonic()
        hub = Hub.start(settings, log)
    except HubError as err:
        print(f"tvm-course hub: {err}", file=sys.stderr)
        return ExitCode.USAGE_ERROR if "root" in str(err) or "in use" in str(err) or "exists" in str(err) else ExitCode.FAILED
    log(f"hub up in {time.monotonic() - began:.1f} s (log: {hub.log_path}); Ctrl-C stops it")
    print(hub.banner(), flush=True)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    try:
        while not stopping and hub.process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    failed = hub.process.poll() is not None
    hub.stop()
    left = hub.leftovers()
    if failed:
        log(f"JupyterHub exited by itself; its log:\n{hub.log_tail()}")
    if left:
        log("still running as demo accounts after the stop:\n" + "\n".join(left))
    log("hub stopped" + ("" if left else " cleanly"))
    return ExitCode.FAILED if failed or left else ExitCode.OK
