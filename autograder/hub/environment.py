"""What the hub runs: the single-user environment every user's server and kernels run in, built
as a real deployment builds its image (a venv with the course's wheel, JupyterHub's single-user
server and nbgrader), and the proxy (configurable-http-proxy, from hub/package-lock.json).

The environment lives outside the clone, where every user may read it (a clone is often in a
folder only its owner may enter), and is rebuilt only when the package's source or pins change.
Its Python is the system's where the project's is not reachable by every user (a pyenv build
under /root); the wheel pins the course's direct dependencies, and JupyterHub is pinned to the
hub's own version.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

from .accounts import HubError

REPO_ROOT = Path(__file__).resolve().parents[2]
HUB_FILES = REPO_ROOT / "hub"
PROXY_BIN = HUB_FILES / "node_modules" / ".bin" / "configurable-http-proxy"
STAMP = ".tvm-course-env"


def _digest(paths: list[Path], *extra: str, root: Path = REPO_ROOT) -> str:
    digest = hashlib.sha256("\0".join(extra).encode())
    for path in paths:
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def dependencies_digest(root: Path = REPO_ROOT) -> str:
    """What the environment's dependencies follow: the pins, this Python, the hub's version."""
    return _digest([root / "pyproject.toml"], sys.version, importlib.metadata.version("jupyterhub"), root=root)


def package_digest(root: Path = REPO_ROOT) -> str:
    """The package's own files and the Jupyter settings the wheel installs: a change reinstalls only the wheel."""
    return _digest(sorted((root / "autograder").rglob("*")) + sorted((root / "jupyter-config").rglob("*")), root=root)


def _run(command: list[str], what: str, **kwargs) -> str:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise HubError(f"{what} failed ({' '.join(command[:4])} ...):\n{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout


def reachable_by_all(path: Path) -> bool:
    """Whether any user may run `path`: every folder above it searchable by others."""
    real = Path(os.path.realpath(path))
    return all(os.stat(p).st_mode & 0o001 for p in real.parents) and bool(os.stat(real).st_mode & 0o001)


def base_interpreter() -> Path:
    """The Python the environment is made from: this one if every user may run it, else the
    system's Python of the same version (a pyenv build under /root is root's alone)."""
    candidates = [Path(getattr(sys, "_base_executable", sys.executable)),
                  Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")]
    for candidate in candidates:
        if candidate.exists() and reachable_by_all(candidate):
            return candidate
    raise HubError(f"no Python {sys.version_info.major}.{sys.version_info.minor} that every user may run: "
                   f"{candidates[0]} is in a folder only its owner may enter; install the system's "
                   f"(Debian: apt-get install python{sys.version_info.major}.{sys.version_info.minor}-venv)")


def ensure_proxy(log: Callable[[str], None]) -> Path:
    """configurable-http-proxy, installed with `npm ci` from the lock file in hub/."""
    lock, installed = HUB_FILES / "package-lock.json", HUB_FILES / "node_modules" / ".package-lock.json"
    if PROXY_BIN.exists() and installed.is_file() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return PROXY_BIN
    if shutil.which("npm") is None:
        raise HubError("npm not found: the hub's proxy (configurable-http-proxy) installs with npm "
                       "(Debian: apt-get install nodejs npm)")
    log("installing configurable-http-proxy (npm ci in hub/)")
    _run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], "npm ci", cwd=HUB_FILES)
    return PROXY_BIN


def ensure_environment(env: Path, log: Callable[[str], None]) -> Path:
    """The single-user venv at `env` with the course's wheel and jupyterhub: built when missing or
    when the pins changed; the wheel alone reinstalled when only the package changed."""
    deps, package = dependencies_digest(), package_digest()
    stamp = env / STAMP
    built = stamp.read_text().split() if stamp.is_file() else []
    fresh = not (built[:1] == [deps] and (env / "bin" / "jupyterhub-singleuser").exists())
    if not fresh and built[1:2] == [package]:
        return env
    from ..edition.build import build_wheel

    if fresh:
        if env.exists():
            shutil.rmtree(env)
        env.parent.mkdir(parents=True, exist_ok=True)
        log(f"building the single-user environment in {env} (once; a minute or two)")
        _run([str(base_interpreter()), "-m", "venv", str(env)], "python -m venv")
        # The system's pip may be years old (Debian 12: 23.0), too old for these pins' metadata.
        _run([str(env / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", "--upgrade",
              f"pip=={importlib.metadata.version('pip')}"], "pip install --upgrade pip")
    with tempfile.TemporaryDirectory(prefix="tvm-course-hub-") as scratch_name:
        wheel = build_wheel(REPO_ROOT, Path(scratch_name), "The tvm-course package, for the course's JupyterHub.\n", log)
        pip = [str(env / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check"]
        if fresh:
            log("installing the course's wheel, JupyterHub's single-user server and nbgrader into it")
            _run([*pip, str(wheel), f"jupyterhub=={importlib.metadata.version('jupyterhub')}"], "pip install")
            _run([str(env / "bin" / "python"), "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3",
                  "--display-name", "Python 3 (tvm-course)"], "ipykernel install")
        else:
            log(f"the package changed: reinstalling its wheel in {env}")
            _run([*pip, "--no-deps", "--force-reinstall", str(wheel)], "pip install (the wheel)")
    _readable_by_all(env)
    stamp.write_text(f"{deps} {package}\n")
    return env


def _readable_by_all(tree: Path) -> None:
    # Every user's server runs from it: a umask of 077 (some root shells) would lock them out.
    for dirpath, _, filenames in os.walk(tree):
        os.chmod(dirpath, os.stat(dirpath).st_mode | 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, mode | 0o444 | (0o111 if mode & 0o100 else 0))
