"""engine/threads.py: a process that runs TVM on one thread stays free to run on every CPU it
was given, and so does everything it starts."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from autograder.engine.threads import NO_PINNING, tvm_thread_env

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU here: there is nothing to be bound away from")

# TVM's pool started both ways a program starts it, then the CPUs the main thread may run on,
# and those of a process it starts afterwards.
PROBE = """
import json, os, subprocess, sys
import numpy as np
import tvm
from tvm import te
tvm.runtime.num_threads()
data = te.placeholder((4096,), name="data")
doubled = te.compute((4096,), lambda i: data[i] * 2, name="doubled")
schedule = tvm.s_tir.Schedule(te.create_prim_func([data, doubled]))
schedule.parallel(schedule.get_loops(schedule.get_sblock("doubled"))[0])
tvm.compile(schedule.mod, target="llvm")(tvm.runtime.tensor(np.ones(4096, "float32")), tvm.runtime.tensor(np.zeros(4096, "float32")))
child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"], capture_output=True, text=True)
print(json.dumps({"main": sorted(os.sched_getaffinity(0)), "child": json.loads(child.stdout)}))
"""


def _cpus_after_tvm(env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_one_tvm_thread_leaves_the_process_and_its_children_on_every_cpu():
    mine = sorted(os.sched_getaffinity(0))
    assert _cpus_after_tvm({**os.environ, **tvm_thread_env(1)}) == {"main": mine, "child": mine}


def test_what_the_setting_is_for_tvm_binds_the_main_thread_without_it():
    """If this fails, TVM no longer binds the thread that starts its pool: engine/threads.py's
    reason is gone (the setting then does nothing) and its docstring should say so."""
    env = {key: value for key, value in {**os.environ, **tvm_thread_env(1)}.items() if key not in NO_PINNING}
    bound = _cpus_after_tvm(env)
    assert len(bound["main"]) == 1 and bound["child"] == bound["main"], bound
