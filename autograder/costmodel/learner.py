"""The parent's side of a student's learner: one confined child an episode, every answer checked.

A `LearnerChild` is a scoring.Model whose fit and predict are requests to a child running the
student's code (learner_runner). It is one episode's (a ranking split, a search): a fresh child
each, so that nothing the student's code keeps between calls outlives what the episode revealed.

What crosses back is checked here, whatever the child said about it (the child runs beside the
student's code): each reply must answer the request just sent, by its id and kind (anything
else is a forged or unasked answer); scores must be a list of exactly as many numbers as
candidates asked about (not booleans), all finite (JSON cannot carry a NaN: the channel refuses
it), and not all equal (a constant ranks nothing: every order of the candidates agrees with it
equally). The channel itself is bounded (LEARNER_CHANNEL): a child that floods it is stopped.

Limits: the child's own time for the whole episode (not its wait for a CPU: engine/runqueue.py),
its memory, and its start-up. A student's fault (an exception, a hang, too much memory, a crash,
a bad answer) raises LearnerFailure: that part scores 0 with the message. A fault of the grader
(the child could not start; the machine starved it) raises LearnerFault: the part stays pending.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import numpy as np

from ..errors import TvmCourseError
from ..engine.sandbox import Child, ChannelLimits, ChildOutcome

# Per episode: a search sends up to 2 requests a batch (8 batches at budget 64), a split 2.
LEARNER_CHANNEL = ChannelLimits(total_bytes=2 * 2**20, messages=64, depth=4)
MAX_SOURCE_BYTES = 64 * 1024  # an answer cell, as a schedule's (engine/pipeline.py)
MAX_MESSAGE_CHARS = 2000
BASE_RSS_MB = 200  # an interpreter with numpy, before the learner's own allowance


@dataclass(frozen=True)
class LearnerLimits:
    episode_s: float = 60.0  # own CPU time of one episode's child, from its first line of student code
    memory_mb: int = 512  # beyond what the child uses before the student's code runs
    startup_s: float = 60.0
    nice: int = 10


class LearnerFailure(TvmCourseError):
    """The student's learner failed: the part scores 0, the message says why."""


class LearnerFault(TvmCourseError):
    """The grader could not run the learner: the part stays pending."""


def _text(value) -> str:
    if not isinstance(value, str):
        return "(no readable message)"
    return value if len(value) <= MAX_MESSAGE_CHARS else value[:MAX_MESSAGE_CHARS] + " [... cut]"


def check_scores(scores, count: int) -> np.ndarray:
    """The scores a reply carried, as float64, or LearnerFailure saying what is wrong with them."""
    if not isinstance(scores, list):
        raise LearnerFailure("predict's answer did not arrive as a list of scores")
    if len(scores) != count:
        raise LearnerFailure(f"predict returned {len(scores)} scores for {count} candidates")
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores):
        raise LearnerFailure("predict returned something other than numbers")
    array = np.asarray(scores, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise LearnerFailure("predict returned NaN or infinite scores")
    if count > 1 and np.all(array == array[0]):
        raise LearnerFailure(f"predict gave all {count} candidates the same score: a constant ranks nothing "
                             "(is the model fitted? does it see the features?)")
    return array


class LearnerChild:
    def __init__(self, source: str, rows: np.ndarray, limits: LearnerLimits = LearnerLimits(), episode: str = ""):
        self.limits, self.episode = limits, episode
        self.next_id, self.read = 0, 0
        self.outcome: ChildOutcome | None = None
        if len(source.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
            raise LearnerFailure(f"the answer cell is over {MAX_SOURCE_BYTES // 1024} KiB")
        self.child = Child(
            "autograder.costmodel.learner_runner", [str(limits.memory_mb), str(limits.nice)],
            untrusted=True, channel=LEARNER_CHANNEL, output_limit=2000,
            env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
            files={"learner.py": source, "pool.json": json.dumps(np.asarray(rows).tolist())},
        ).start()
        self.watcher = threading.Thread(target=self._watch, daemon=True)
        self.watcher.start()
        # Before this stage nothing of the student's has run: whatever ends the child is the grader's.
        self.child.wait_for_message(lambda: "learner" in self.child.stages_reached, limits.startup_s * 10)
        if "learner" not in self.child.stages_reached:
            tail = self.child.output.text()[-1200:]
            self.close()
            raise LearnerFault(f"internal grader error (not your code): the learner's sandbox did not start:\n{tail}")
        # Replies come after the stage message (an error in the student's code may already be there).
        self.read = next((i + 1 for i, m in enumerate(list(self.child.messages)) if m.get("stage") == "learner"), 0)

    def _watch(self) -> None:
        self.outcome = self.child.wait(self.limits.episode_s, memory_mb=self.limits.memory_mb + BASE_RSS_MB,
                                       clock_starts_at="learner", startup_s=self.limits.startup_s)

    def _request(self, message: dict, expect: str, doing: str) -> dict:
        self.next_id += 1
        ident = self.next_id
        self.child.send({"id": ident, **message})

        def replied() -> bool:
            return len(self.child.messages) > self.read

        # The watcher ends the child at its limit; this wait only backs it up.
        arrived = self.child.wait_for_message(replied, self.limits.episode_s * 10 + self.limits.startup_s)
        if not arrived:
            self._ended(doing)
        reply = self.child.messages[self.read]
        self.read += 1
        kind = reply.get("kind")
        if kind in ("exception", "missing", "memory", "bad_features", "bad_scores"):
            raise LearnerFailure(_text(reply.get("message")))
        if kind == "stage":
            raise LearnerFailure("the learner's process sent the grader a message it did not ask for")
        if kind != expect or reply.get("id") != ident:
            raise LearnerFailure(f"the learner's process answered {doing} with something else than its answer "
                                 "(a forged or unasked message): nothing it sent is used")
        return reply

    def _ended(self, doing: str):
        """The child ended (or was ended) without answering: say why, as the student's or the grader's."""
        self.watcher.join(timeout=self.limits.episode_s * 20 + self.limits.startup_s)
        outcome = self.outcome
        if outcome is None:
            self.child.close()
            raise LearnerFault("internal grader error (not your code): the learner's process could not be waited for")
        # A last word on the channel (an exception while computing the features) is the clearest.
        for message in outcome.messages[self.read:]:
            if message.get("kind") in ("exception", "missing", "memory", "bad_features", "bad_scores"):
                raise LearnerFailure(_text(message.get("message")))
        if outcome.channel_overflow:
            raise LearnerFailure("the learner sent the grader more data than its answers can be (the channel was flooded)")
        if outcome.starved:
            raise LearnerFault(f"internal grader error (not your code): this machine kept the learner waiting for a CPU "
                               f"({outcome.runqueue_wait_s:.0f} s); grade again on a less busy machine")
        if outcome.timed_out:
            raise LearnerFailure(f"the learner did not finish {self.episode or 'its work'} within its {self.limits.episode_s:g} s "
                                 f"of CPU time (stuck {doing}: an endless loop, or a model too slow for a few hundred rows?)")
        if outcome.memory_exceeded:
            raise LearnerFailure(f"the learner used more than its {self.limits.memory_mb} MB of memory and was stopped ({doing})")
        if outcome.signal_name:
            raise LearnerFailure(f"the learner's process was killed by {outcome.signal_name} {doing} (a crash in native code?)")
        raise LearnerFailure(f"the learner's process ended (exit code {outcome.returncode}) {doing} without answering")

    def fit(self, indices: np.ndarray, seconds: np.ndarray) -> None:
        self._request({"fit": [int(i) for i in indices], "seconds": [float(s) for s in seconds]}, "fitted", "in Model.fit")

    def predict(self, indices: np.ndarray) -> np.ndarray:
        reply = self._request({"predict": [int(i) for i in indices]}, "scores", "in Model.predict")
        return check_scores(reply.get("scores"), len(indices))

    def close(self) -> None:
        self.child.kill()
        self.watcher.join(timeout=30)
        self.child.close()

    def __enter__(self) -> "LearnerChild":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
