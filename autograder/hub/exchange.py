"""nbgrader's collect for a shared exchange where students are system users: a submission counts
only when its folder and every file in it belong to the student it names.

nbgrader's inbound folder is writable by every student (mode 733), and a submission is a folder
named STUDENT+ASSIGNMENT+TIMESTAMP+RANDOM made mode 777; nbgrader's own collect only warns when
the owner is not STUDENT (CollectApp.check_owner), and collects it anyway. So any student could
hand in work under a classmate's name, with a later timestamp that hides the real one. Here such
a folder is left in inbound, with an error in the log, and the student's own latest submission
is collected instead. Set in the hub's nbgrader config: c.ExchangeFactory.collect.
"""
from __future__ import annotations

import glob
import os
import pwd

from nbgrader.exchange.default.collect import ExchangeCollect, groupby

from ..course.feedback_release import CourseReleaseFeedback


def foreign_owner(folder: str, student: str) -> str | None:
    """The first owner other than `student` of the folder or anything in it, else None."""
    try:
        uid = pwd.getpwnam(student).pw_uid
    except KeyError:
        return "no such user"
    for dirpath, dirnames, filenames in os.walk(folder):
        for path in [dirpath, *(os.path.join(dirpath, name) for name in dirnames + filenames)]:
            owner = os.lstat(path).st_uid
            if owner != uid:
                try:
                    return pwd.getpwuid(owner).pw_name
                except KeyError:
                    return f"uid {owner}"
    return None


class OwnerCheckedCollect(ExchangeCollect):
    def init_src(self):
        super().init_src()
        student_id = self.coursedir.student_id if self.coursedir.student_id else "*"
        pattern = os.path.join(self.inbound_path, f"{student_id}+{self.coursedir.assignment_id}+*")
        records = []
        for path in glob.glob(pattern):
            record = self._path_to_record(path)
            owner = foreign_owner(path, record["username"])
            if owner is None:
                records.append(record)
            else:
                self.log.error("not collected: %s claims to be %s's but belongs to %s", path, record["username"], owner)
        chosen = []
        for group in groupby(records, lambda item: item["username"]).values():
            ordered = self._sort_by_timestamp(group)
            if self.duedate is not None and self.before_duedate:
                ordered = [r for r in ordered if r["timestamp"] <= self.duedate] or ordered
            chosen.append(ordered[0])
        self.src_records = chosen


class ReadableReleaseFeedback(CourseReleaseFeedback):
    """The course's release_feedback (autograder/course/feedback_release.py): only finished
    feedback, and the released pages readable by the students they are for (the course writes
    feedback owner-only). Set in the hub's nbgrader config (c.ExchangeFactory.release_feedback);
    the course's nbgrader_config.py sets CourseReleaseFeedback itself, which wins in the course root."""
