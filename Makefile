# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q -e ".[test,distributed]"
	touch $(STAMP)

# the main job: the report of every catalog entry (static HTML, figures beside it)
demo: $(STAMP)
	MPLBACKEND=Agg $(VENV)/bin/liedyn report --out out/report

# two workers for the two cores; one BLAS thread each (idle OpenBLAS threads triple the CPU time of
# the many small-matrix tests on a 2-core machine)
test: $(STAMP)
	MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2

bench: $(STAMP)
	for f in benchmarks/*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info out
