"""The class on the hub: the shared exchange with nbgrader's documented permissions, the
hub-wide nbgrader settings, each user's Jupyter settings (students get the Assignments tab, the
instructor the Formgrader too), and the instructor's course root with the assignments released.

Run as root by autograder.hub.server; `python -m autograder.hub.classroom release ROOT
ASSIGNMENT[,ASSIGNMENT...] STUDENT...` is the part that runs as the instructor, in the
single-user environment.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .accounts import DEMO_NAMES, Account, HubError

COURSE_ID = "tvm-course"
COURSE_FOLDER = "tvm-course"  # in the instructor's home
# nbgrader's default is 100 MB a file; a notebook of this course is well under 1 MB.
MAX_FILE_KB = 5000
STUDENT_ONLY_OFF = {
    "server": ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"],
    "lab": ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:create-assignment"],
}

# JupyterLab's news: every new user is asked whether to fetch Jupyter's announcements (a pop-up
# on their first page, which a class of new users meets at once), and the server checks PyPI for
# updates nobody on the hub can install. Off: no news feed, no update check, no plugin asking.
LAB_SETTINGS = {"news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}
LAB_OFF = ["@jupyterlab/apputils-extension:announcements"]


def hub_nbgrader_config(exchange: Path, config_dir: Path) -> Path:
    """nbgrader settings every user's server and kernels read ($JUPYTER_CONFIG_PATH points here)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(config_dir, 0o755)
    path = config_dir / "nbgrader_config.py"
    path.write_text(
        "# Written by tvm-course hub (autograder/hub/classroom.py): the hub's shared exchange.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.CourseDirectory.max_file_size = {MAX_FILE_KB}  # KB; larger files are left out of a submission\n"
        "# A submission is collected only when it belongs to the student it names.\n"
        "c.ExchangeFactory.collect = 'autograder.hub.exchange.OwnerCheckedCollect'\n"
        "# Released feedback readable by the student it is for (the course writes it owner-only).\n"
        "c.ExchangeFactory.release_feedback = 'autograder.hub.exchange.ReadableReleaseFeedback'\n",
        encoding="utf-8")
    os.chmod(path, 0o644)
    return path


def ensure_exchange(exchange: Path) -> None:
    # As nbgrader's documentation sets it up: everyone may create their course's folder in it.
    exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(exchange, 0o777)


def _write_as(account: Account, path: Path, text: str, mode: int = 0o644) -> None:
    for parent in reversed([p for p in path.parents if account.home in p.parents or p == account.home]):
        if not parent.exists():
            parent.mkdir()
            os.chown(parent, account.uid, account.gid)
    path.write_text(text, encoding="utf-8")
    os.chown(path, account.uid, account.gid)
    os.chmod(path, mode)


def user_settings(account: Account) -> None:
    """Which of nbgrader's extensions the user's server loads (nbgrader's JupyterHub guide)."""
    jupyter = account.home / ".jupyter"
    off_server = STUDENT_ONLY_OFF["server"] if account.role == "student" else []
    off_lab = STUDENT_ONLY_OFF["lab"] if account.role == "student" else []
    server: dict[str, object] = {"jpserver_extensions": {name: False for name in off_server}}
    if account.role == "instructor":
        # JupyterHub's single-user servers forbid every frame (CSP frame-ancestors 'none'), and so
        # JupyterLab's Nbgrader > Formgrader, an iframe of the instructor's own server, shows
        # "refused to connect". 'self' lets the same origin frame it: on this demo's one origin that
        # is the whole hub; a real hub gives each user an origin of their own (c.JupyterHub.subdomain_host).
        server["tornado_settings"] = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
    _write_as(account, jupyter / "jupyter_server_config.json", json.dumps({"ServerApp": server, "LabApp": LAB_SETTINGS}, indent=1))
    _write_as(account, jupyter / "labconfig" / "page_config.json",
              json.dumps({"disabledExtensions": {name: True for name in [*off_lab, *LAB_OFF]}}, indent=1))
    if account.role == "instructor":
        _write_as(account, jupyter / "nbgrader_config.py",
                  "c = get_config()  # noqa: F821\n"
                  f"c.CourseDirectory.root = {str(account.home / COURSE_FOLDER)!r}\n")


PROFILE_MARK = "# tvm-course hub: the single-user environment's commands (tvm-course, nbgrader)"


def shell_path(account: Account, env: Path) -> None:
    """A terminal on the hub is a login shell, and Debian's /etc/profile resets PATH: put the
    environment's bin/ back in front in the user's ~/.profile."""
    profile = account.home / ".profile"
    text = profile.read_text(encoding="utf-8") if profile.is_file() else ""
    if PROFILE_MARK not in text:
        _write_as(account, profile, text + f"\n{PROFILE_MARK}\nPATH=\"{env / 'bin'}:$PATH\"\n")


def ensure_course(instructor: Account, students: list[Account], assignments: list[str], env: Path, user_env: dict) -> Path:
    """The instructor's course root (a copy of the repository's course/ with a secret of its own),
    the students enrolled, and each of `assignments` generated and released to the exchange."""
    from ..rehearsal.scratch_course import BUNDLED_COURSE, copy_course

    root = instructor.home / COURSE_FOLDER
    if not (root / "nbgrader_config.py").is_file():
        copy_course(BUNDLED_COURSE, root)
        for dirpath, _, filenames in os.walk(root):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in filenames)]:
                os.chown(name, instructor.uid, instructor.gid)
        os.chmod(root, 0o700)
    done = subprocess.run([str(env / "bin" / "python"), "-m", "autograder.hub.classroom", "release", str(root),
                           ",".join(assignments), *(s.name for s in students)],
                          cwd=root, env=user_env, user=instructor.uid, group=instructor.gid, extra_groups=[],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise HubError(f"releasing {', '.join(assignments)} as {instructor.name} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return root


def _release(root: Path, assignments: list[str], students: list[str]) -> int:
    """As the instructor: enrol, then each assignment generated (variants.json for the class) and
    released, unless it is released already to these students."""
    from nbgrader.api import Gradebook

    from ..course.course_dir import course_directory, load_course_config
    from ..lms.roster import enrol
    from ..rehearsal.scratch_course import release_assignment

    coursedir = course_directory(load_course_config(root))
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        known = {s.id for s in gradebook.students}
    # the demo's roster, as `tvm-course roster` enrols a real class: ids and names
    enrol(coursedir, [{"id": name, **dict(zip(("first_name", "last_name"), DEMO_NAMES.get(name, (name.capitalize(), "(demo)"))))}
                      for name in students])
    nbgrader = Path(sys.executable).parent / "nbgrader"
    for assignment in assignments:
        exchange_copy = Path(os.environ.get("TVM_COURSE_HUB_EXCHANGE", "")) / COURSE_ID / "outbound" / assignment
        if set(students) <= known and exchange_copy.is_dir():
            continue
        release_assignment(root, assignment, students=students)
        done = subprocess.run([str(nbgrader), "release_assignment", assignment, "--force"], cwd=root, capture_output=True, text=True)
        print(done.stdout + done.stderr)
        if done.returncode != 0:
            return done.returncode
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "release":
        sys.exit(_release(Path(sys.argv[2]), [name for name in sys.argv[3].split(",") if name], sys.argv[4:]))
    print("usage: python -m autograder.hub.classroom release ROOT ASSIGNMENT[,ASSIGNMENT...] STUDENT...", file=sys.stderr)
    sys.exit(2)
