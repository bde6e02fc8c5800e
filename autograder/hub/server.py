"""Starting and stopping the course's JupyterHub (`tvm-course hub`, `make hub`).

prepare() does what needs root once per start (accounts, proxy, single-user environment, the
exchange, the instructor's course); Hub.start() runs JupyterHub with hub/jupyterhub_config.py
and returns once it answers; Hub.stop() stops it, and with it every user's server and the proxy.
"""
from __future__ import annotations

import json
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .accounts import (DEFAULT_INSTRUCTOR, DEFAULT_STUDENTS, Account, HubError, ensure_system_user, load_accounts,
                       require_root)
from .classroom import ensure_course, shell_path, ensure_exchange, hub_nbgrader_config, user_settings
from .environment import HUB_FILES, ensure_environment, ensure_proxy

DEFAULT_STATE = Path("/srv/tvm-course-hub")
DEFAULT_PORT = 8800
DEFAULT_ASSIGNMENTS = ("tiling", "cost-model")
CONFIG_FILE = HUB_FILES / "jupyterhub_config.py"


@dataclass
class HubSettings:
    state: Path = DEFAULT_STATE
    env: Path | None = None  # default: STATE/env
    port: int = DEFAULT_PORT  # 0: a free one
    students: list[str] = field(default_factory=lambda: list(DEFAULT_STUDENTS))
    instructor: str = DEFAULT_INSTRUCTOR
    # Released at each start (each once): the CPU assignments a student runs in their kernel on the hub.
    assignments: list[str] = field(default_factory=lambda: list(DEFAULT_ASSIGNMENTS))

    @property
    def env_dir(self) -> Path:
        return Path(self.env) if self.env else Path(self.state) / "env"

    @property
    def exchange(self) -> Path:
        return Path(self.state) / "exchange"

    @property
    def config_path(self) -> Path:
        return Path(self.state) / "etc" / "jupyter"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _port_taken(port: int) -> bool:
    with socket.socket() as probe:
        # As the proxy binds: connections of a stopped hub still in TIME_WAIT do not hold the port.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def user_environment(settings: HubSettings, account: Account) -> dict[str, str]:
    """What a user's server sees (hub/jupyterhub_config.py's Spawner.environment, plus the user's own)."""
    env = settings.env_dir
    return {"PATH": f"{env / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(account.home), "USER": account.name,
            "LOGNAME": account.name, "JUPYTER_CONFIG_PATH": str(settings.config_path),
            "TVM_COURSE_HUB_EXCHANGE": str(settings.exchange), "LANG": "C.UTF-8"}


def prepare(settings: HubSettings, log: Callable[[str], None]) -> list[Account]:
    require_root()
    state = Path(settings.state)
    state.mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o755)  # users' servers read the environment and the settings in it
    ensure_proxy(log)
    ensure_environment(settings.env_dir, log)
    accounts = load_accounts(state / "passwords.json", list(settings.students), settings.instructor)
    for account in accounts:
        ensure_system_user(account.name)
        user_settings(account)
        shell_path(account, settings.env_dir)
    ensure_exchange(settings.exchange)
    hub_nbgrader_config(settings.exchange, settings.config_path)
    instructor = accounts[-1]
    log(f"releasing {', '.join(settings.assignments)} as {instructor.name}")
    ensure_course(instructor, accounts[:-1], list(settings.assignments), settings.env_dir, user_environment(settings, instructor))
    return accounts


class Hub:
    def __init__(self, settings: HubSettings, accounts: list[Account], process: subprocess.Popen, port: int, log_path: Path):
        self.settings, self.accounts, self.process, self.port, self.log_path = settings, accounts, process, port, log_path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def account(self, name: str) -> Account:
        return next(a for a in self.accounts if a.name == name)

    @classmethod
    def start(cls, settings: HubSettings, log: Callable[[str], None] = lambda m: None, timeout: float = 120) -> "Hub":
        accounts = prepare(settings, log)
        state = Path(settings.state)
        port = settings.port or free_port()
        if _port_taken(port):
            raise HubError(f"port {port} on 127.0.0.1 is in use: stop what holds it or pass --port")
        hub_settings = {
            "state": str(state), "env": str(settings.env_dir), "port": port, "hub_port": free_port(),
            "proxy_api_port": free_port(), "proxy": str(ensure_proxy(log)),
            "passwords_file": str(state / "passwords.json"), "students": list(settings.students),
            "instructor": settings.instructor, "config_path": str(settings.config_path),
            "exchange": str(settings.exchange),
        }
        settings_file = state / "hub-settings.json"
        settings_file.write_text(json.dumps(hub_settings, indent=1), encoding="utf-8")
        log_path = state / "jupyterhub.log"
        env = {**os.environ, "TVM_COURSE_HUB_SETTINGS": str(settings_file),
               "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        with open(log_path, "ab") as out:
            process = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(CONFIG_FILE)], cwd=state, env=env,
                                       stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        hub = cls(settings, accounts, process, port, log_path)
        try:
            hub._wait_until_up(timeout)
        except BaseException:
            hub.stop()
            raise
        return hub

    def _wait_until_up(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HubError(f"JupyterHub exited ({self.process.returncode}); its log:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "hub/api/", timeout=5) as reply:
                    if reply.status == 200 and "version" in json.loads(reply.read()):
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.5)
        raise HubError(f"JupyterHub did not answer at {self.url} within {timeout:.0f} s; its log:\n{self.log_tail()}")

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def leftovers(self, grace: float = 15) -> list[str]:
        """Processes still running as a demo account after `grace` seconds (none once the hub has
        stopped cleanly: a kernel takes a moment to exit after its server)."""
        deadline = time.monotonic() + grace
        while (found := self._demo_processes()) and time.monotonic() < deadline:
            time.sleep(0.5)
        return found

    def _demo_processes(self) -> list[str]:
        import psutil

        uids = {pwd.getpwnam(a.name).pw_uid: a.name for a in self.accounts}
        found = []
        for proc in psutil.process_iter(["pid", "uids", "cmdline"]):
            try:
                if proc.info["uids"] and proc.info["uids"].real in uids and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(f"{proc.info['pid']} {uids[proc.info['uids'].real]}: {' '.join(proc.info['cmdline'] or [])[:120]}")
            except psutil.Error:
                continue
        return found

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM to JupyterHub, which stops the users' servers and the proxy; SIGKILL to its
        process group if it has not exited within `timeout`."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)

    def __enter__(self) -> "Hub":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def banner(self) -> str:
        return "\n".join([self.url, *(a.line() for a in self.accounts)])
