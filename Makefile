# Everything builds its own .venv on first use; `make test` is what CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lab site clean

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

clean:
	rm -rf $(VENV) build *.egg-info
