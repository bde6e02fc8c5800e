# Everything builds its own .venv on first use; `make test` is what CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Student copies of the quizzes: what students take (quizzes/ holds the instructor copies, with the answers).
STUDENT_QUIZZES ?= build/student-quizzes

.PHONY: demo test lab site student-quizzes clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (tvm-course)" >/dev/null
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/tvm-course demo

test: $(STAMP)
	$(BIN)/python -m pytest

lab: $(STAMP)
	$(BIN)/jupyter lab lessons/

# The course website: executes the lessons (cached), then serves it on 127.0.0.1.
site: $(STAMP)
	$(BIN)/tvm-course site build
	$(BIN)/tvm-course site serve

# Student copies of every quiz, to hand out: answers replaced by salted hashes (`tvm-course quiz
# release`). Students take them with `tvm-course quiz take build/student-quizzes/QUIZ.yaml`.
student-quizzes: $(STAMP)
	mkdir -p $(STUDENT_QUIZZES)
	for quiz in quizzes/*.yaml; do \
		$(BIN)/tvm-course quiz release "$$quiz" -o "$(STUDENT_QUIZZES)/$$(basename "$$quiz")" || exit 1; \
	done

clean:
	rm -rf $(VENV) build *.egg-info
