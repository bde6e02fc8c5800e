"""The hub's parts without a hub: the demo authenticator, account names, the collect that refuses
a submission owned by someone else, the single-user environment's digests."""
from __future__ import annotations

import asyncio
import json
import os
import pwd
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.hub.accounts import load_accounts, valid_name
from autograder.hub.environment import dependencies_digest, package_digest
from autograder.hub.exchange import foreign_owner


def test_the_demo_authenticator_takes_each_accounts_own_password_only(tmp_path):
    from autograder.hub.auth import DemoAuthenticator

    accounts = load_accounts(tmp_path / "passwords.json", ["ada", "ben"], "prof")
    assert oct(os.stat(tmp_path / "passwords.json").st_mode & 0o777) == "0o600"
    auth = DemoAuthenticator(passwords_file=str(tmp_path / "passwords.json"))
    password = {a.name: a.password for a in accounts}

    def login(name, given):  # in a thread of its own: Playwright's loop may be running in this one
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, auth.authenticate(None, {"username": name, "password": given})).result()

    assert login("ada", password["ada"]) == "ada"
    assert login("ada", password["ben"]) is None and login("ada", "") is None and login("eve", password["ada"]) is None
    again = load_accounts(tmp_path / "passwords.json", ["ada", "ben"], "prof")  # a restarted hub keeps them
    assert {a.name: a.password for a in again} == password
    assert [a.line() for a in again] == [f"student: ada password: {password['ada']}", f"student: ben password: {password['ben']}",
                                         f"instructor: prof password: {password['prof']}"]
    assert json.loads((tmp_path / "passwords.json").read_text()) == password


@pytest.mark.parametrize("name, ok", [("ada", True), ("hubt-ada", True), ("a_b9", True), ("Ada", False),
                                      ("9ada", False), ("ada+x", False), ("a*", False), ("", False), ("a" * 33, False)])
def test_account_names_are_what_useradd_and_nbgrader_both_take(name, ok):
    assert valid_name(name) is ok


def test_a_submission_counts_only_when_everything_in_it_is_the_students(tmp_path):
    me = pwd.getpwuid(os.getuid()).pw_name
    folder = tmp_path / f"{me}+tiling+2026-01-01 00:00:00.000000 UTC+abc"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "tiling.ipynb").write_text("{}")
    assert foreign_owner(str(folder), me) is None
    assert foreign_owner(str(folder), "no-such-user-here") == "no such user"
    if os.geteuid() == 0:  # a file of another user's inside the folder
        nobody = pwd.getpwnam("nobody")
        os.chown(folder / "sub" / "tiling.ipynb", nobody.pw_uid, nobody.pw_gid)
        assert foreign_owner(str(folder), me) == "nobody"


def test_the_environment_is_rebuilt_for_new_pins_and_reinstalled_for_a_changed_package(tmp_path):
    (tmp_path / "autograder").mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    (tmp_path / "autograder" / "a.py").write_text("A = 1\n")
    deps, package = dependencies_digest(tmp_path), package_digest(tmp_path)
    (tmp_path / "autograder" / "a.py").write_text("A = 2\n")
    assert dependencies_digest(tmp_path) == deps and package_digest(tmp_path) != package
    (tmp_path / "pyproject.toml").write_text("[project]\nname='y'\n")
    assert dependencies_digest(tmp_path) != deps


def test_every_users_jupyterlab_has_the_news_off(tmp_path, monkeypatch):
    """Jupyter's news pop-up (issue 36, item 6): each user's server config turns off the news feed
    and the update check, and their page config the plugin that asks; JupyterLab reads them so."""
    from jupyterlab.labapp import LabApp
    from traitlets.config import Config

    from autograder.hub import classroom
    from autograder.hub.accounts import Account

    monkeypatch.setattr(Account, "home", property(lambda self: tmp_path / self.name))
    monkeypatch.setattr(Account, "uid", property(lambda self: os.getuid()))
    monkeypatch.setattr(Account, "gid", property(lambda self: os.getgid()))
    (tmp_path / "ada").mkdir()
    classroom.user_settings(Account("ada", "student", "pw"))
    server = json.loads((tmp_path / "ada" / ".jupyter" / "jupyter_server_config.json").read_text())
    page = json.loads((tmp_path / "ada" / ".jupyter" / "labconfig" / "page_config.json").read_text())
    assert page["disabledExtensions"]["@jupyterlab/apputils-extension:announcements"] is True
    app = LabApp(config=Config(server))
    assert app.news_url is None and app.check_for_updates_class.__name__ == "NeverCheckForUpdate"
