# Everything builds its own .venv on first use; `make test` is what CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Student copies of the quizzes: what students take (quizzes/ holds the instructor copies, with the answers).
STUDENT_QUIZZES ?= build/student-quizzes

.PHONY: demo test hub-check lab site hub student-quizzes student-edition student-edition-check clean

# jsonschema's optional IRI format checker (rfc3987-syntax, pulled in by jupyter-events) builds
# 35 Earley parsers whenever nbformat is imported: 0.8 s of CPU in each of the suite's hundreds of
# nbgrader, kernel and grading processes (jsonschema issue 1428). No notebook or course schema
# checks an IRI, and without it jsonschema skips that format; a student's install keeps it.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test,hub]"
	$(BIN)/pip uninstall --quiet --yes rfc3987-syntax
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (tvm-course)" >/dev/null
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/tvm-course demo

# Everything but the class on a real JupyterHub (tests/hub: `make hub-check`, which CI runs too):
# the hub's single-user environment takes 3-4 minutes to build on a fresh machine, and its
# tests 2-3 more, which would put `make test` past 20 minutes on 2 cores.
# TEST_WORKERS test files run at a time (pytest-xdist, a file's tests together, so that its course
# fixtures are built once; in collection order, the class runs of tests/course first, so that no
# long file is left to run alone at the end). The suite waits more than it computes (kernels,
# nbgrader, browsers, hostile code's time limits): one process kept 2 cores 0.7 busy, three keep
# them about 1.0 busy. The tests marked `alone` load the machine on purpose (run-queue hogs, a
# never-ending OpenCL kernel, a spinning neighbour) and judge what the grader makes of that load,
# or need a timing no other test shares a core with: they run afterwards, with nothing beside them.
TEST_WORKERS ?= 3
# The second phase collects only the files that hold `alone` tests (tests/conftest.py refuses an
# `alone` test in a file that does not say `mark.alone`): collecting all of the suite again for
# them would cost some 20 s.
ALONE_FILES = $(shell grep -rl --include='test_*.py' 'mark\.alone' tests)
PYTEST_PARALLEL := $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)
# The linter and the type checker first (ruff, then mypy on the engine and the class run: pyproject.toml's
# [tool.ruff] and [tool.mypy]): what they find fails `make test` before any test runs.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	status=0; \
	$(BIN)/python -m pytest --ignore=tests/hub -m "not alone" $(PYTEST_PARALLEL) || status=$$?; \
	$(BIN)/python -m pytest --ignore=tests/hub -m alone $(ALONE_FILES) || status=$$?; \
	exit $$status

# The class on a real JupyterHub in Chromium: two students and the instructor (tests/hub/; root,
# npm and Chromium, or it skips saying why). Minutes; .ci/run runs it after `make test`.
hub-check: $(STAMP)
	$(BIN)/python -m pytest tests/hub

# Kernels over Unix sockets (ipc): over TCP, ipykernel warns at every start that the connection is
# not encrypted, which nobody here can act on (the kernel and JupyterLab share one machine and user).
# An installed wheel sets it for its environment's servers (autograder/kernel_transport.py, enabled
# by a data file); an editable install (this .venv) installs no data files, hence the flag.
lab: $(STAMP)
	$(BIN)/jupyter lab --KernelManager.transport=ipc lessons/

# The course website: executes the lessons (cached), then serves it on 127.0.0.1.
site: $(STAMP)
	$(BIN)/tvm-course site build
	$(BIN)/tvm-course site serve

# The class on a real JupyterHub on 127.0.0.1 (needs root: a system user per demo account): prints
# its address and the accounts, runs until Ctrl-C. HUB_PORT, HUB_STATE: see `tvm-course hub --help`.
HUB_PORT ?= 8800
HUB_STATE ?= /srv/tvm-course-hub
hub: $(STAMP)
	$(BIN)/tvm-course hub --port $(HUB_PORT) --state $(HUB_STATE)

# Student copies of every quiz, to hand out: answers replaced by salted hashes (`tvm-course quiz
# release`). Students take them with `tvm-course quiz take build/student-quizzes/QUIZ.yaml`.
student-quizzes: $(STAMP)
	mkdir -p $(STUDENT_QUIZZES)
	for quiz in quizzes/*.yaml; do \
		$(BIN)/tvm-course quiz release "$$quiz" -o "$(STUDENT_QUIZZES)/$$(basename "$$quiz")" || exit 1; \
	done

# What students receive, in one folder (build/student-edition/): the package's wheel, the lessons
# (outputs stripped), the quizzes released (salted hashes), the assignments as nbgrader releases
# them, the website and a README; every file (the wheel's members too) is checked for solutions,
# hidden tests, answer keys and the course secret before it is written. WHEEL_URL: where you will
# host the wheel (every notebook then opens with a cell that installs it: Colab); REPO_URL: the
# course's GitHub repository (the site's Colab / Binder links); COURSE: your nbgrader course root
# (with its roster and secret, the assignments carry variants.json); NO_SITE=1: leave the website
# out (--no-site: building it executes the lessons, minutes without the cache).
STUDENT_EDITION ?= build/student-edition
COURSE ?= course
student-edition: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m autograder.edition.build -o "$(STUDENT_EDITION)" \
		--course "$(COURSE)" $(if $(WHEEL_URL),--wheel-url "$(WHEEL_URL)") $(if $(REPO_URL),--repo-url "$(REPO_URL)") \
		$(if $(NO_SITE),--no-site)

# The edition in students' hands: a fresh venv with only its wheel (pip fetches the dependencies,
# a few minutes) imports the package, runs a lesson, grades a schedule and self-checks a fetched
# assignment (tests/edition/test_student_edition.py, TVM_COURSE_FRESH_VENV=1); minutes, so not in `make test`.
student-edition-check: student-edition
	PATH="$(CURDIR)/$(BIN):$$PATH" TVM_COURSE_FRESH_VENV=1 TVM_COURSE_EDITION="$(abspath $(STUDENT_EDITION))" \
		$(BIN)/python -m pytest tests/edition/test_student_edition.py

clean:
	rm -rf $(VENV) build *.egg-info
