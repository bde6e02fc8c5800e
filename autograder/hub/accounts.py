"""The demo hub's accounts: a system user for each (the hub spawns every server as its user, so
students' files are theirs alone), and a password for the hub's login.

Creating users needs root. Accounts this module creates carry COMMENT in their GECOS field; a
system user of the same name that does not is someone else's, and is never touched.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import TvmCourseError

COMMENT = "tvm-course hub demo account"
DEFAULT_STUDENTS = ("ada", "ben")
# The demo class's roster: the names nbgrader's formgrader lists (a student without any is "None, None").
# A real course enrols its class from the LMS's export instead (`tvm-course roster`).
DEMO_NAMES = {"ada": ("Ada", "Lovelace"), "ben": ("Ben", "Babbage")}
DEFAULT_INSTRUCTOR = "instructor"


class HubError(RuntimeError, TvmCourseError):
    """The hub cannot be set up or started; the message says what is needed."""


@dataclass(frozen=True)
class Account:
    name: str
    role: str  # "student" or "instructor"
    password: str

    @property
    def home(self) -> Path:
        return Path(pwd.getpwnam(self.name).pw_dir)

    @property
    def uid(self) -> int:
        return pwd.getpwnam(self.name).pw_uid

    @property
    def gid(self) -> int:
        return pwd.getpwnam(self.name).pw_gid

    def line(self) -> str:
        return f"{self.role}: {self.name} password: {self.password}"


def require_root(what: str = "the hub") -> None:
    if os.geteuid() != 0:
        raise HubError(f"{what} needs root: it creates a system user per demo account and spawns each "
                       "user's server as that user (run `sudo make hub`, or as root in a container)")
    missing = [tool for tool in ("useradd", "userdel") if shutil.which(tool) is None]
    if missing:
        raise HubError(f"{', '.join(missing)} not found: install the system's user tools (Debian: passwd)")


def valid_name(name: str) -> bool:
    # What useradd accepts and nbgrader can put in an exchange file name (no '+', no '*').
    return re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", name) is not None


def ensure_system_user(name: str) -> None:
    """Create `name` (home 700: no other student may read it) unless it is already one of ours."""
    if not valid_name(name):
        raise HubError(f"{name!r} cannot be an account name: lower-case letters, digits, '-' and '_', starting with a letter")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        done = subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", COMMENT, name],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise HubError(f"useradd {name} failed: {done.stderr.strip()}") from None
        entry = pwd.getpwnam(name)
    else:
        if entry.pw_gecos.split(",")[0] != COMMENT:
            raise HubError(f"a system user {name!r} exists and is not a demo account of this hub: choose other names")
    # useradd's HOME_MODE follows UMASK (022 on Debian): a home everybody may read.
    os.chmod(entry.pw_dir, 0o700)


def remove_system_user(name: str) -> None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return
    if entry.pw_gecos.split(",")[0] != COMMENT:
        raise HubError(f"{name!r} is not a demo account of this hub: left alone")
    subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)


def load_accounts(passwords_file: Path, students: list[str], instructor: str) -> list[Account]:
    """The accounts, with the passwords kept in `passwords_file` (new ones made for new names),
    so a restarted hub takes the same passwords."""
    names = [*students, instructor]
    if len(set(names)) != len(names):
        raise HubError(f"account names must differ: {', '.join(names)}")
    known = json.loads(passwords_file.read_text(encoding="utf-8")) if passwords_file.is_file() else {}
    passwords = {name: known.get(name) or secrets.token_urlsafe(9) for name in names}
    fd = os.open(passwords_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(passwords, handle, indent=1)
    os.chmod(passwords_file, 0o600)
    return [Account(name, "student", passwords[name]) for name in students] + \
        [Account(instructor, "instructor", passwords[instructor])]
