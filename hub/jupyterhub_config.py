"""JupyterHub configuration of the course's hub: `tvm-course hub` (`make hub`) starts JupyterHub
with this file, and the settings it has just prepared in $TVM_COURSE_HUB_SETTINGS (a JSON file in
the hub's state folder: ports, paths, accounts).

For a real server, keep the structure and change (docs/instructors.md, "The class on JupyterHub"):
- bind_url: the public https address (TLS here with c.JupyterHub.ssl_cert/ssl_key, or behind
  a reverse proxy that terminates TLS);
- the authenticator: the institution's sign-in (OAuthenticator, LDAPAuthenticator) or the LMS's
  LTI 1.3 launch (jupyterhub-ltiauthenticator), so that hub user names are the student ids;
- the spawner: DockerSpawner or KubeSpawner with an image holding the course's wheel in place of
  LocalProcessSpawner and system users, with the exchange mounted at the same path in every
  container (and each user's uid kept, since nbgrader's exchange relies on file ownership);
- limits: c.Spawner.mem_limit / cpu_limit (they need a spawner that enforces them), idle culling
  (jupyterhub-idle-culler as a service).
"""
import json
import os

settings = json.load(open(os.environ["TVM_COURSE_HUB_SETTINGS"], encoding="utf-8"))
state, env = settings["state"], settings["env"]

c = get_config()  # noqa: F821 (JupyterHub provides it)

# Loopback only: a demo and a test, never reachable from another machine.
c.JupyterHub.bind_url = f"http://127.0.0.1:{settings['port']}/"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{settings['hub_port']}"
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(state, "jupyterhub-proxy.pid")
c.JupyterHub.db_url = "sqlite:///" + os.path.join(state, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(state, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(state, "jupyterhub.pid")
# Stopping the hub stops every user's server and the proxy with it.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# Demo accounts: passwords in a root-only file (autograder/hub/auth.py). The instructor is the
# hub's admin; nobody else may log in.
c.JupyterHub.authenticator_class = "autograder.hub.auth.DemoAuthenticator"
c.DemoAuthenticator.passwords_file = settings["passwords_file"]
c.Authenticator.allowed_users = set(settings["students"]) | {settings["instructor"]}
c.Authenticator.admin_users = {settings["instructor"]}

# Each user's server runs as that user's system account (LocalProcessSpawner, as root), in the
# single-user environment with the course's wheel, in their own home.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [os.path.join(env, "bin", "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {
    "PATH": os.path.join(env, "bin") + ":/usr/local/bin:/usr/bin:/bin",
    # The hub-wide nbgrader settings: the shared exchange, the course id.
    "JUPYTER_CONFIG_PATH": settings["config_path"],
    "TVM_COURSE_HUB_EXCHANGE": settings["exchange"],
}
# A cold server imports jupyterlab and nbgrader; on a loaded two-core machine that takes a while.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
