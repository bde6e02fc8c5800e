"""sandbox.py: the child process, its private channel, output tail, limits and clean-up."""
from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest

from autograder.engine.sandbox import ChannelLimits, ChannelOverflow, Child, ForkedChild, _TailBuffer, parse_message

FIXTURE_DIR = str(Path(__file__).parent)


def child(mode: str, **kwargs) -> Child:
    return Child("sandbox_child_fixture", [mode], env={"PYTHONPATH": FIXTURE_DIR}, **kwargs).start()


def test_messages_come_over_the_private_channel_not_stdout():
    running = child("echo")
    running.send({"hello": 1})
    outcome = running.wait(30)
    assert outcome.last("echo") == {"kind": "echo", "got": '{"hello": 1}'}
    assert outcome.returncode == 0 and not outcome.timed_out


def test_a_flood_of_output_keeps_only_a_bounded_tail():
    outcome = child("flood", output_limit=500).wait(60)
    assert outcome.last("done")
    assert outcome.output_tail.endswith("THE END\n")
    assert "earlier bytes of output dropped" in outcome.output_tail
    assert len(outcome.output_tail) < 700


def test_a_hanging_child_is_killed_at_its_deadline():
    started = time.monotonic()
    outcome = child("sleep").wait(1.0)
    assert outcome.timed_out
    assert outcome.signal_name == "SIGKILL"
    assert time.monotonic() - started < 10


def test_grandchildren_die_with_the_child():
    running = child("orphan")
    deadline = time.monotonic() + 20
    while not running.messages and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = running.messages[0]["pid"]
    assert psutil.pid_exists(grandchild)
    running.wait(0.5)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the grandchild outlived the grading")


def test_memory_growth_is_stopped_by_the_graders_own_limit():
    outcome = child("grow").wait(60, memory_mb=400)
    assert outcome.memory_exceeded
    assert 400 < outcome.peak_rss_mb < 2000


def test_garbled_channel_lines_are_marked_not_trusted():
    outcome = child("garbled").wait(30)
    assert [m["kind"] for m in outcome.messages] == ["garbled", "garbled"]


def test_a_crash_reports_its_signal():
    outcome = child("segfault").wait(30)
    assert outcome.signal_name == "SIGSEGV"
    assert outcome.messages == []


def test_tail_buffer_counts_what_it_dropped():
    tail = _TailBuffer(limit=4)
    for _ in range(100):
        tail.feed(b"abcdefgh")
    assert tail.text().endswith("efgh")
    assert tail.total == 800


def test_the_child_runs_in_its_own_temporary_directory():
    running = child("echo")
    workdir = running._workdir.name
    assert os.path.isdir(workdir)
    running.send({})
    running.wait(30)
    assert not os.path.exists(workdir)


def test_the_clock_can_start_when_the_child_says_so():
    """Start-up is not the child's time: with clock_starts_at, the deadline runs from that stage."""
    running = child("slow_start_then_sleep")
    started = time.monotonic()
    outcome = running.wait(1.0, clock_starts_at="work", startup_s=30)
    assert outcome.timed_out
    assert "work" in running.stages_reached
    # 1.5 s of start-up plus the 1 s limit: a deadline counted from the start would have hit at 1 s.
    assert time.monotonic() - started >= 2.4


def test_a_stage_reported_just_before_the_child_ends_is_seen_however_late_its_reader_runs(monkeypatch):
    # on a loaded machine the channel's reader may run only after the child has exited: the
    # stage is in the pipe, and a child that did its work must not read as one that never did
    reader = Child._read_channel

    def late_reader(self, stream):
        time.sleep(1.0)
        reader(self, stream)

    monkeypatch.setattr(Child, "_read_channel", late_reader)
    ended = child("report_and_end")
    try:
        assert ended.wait_for_stage("done", 60.0)
    finally:
        ended.close()


def test_start_up_has_its_own_limit():
    outcome = child("sleep").wait(60, clock_starts_at="work", startup_s=1.0)
    assert outcome.timed_out and outcome.last("stage") is None


def test_the_channel_has_a_total_budget_past_which_the_child_dies_and_nothing_is_kept():
    started = time.monotonic()
    outcome = child("big_messages", untrusted=True).wait(60)
    assert outcome.channel_overflow and outcome.messages == []
    assert outcome.signal_name == "SIGKILL" and time.monotonic() - started < 30


def test_the_channel_counts_messages():
    limits = ChannelLimits(total_bytes=1 << 20, messages=10)
    outcome = child("many_messages", channel=limits).wait(30)
    assert outcome.channel_overflow and outcome.messages == []


def test_the_channel_bounds_nesting_and_refuses_non_numbers():
    assert child("deep", untrusted=True).wait(30).channel_overflow
    outcome = child("not_a_number").wait(30)
    assert [m["kind"] for m in outcome.messages] == ["garbled", "garbled"]


def test_parse_message_measures_depth_without_recursion():
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ChannelOverflow):
        parse_message(b'{"kind": "x", "d": ' + deep + b"}", depth=16)
    assert parse_message(b'{"kind": "x", "d": [[1]]}', depth=16) == {"kind": "x", "d": [[1]]}


def _forked_probe(send):
    import json

    open_fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    send({"kind": "probe", "fds": open_fds, "env": sorted(os.environ), "cwd": os.getcwd()})
    print(json.dumps({"kind": "result", "forged": True}))


def test_a_forked_child_keeps_only_its_channel_and_a_clean_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_COURSE_TEST_SECRET_TOKEN", "hunter2")
    inherited = open(tmp_path / "verdict-channel", "w")  # stands for the evaluator's own channel
    inherited_fd = inherited.fileno()
    try:
        running = ForkedChild(_forked_probe).start()
        outcome = running.wait(30)
    finally:
        inherited.close()
    probe = outcome.last("probe")
    assert inherited_fd not in probe["fds"]
    assert len([fd for fd in probe["fds"] if fd > 2]) <= 2  # its channel (and the listing itself)
    assert "TVM_COURSE_TEST_SECRET_TOKEN" not in probe["env"]
    assert probe["cwd"] == running.workdir
    assert outcome.last("result") is None and '"forged": true' in outcome.output_tail  # stdout is just output


def test_a_forked_child_is_killed_at_its_deadline():
    running = ForkedChild(lambda send: time.sleep(600)).start()
    outcome = running.wait(0.5)
    assert outcome.timed_out and outcome.signal_name == "SIGKILL"
