"""Kernels over Unix sockets in every Jupyter server where the package is installed.

ipykernel 7 warns at each start of a kernel that talks TCP without CurveZMQ keys ("Kernel is
running over TCP without encryption"), and a student can do nothing about it: JupyterLab and
its kernels share one machine and one user. `make lab` passes --KernelManager.transport=ipc; a
student of the edition runs a plain `jupyter lab`. So the wheel enables this module as a Jupyter
server extension ({sys.prefix}/etc/jupyter/jupyter_server_config.d/tvm-course.json, from the
repository's jupyter-config/, the way extensions enable themselves: a server reads those folders
for the extensions to enable, not for other settings), and when a server links its extensions,
before it makes its kernel manager, this sets `ServerKernelManager.transport = "ipc"`:

- for the kernels the server starts for notebooks and consoles (its ServerKernelManagers) and no
  others: not for a KernelManager that code inside the server makes for itself (nbgrader's
  formgrader autogrades through nbclient, whose kernels have no connection file to put their
  sockets beside, and run in another folder than the server's), nor for any program but a server
  (nbconvert, nbclient, nbgrader's commands, the class run: none of them reads this);
- each kernel's sockets are files beside its connection file, in the server's runtime folder (the
  user's own, 0700): `kernel-ID-ipc-1` to `-5`, removed when the kernel ends;
- unless the server's settings name a kernel manager's transport or ip (the user's choice stands),
  kernels run elsewhere (a gateway), zmq has no ipc (Windows), or a socket with the longest name a
  kernel's can have cannot be bound in the runtime folder (a path longer than the system allows,
  about 100 characters, or a file system without sockets): then kernels talk TCP, as before, and
  the server's log says why at debug level.
"""
from __future__ import annotations

import os
import socket
import uuid

# The kernel manager classes whose `transport` or `ip`, set anywhere in a server's settings, mean
# the user chose; any class named *KernelManager counts too.
_CONNECTION_CLASSES = ("ConnectionFileMixin",)
# A kernel's sockets: RUNTIME/kernel-<uuid4>-ipc-<N>, N from 1 (5 sockets); two digits to spare.
_LONGEST_SOCKET = "kernel-{id}-ipc-99"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "autograder.kernel_transport"}]


def _link_jupyter_server_extension(serverapp) -> None:
    """Before the server makes its kernel manager: kernels over ipc where they can be."""
    why_not = reason_to_keep_tcp(serverapp.config, serverapp.runtime_dir)
    if why_not:
        serverapp.log.debug("tvm-course: kernels talk TCP: %s", why_not)
        return
    from traitlets.config import Config

    serverapp.update_config(Config({"ServerKernelManager": {"transport": "ipc"}}))
    serverapp.log.debug("tvm-course: kernels talk over Unix sockets (ipc) in %s", serverapp.runtime_dir)


def _load_jupyter_server_extension(serverapp) -> None:
    """Nothing more to do once the server runs: linking set the transport."""


def reason_to_keep_tcp(config, runtime_dir: str) -> str:
    """Why the server's kernels should stay on TCP; '' where ipc will work."""
    for section, values in config.items():
        if (section.endswith("KernelManager") or section in _CONNECTION_CLASSES) and hasattr(values, "keys"):
            chosen = sorted({"transport", "ip"} & set(values.keys()))
            if chosen:
                return f"the settings choose {section}.{chosen[0]}"
    gateway = config["GatewayClient"].get("url") if "GatewayClient" in config else None
    if gateway or os.environ.get("JUPYTER_GATEWAY_URL"):
        return "kernels run behind a gateway"
    import zmq

    if not zmq.has("ipc") or not hasattr(socket, "AF_UNIX"):
        return "zmq has no ipc transport here"
    return socket_fits(runtime_dir)


def socket_fits(folder: str) -> str:
    """'' where a Unix socket with the longest name a kernel's can have binds in `folder`; else why
    not. Binding is what libzmq does with the same path, so it fails where a kernel would."""
    path = os.path.join(folder, _LONGEST_SOCKET.format(id=uuid.uuid4()))
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.bind(path)
    except OSError as error:
        return f"a kernel's socket cannot be made in {folder} ({len(os.fsencode(path))} bytes: {error})"
    else:
        os.unlink(path)
    finally:
        probe.close()
    return ""
