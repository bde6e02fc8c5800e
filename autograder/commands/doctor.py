"""`tvm-course doctor`: what confines the code being graded on this machine, and whether it works."""
from __future__ import annotations

import argparse
import sys

from ..errors import ExitCode


def doctor(args: argparse.Namespace) -> int:
    from ..engine import confine, world
    from ..engine.pipeline import GraderUnusable, preflight

    status = confine.available()
    support = world.supported()
    rows = [
        ("namespaces (user, pid, IPC, network, UTS, mount)", support.available, support.reason or "each child in a world of its own"),
        ("Landlock (files)", status.landlock_abi >= 1, f"ABI {status.landlock_abi}" if status.landlock_abi else status.reason),
        ("Landlock scoping of signals and sockets", status.landlock_abi >= confine.LANDLOCK_SCOPES_ABI,
         f"needs ABI {confine.LANDLOCK_SCOPES_ABI}, this kernel has {status.landlock_abi}"),
        ("seccomp (system calls)", status.seccomp, "libseccomp found" if status.seccomp else status.reason),
        ("isolation between gradings", status.isolated, "namespaces, or Landlock's scoping" if status.isolated
         else "a class run refuses without --allow-unconfined"),
    ]
    rows.append(("where GPU schedules run without a GPU", *_opencl_device()))
    for name, ok, detail in rows:
        print(f"  [{'ok' if ok else 'no':>2}] {name}: {detail}")
    print(f"in force for each untrusted child: {status.describe()}")
    try:
        preflight()
    except GraderUnusable as error:
        print(error, file=sys.stderr)
        return ExitCode.FAILED
    print("preflight: the bundled journal schedule graded correct inside this confinement")
    return ExitCode.OK if status.complete and status.isolated else ExitCode.FAILED


def _opencl_device() -> tuple[bool, str]:
    """The OpenCL device a grading would use, found as a grading finds it (a runner in its own
    world builds and runs a kernel with local memory and a barrier on each device in turn, and
    checks its result): listing a device proves nothing."""
    from ..engine.measure import InfrastructureError
    from ..engine.opencl import working_device

    try:
        device = working_device()
    except InfrastructureError as error:
        return False, f"{error}; until then their correctness stays pending (a grader fault, never a zero)"
    return True, f"kernels build, run and compute right on {device}"


def register(subparsers) -> None:
    check = subparsers.add_parser(
        "doctor", help="say what confines graded code on this machine, and grade a known-good schedule inside it",
        description="List each confinement mechanism this machine offers, then grade the bundled journal schedule "
                    "confined (the preflight every class run and self-check does). Exit 0 when all is in force.")
    check.set_defaults(handler=doctor)
