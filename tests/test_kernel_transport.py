"""A student's own `jupyter lab` starts kernels over Unix sockets, without ipykernel's warning that
their TCP connection is not encrypted (issue 37): the wheel enables autograder/kernel_transport.py
in every Jupyter server of the environment it is installed in (jupyter-config/, installed into
{sys.prefix}/etc/jupyter), which sets the transport of the server's own kernels only.

The servers here are Jupyter servers as `jupyter lab` makes them (ServerApp, its extensions found
on the config path and linked), without the web server: a kernel is started, runs code and is
shut down. The last test installs the wheel, as built for the student edition, into a venv that
has every dependency already (through a .pth: no download), and starts a server from there.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from traitlets.config import Config

from autograder import kernel_transport
from autograder.edition import build as student_edition

ROOT = Path(__file__).resolve().parents[1]
JUPYTER_CONFIG = ROOT / "jupyter-config"
SERVER_CONFIG = "jupyter_server_config.d/tvm-course.json"
WARNING = "without encryption"

# In a fresh interpreter: a Jupyter server (no web server) with the arguments given, one kernel
# started by it that prints, and the transport a KernelManager made by other code in the server
# gets (nbgrader's formgrader autogrades through nbclient with the server's settings).
SERVER = r"""
import json, os, sys
from jupyter_client.manager import AsyncKernelManager
from jupyter_server.serverapp import ServerApp

app = ServerApp()
app.initialize(argv=["--ServerApp.open_browser=False", "--ServerApp.port=0", *sys.argv[1:]], new_httpserver=False)
extensions = sorted(name for name, on in app.jpserver_extensions.items() if on)

async def run():
    kernel_id = await app.kernel_manager.start_kernel(kernel_name="python3")
    manager = app.kernel_manager.get_kernel(kernel_id)
    client = manager.client()
    client.start_channels()
    printed = []
    try:
        await client.wait_for_ready(timeout=60)
        def hook(message):
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])
        await client.execute_interactive("print(6 * 7)", output_hook=hook, timeout=60)
    finally:
        client.stop_channels()
    sockets = sorted(name for name in os.listdir(app.runtime_dir) if name.startswith(f"kernel-{kernel_id}-ipc"))
    info = manager.get_connection_info()
    await app.kernel_manager.shutdown_all()
    left = sorted(name for name in os.listdir(app.runtime_dir) if name.startswith(f"kernel-{kernel_id}"))
    return {"extensions": extensions, "transport": info["transport"], "ip": info["ip"], "printed": "".join(printed),
            "sockets": sockets, "left": left, "runtime_dir": app.runtime_dir,
            "other_code": AsyncKernelManager(config=app.config).transport}

print("RESULT " + json.dumps(app.io_loop.run_sync(run, timeout=120)))
"""


@pytest.fixture
def short(tmp_path):
    """A folder with a path short enough for a kernel's sockets (pytest's tmp_path is not: 60 bytes
    and more, where a socket's name may have about 107 with the kernel's 50)."""
    folder = tempfile.mkdtemp(prefix="kt-", dir="/tmp" if os.path.isdir("/tmp") else None)
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def _jupyter_env(home: Path, runtime: Path, **extra) -> dict:
    """This user's Jupyter settings out of the way (a home of the test's own), and a runtime folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "VIRTUAL_ENV", "PYTHON"))}
    env.update(HOME=str(home), JUPYTER_RUNTIME_DIR=str(runtime), **extra)
    return env


def _serve(python: str, env: dict, *args: str) -> tuple[dict, str]:
    done = subprocess.run([python, "-c", SERVER, *args], capture_output=True, text=True, env=env, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):]), done.stderr


# ---------------------------------------------------------------------------- when ipc, when not


def test_ipc_where_a_kernels_socket_can_be_made(short):
    assert kernel_transport.reason_to_keep_tcp(Config(), str(short)) == ""
    assert list(short.iterdir()) == []  # the probe's socket is gone


@pytest.mark.parametrize("setting", [
    {"KernelManager": {"transport": "tcp"}},
    {"ServerKernelManager": {"ip": "127.0.0.1"}},
    {"ConnectionFileMixin": {"transport": "tcp"}},
])
def test_the_users_own_transport_or_ip_stands(tmp_path, setting):
    assert "the settings choose" in kernel_transport.reason_to_keep_tcp(Config(setting), str(tmp_path))


def test_kernels_behind_a_gateway_are_left_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTER_GATEWAY_URL", raising=False)
    assert "gateway" in kernel_transport.reason_to_keep_tcp(Config({"GatewayClient": {"url": "http://g:8888"}}), str(tmp_path))
    monkeypatch.setenv("JUPYTER_GATEWAY_URL", "http://g:8888")
    assert "gateway" in kernel_transport.reason_to_keep_tcp(Config(), str(tmp_path))


def test_tcp_where_the_runtime_folders_path_is_too_long_for_a_socket(short):
    """A home deep enough, or a user name long enough (a hub's LTI ids), and a kernel's socket
    path passes the ~107 bytes a Unix socket's name may have: libzmq would refuse to bind it."""
    deep = short / ("d" * 60)
    deep.mkdir()
    why = kernel_transport.reason_to_keep_tcp(Config(), str(deep))
    assert "cannot be made" in why and str(deep) in why
    assert list(deep.iterdir()) == []


# ---------------------------------------------------------------------------- a server, a kernel


@pytest.mark.slow
def test_a_server_with_the_config_runs_its_kernels_over_ipc_without_the_warning(tmp_path, short):
    """The repository's jupyter-config/ on the config path, as {sys.prefix}/etc/jupyter is once the
    wheel is installed; the control, with the transport set to tcp by the user, still warns."""
    env = _jupyter_env(tmp_path, short, JUPYTER_CONFIG_PATH=str(JUPYTER_CONFIG))
    result, stderr = _serve(sys.executable, env)
    assert "autograder.kernel_transport" in result["extensions"]
    assert result["transport"] == "ipc" and result["printed"] == "42\n"
    assert result["ip"].startswith(result["runtime_dir"] + os.sep)  # beside the connection file, the user's own
    assert len(result["sockets"]) == 5 and result["left"] == []
    assert result["other_code"] == "tcp"  # nbclient in the server (formgrader) keeps TCP: no connection file to sit beside
    assert WARNING not in stderr

    control, stderr = _serve(sys.executable, env, "--KernelManager.transport=tcp")
    assert control["transport"] == "tcp" and control["printed"] == "42\n"
    assert WARNING in stderr  # the warning is there to be seen where ipc is not used


@pytest.mark.slow
def test_the_wheel_installs_the_config_where_its_environments_servers_find_it(tmp_path, short):
    wheel = student_edition.build_wheel(ROOT, tmp_path, "# tvm-course\n", log=lambda line: None)
    member = f"tvm_course-{student_edition.package_version(ROOT)}.data/data/etc/jupyter/{SERVER_CONFIG}"
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(member) == (JUPYTER_CONFIG / SERVER_CONFIG).read_bytes()
        assert "autograder/kernel_transport.py" in archive.namelist()

    # A venv that sees the test environment's packages (no download), then the wheel alone.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_packages = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (next(venv.glob("lib/python*/site-packages")) / "test-environment.pth").write_text(site_packages + "\n")
    python = str(venv / "bin" / "python")
    env = _jupyter_env(tmp_path / "home", short)
    (tmp_path / "home").mkdir()
    done = subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (venv / "etc" / "jupyter" / SERVER_CONFIG).is_file()

    result, stderr = _serve(python, env)
    assert "autograder.kernel_transport" in result["extensions"]
    assert result["transport"] == "ipc" and result["printed"] == "42\n" and result["left"] == []
    assert WARNING not in stderr
