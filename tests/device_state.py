"""What this machine's OpenCL gives a grading, asked once a test run (conftest's `opencl` marker
and the tests whose expectations depend on it)."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def opencl_device() -> tuple[str, str]:
    """(the OpenCL device a grading uses here, why there is none): asked of a runner in its own
    world, as a grading asks (autograder.engine.opencl.working_device)."""
    from autograder.engine.measure import InfrastructureError
    from autograder.engine.opencl import working_device

    try:
        return working_device(), ""
    except InfrastructureError as error:
        return "", str(error)
