# Every target creates .venv on first use (and again when pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The pinned Go tools (.ci/tools.txt), built once per machine into
# $GITMEDIC_TOOLS (default ~/.cache/gitmedic-tools) and put first on PATH.
TOOLS_PATH = $(shell .ci/tools.sh)
DIST := dist

.PHONY: demo test lint typecheck layers actionlint unit integration tools dist chart-rbac chart-docs docs release-dry-run \
	bench install-size clean realkube realkube-build realkube-tier

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gitmedic demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

layers: $(STAMP)
	$(BIN)/lint-imports

tools:
	.ci/tools.sh >/dev/null

# Every workflow of this repo (the one `gitmedic init` writes is linted by its test).
actionlint: tools
	PATH="$(TOOLS_PATH):$$PATH" actionlint .github/workflows/*.yml

# The wheel and sdist (the wheel is built from the sdist, so the sdist is complete);
# the packaging tests install the wheel in fresh venvs.
dist: $(STAMP)
	rm -rf $(DIST) && mkdir $(DIST)
	$(BIN)/python -m build --outdir $(DIST) . >$(DIST)/build.log 2>&1 || { cat $(DIST)/build.log; exit 1; }

# Every release artefact into dist/release with SHA256SUMS (what release.yml publishes).
release-dry-run: $(STAMP) tools
	PYTHON=$(BIN)/python tools/release/dry-run.sh

# The chart's ClusterRole rules, generated from the detector registry.
chart-rbac: $(STAMP)
	$(BIN)/python -m gitmedic.bot.cli.rbac charts/gitmedic/files/clusterrole-rules.yaml

# The chart's README, generated from values.yaml by the pinned helm-docs.
chart-docs: tools
	cd charts/gitmedic && PATH="$(TOOLS_PATH):$$PATH" helm-docs --log-level warning

# The docs site: reference pages generated from the code, then mkdocs, strictly.
docs: $(STAMP)
	$(BIN)/python tools/docs/generate.py docs/reference
	$(BIN)/mkdocs build --strict  # not --quiet: it hides the warnings strict fails on

unit: $(STAMP)
	$(BIN)/pytest -q -n auto -m 'not integration'

integration: $(STAMP) tools dist
	PATH="$(TOOLS_PATH):$$PATH" GITMEDIC_DIST=$(DIST) $(BIN)/pytest -q -m 'integration and not realkube'

# Everything but the real-cluster tier, which `make realkube` runs (.ci/run runs both).
test: lint typecheck layers actionlint dist $(STAMP)
	PATH="$(TOOLS_PATH):$$PATH" GITMEDIC_DIST=$(DIST) $(BIN)/pytest -q -n auto -m 'not realkube'

# The real-cluster tier (tests/realkube; README): its binaries are built once per
# machine (tools/kube/build.sh, cached), a cold build is stopped after
# KUBE_BUILD_BUDGET_S of wall time (the tier then skips what is missing, saying
# why), and the tier runs in one pytest process: its tests share one control plane.
KUBE_BUILD_BUDGET_S ?= 2700
realkube: realkube-build realkube-tier

realkube-build:
	tools/kube/build.sh --budget $(KUBE_BUILD_BUDGET_S)

realkube-tier: $(STAMP) tools
	PATH="$(TOOLS_PATH):$$PATH" $(BIN)/pytest -q -p no:xdist -m realkube tests/realkube

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The install size and package count of the core and of [all] (bench/RESULTS.md).
install-size: dist
	bench/install_size.sh $(DIST)

clean:
	rm -rf $(VENV) $(DIST) .mypy_cache .pytest_cache .ruff_cache
