"""A child for tests/test_sandbox.py: `python -m sandbox_child_fixture FD MODE`."""
import os
import sys
import time

from autograder.engine.sandbox import open_channel

send = open_channel(sys.argv[1])
mode = sys.argv[2]
if mode == "echo":
    request = sys.stdin.readline()
    send({"kind": "echo", "got": request.strip()})
elif mode == "flood":
    chunk = "x" * 1023 + "\n"
    for _ in range(20_000):  # 20 MB
        sys.stdout.write(chunk)
    print("THE END")
    sys.stdout.flush()
    send({"kind": "done"})
elif mode == "sleep":
    time.sleep(600)
elif mode == "report_and_end":
    send({"kind": "stage", "stage": "done"})
elif mode == "slow_start_then_sleep":
    time.sleep(1.5)
    send({"kind": "stage", "stage": "work"})
    time.sleep(600)
elif mode == "orphan":
    pid = os.fork()
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    send({"kind": "grandchild", "pid": pid})
    time.sleep(600)
elif mode == "grow":
    hoard = []
    while True:
        hoard.append(bytearray(50 * 2**20))
        hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])  # touch the pages so they count
        time.sleep(0.01)
elif mode == "garbled":
    os.write(int(sys.argv[1]), b"not json\n[1, 2]\n")
elif mode == "many_messages":
    for index in range(100):
        send({"kind": "note", "index": index})
elif mode == "big_messages":
    for _ in range(64):  # 64 MiB in all, each message valid
        send({"kind": "note", "data": "x" * (1 << 20)})
    time.sleep(600)
elif mode == "deep":
    os.write(int(sys.argv[1]), b'{"kind": "note", "data": ' + b"[" * 50 + b"]" * 50 + b"}\n")
elif mode == "not_a_number":
    os.write(int(sys.argv[1]), b'{"kind": "note", "value": NaN}\n{"kind": "note", "value": Infinity}\n')
elif mode == "segfault":
    import ctypes

    ctypes.string_at(0)
elif mode in ("cpu_work", "cpu_work_idle_class"):
    if mode.endswith("idle_class"):  # its own choice: the lowest class there is
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    send({"kind": "stage", "stage": "work"})
    need = float(sys.argv[3])
    start = time.process_time()
    while time.process_time() - start < need:
        pass
    send({"kind": "done", "cpu_s": time.process_time() - start})
elif mode == "spinners":
    # Waiting of its own making: more spinning processes than cores, each waiting its turn.
    send({"kind": "stage", "stage": "work"})
    for _ in range(int(sys.argv[3])):
        if os.fork() == 0:
            while True:
                pass
    while True:
        pass
elif mode == "pin_and_spin_on_cpu0":
    # Lowers its own share (one CPU, the hog's) and spins there: its waiting is its own doing.
    send({"kind": "stage", "stage": "work"})
    os.sched_setaffinity(0, {0})
    while True:
        pass
elif mode == "abort_while_compiling":  # as the evaluator when LLVM aborts: its stage, then LLVM's last words
    send({"kind": "stage", "stage": "compile"})
    send({"kind": "compiling", "widest_vector": 256, "vector_block": "T_add", "unrolled_copies": 36})
    sys.stderr.write("LLVM ERROR: Cannot select: a test's own words\n")
    sys.stderr.flush()
    os.abort()
