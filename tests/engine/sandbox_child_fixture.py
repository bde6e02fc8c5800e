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
