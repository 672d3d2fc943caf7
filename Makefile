# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test bench fuzz fuzz-lines docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# the generic compiled kernels (every algebra, once per machine: ~12 s of CPU with the compiled Casimirs of the
# end-of-run check, integrators.backends.casimir_rows; ~40 s for the ensemble kernel)
# into the disk cache, so that no backend="numba" call on a new algebra pays them
# (integrators.backends.generic_kernel, generic_ensemble)
$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q -e ".[test,distributed,fast]"
	$(PY) -c "from integrators.backends import generic_kernel, numba_kernels; numba_kernels.available() and generic_kernel.warm()"
	$(PY) -c "from integrators.backends import generic_ensemble, numba_kernels; numba_kernels.available() and generic_ensemble.warm()"
	touch $(STAMP)

# the main job: the report of every catalog entry (static HTML, figures beside it)
demo: $(STAMP)
	MPLBACKEND=Agg $(VENV)/bin/liedyn report --out out/report

# two workers for the two cores; one BLAS thread each (idle OpenBLAS threads triple the CPU time of
# the many small-matrix tests on a 2-core machine)
test: $(STAMP)
	MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2

# the documentation as an offline HTML site (MathJax served from a local copy); -W: a warning fails.
# It runs every example script (sphinx-gallery) and executes the notebook and the MyST pages (myst-nb):
# about two minutes on 2 cores; unchanged examples are not rerun on the next build.
DOCSTAMP := $(VENV)/.docs-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
$(DOCSTAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q -e ".[docs]"
	touch $(DOCSTAMP)

docs: $(DOCSTAMP)
	MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 $(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

bench: $(STAMP)
	for f in benchmarks/*.py; do $(PY) $$f || exit 1; done

# the long fuzz of the public API and the CLI (10^4 calls, under 15 minutes; totals into benchmarks/RESULTS.md)
fuzz: $(STAMP)
	cd benchmarks && OPENBLAS_NUM_THREADS=1 ../$(PY) fuzz.py --n 10000

clean:
	rm -rf $(VENV) build *.egg-info out docs/_build docs/catalog docs/examples docs/jupyter_execute docs/auto_examples docs/notebooks \
	      docs/bibliography.md docs/cli.md docs/api/methods_table.rst docs/sg_execution_times.rst \
	      $(filter-out docs/api/index.rst,$(wildcard docs/api/*.rst))

# the invariant-lines fuzz: 10^4 systems at p = 2, 3, every certified answer against the exact path (hours on
# one core); and 10^3 systems at p = 4..6 (--high), each certified answer against a second solve in other
# coordinates. Long runs go in parts on several cores, each saved as it goes and merged into RESULTS.md:
#   benchmarks/invariant_lines.py --fuzz 5000 --seed 1 --save part1.json   (and --seed 2 ... part2.json)
#   benchmarks/invariant_lines.py --merge part1.json part2.json
# (parts run on older trees: add --recheck log1.txt log2.txt, their printed logs, to solve the systems they left
# uncertified again on this tree, each checked against three second solves; the section gives both counts)
fuzz-lines: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/invariant_lines.py --fuzz 10000 --seed 0
	OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/invariant_lines.py --fuzz 1000 --high --seed 0
