"""The class on a real JupyterHub on 127.0.0.1 (`tvm-course hub`, `make hub`): demo accounts, each
user's server spawned as that user from a single-user environment with the course's wheel,
nbgrader's Assignments and Formgrader, and a shared exchange.

accounts: the demo users (system accounts, passwords); auth: the hub's demo authenticator;
environment: the single-user environment and the proxy; classroom: the exchange, the instructor's
course and each user's Jupyter settings; exchange: nbgrader's collect, closed to forged
submissions; server: starting and stopping the hub. The hub's own configuration is
hub/jupyterhub_config.py in the repository.
"""
