"""autograder/course/workers.py: stopping a submission's whole process tree."""
from __future__ import annotations

import subprocess
import sys
import time

import psutil

from autograder.course.workers import kill_tree

# A child that starts a grandchild in a session of its own (as a Jupyter kernel is started), then waits.
TREE = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
print("started", flush=True)
time.sleep(120)
"""


def test_kill_tree_stops_descendants_in_other_sessions():
    parent = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "started"
        descendants = psutil.Process(parent.pid).children(recursive=True)
        assert len(descendants) == 1
        kill_tree(parent.pid)
        parent.wait(timeout=10)
        time.sleep(0.2)
        assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in descendants)
    finally:
        if parent.poll() is None:
            parent.kill()
