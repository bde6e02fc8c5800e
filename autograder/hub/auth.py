"""A password authenticator for the demo hub and its tests: each account's password is in a file
only root can read (written by autograder.hub.accounts), compared in constant time.

A real deployment replaces it (c.JupyterHub.authenticator_class): the institution's own sign-in
(OAuthenticator for an OIDC/SAML identity provider, LDAPAuthenticator) or the LMS's LTI 1.3
launch (jupyterhub-ltiauthenticator), so that the hub user name is the student id nbgrader and the
variants use.
"""
from __future__ import annotations

import hmac
import json
from pathlib import Path

from jupyterhub.auth import Authenticator
from traitlets import Unicode


class DemoAuthenticator(Authenticator):
    passwords_file = Unicode(help="JSON object: user name -> password (mode 600)").tag(config=True)

    def _passwords(self) -> dict[str, str]:
        return json.loads(Path(self.passwords_file).read_text(encoding="utf-8"))

    async def authenticate(self, handler, data):
        name, given = (data or {}).get("username", ""), (data or {}).get("password", "")
        expected = self._passwords().get(name)
        if expected is None or not hmac.compare_digest(expected.encode(), str(given).encode()):
            self.log.warning("failed login for %r", name)
            return None
        return name
