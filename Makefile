# storagebench: every verb installs what it needs (virtualenvs, Python packages, apt tools).
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell scripts/find-python.sh 3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
STAMP := $(VENV)/.installed
# Every Python dependency, pinned for Python 3.11-3.13 (uv pip compile --universal over every extra).
LOCK := requirements.lock
SB := $(BIN)/storagebench
PYTEST_ARGS ?=
# pytest-xdist over every core; whole files per worker, so module fixtures are built once and a tier's
# summary figures (tests/unit/hostile) are counted in one worker. Integration and e2e never get it:
# they share loop devices, /mnt/storagebench, DynamoDB Local and a timing budget.
XDIST ?= -n auto --dist loadfile

.PHONY: help setup demo test test-fast test-busy lint docs typecheck unit integration test-pythons test-agent-py39 \
        bench-fidelity bench-demo bench-preview bench-report checks bench-store bench-economy agent-zipapp clean sam-validate sam-build \
        security-scan

help: ## list the verbs
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s "$$(printf '\t')"

# Exactly the locked versions, then the project itself without resolving anything (`uv pip sync`
# would also remove the uv this virtualenv runs it from).
$(STAMP): pyproject.toml $(LOCK)
	@test -n "$(PYTHON)" || { echo "no Python 3.11 found (install it with pyenv or apt)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q uv==0.13.9
	$(UV) pip install -q --python $(BIN)/python -r $(LOCK)
	$(UV) pip install -q --python $(BIN)/python --no-deps -e .
	@touch $@

.PHONY: lock layer-requirements field-reference asl-branches twin twin-model-table nfs-client
lock: $(STAMP) ## re-resolve requirements.lock from pyproject.toml (kept versions stay; --upgrade-package X moves one), then the layer's pins
	$(UV) pip compile -q pyproject.toml --all-extras --universal --python-version 3.11 \
	  --custom-compile-command "make lock" -o $(LOCK)
	$(UV) pip install -q --python $(BIN)/python -r $(LOCK)
	$(MAKE) --no-print-directory layer-requirements

layer-requirements: $(STAMP) ## layers/storagebench/requirements.txt from the lock (a unit test fails when it drifts)
	$(BIN)/python scripts/layer_requirements.py

asl-branches: $(STAMP) ## copy the inline Map's per-config branch into the Distributed Map (a unit test fails when they drift)
	$(BIN)/python scripts/asl_branches.py

field-reference: $(STAMP) ## docs/request-reference.md, the request field reference, from the JSON Schema (a unit test fails when it drifts)
	$(BIN)/python scripts/field_reference.py docs/request-reference.md

# What a local instance needs besides the host's own tools: AWS's EC2 metadata-service emulator
# (IMDSv2 tokens, role credentials, Spot notices) that hands the instance its credentials.
TOOLS := .tools
IMDS_MOCK := $(TOOLS)/bin/ec2-metadata-mock

$(IMDS_MOCK):
	GOBIN=$(abspath $(TOOLS)/bin) GOFLAGS=-mod=mod go install github.com/aws/amazon-ec2-metadata-mock/cmd/ec2-metadata-mock@v1.13.0

# The IAM evaluator tests/iam runs template.yaml's policies through (@cloud-copilot/iam-simulate,
# pinned by tools/iam-simulate/package-lock.json; Node.js 20 and npm).
IAM_SIMULATE := tools/iam-simulate/node_modules/.package-lock.json

$(IAM_SIMULATE): tools/iam-simulate/package.json tools/iam-simulate/package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: install Node.js 20 and npm (apt-get install nodejs npm)" >&2; exit 1; }
	cd tools/iam-simulate && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# MongoDB's E-Divisive means (signal-processing-algorithms), the oracle analysis/changepoints.py is
# tested against. It pins numpy<2 (pyarrow needs numpy>=2): its own virtualenv, like SAM CLI's.
EDIVISIVE_VENV := .venv-edivisive
$(EDIVISIVE_VENV)/.installed:
	$(PYTHON) -m venv $(EDIVISIVE_VENV)
	$(EDIVISIVE_VENV)/bin/pip install -q uv==0.13.9
	$(EDIVISIVE_VENV)/bin/uv pip install -q --python $(EDIVISIVE_VENV)/bin/python signal-processing-algorithms==2.1.6
	@touch $@

# The EBS twin's compiled data path (Rust, native/twin; crates from crates.io pinned by its
# Cargo.lock). Local mode runs it where it is built, the Python twin where not (labelled).
TWIN := $(TOOLS)/bin/storagebench-twin
TWIN_SOURCES := $(wildcard native/twin/src/*.rs) native/twin/Cargo.toml native/twin/Cargo.lock

$(TWIN): $(TWIN_SOURCES) scripts/build-twin.sh
	@bash scripts/build-twin.sh $@

twin: $(TWIN) ## build the EBS twin's compiled data path (.tools/bin/storagebench-twin)

# The local instances' NFS client (C on libnfs and libfuse3 from apt, static): local mode installs
# it as the mount.nfs of a local instance's Debian root, since this machine's kernel has no NFS client.
NFS_CLIENT := $(TOOLS)/bin/storagebench-mount-nfs

$(NFS_CLIENT): native/nfs-client/mount_nfs.c native/nfs-client/no_portmap.c scripts/build-nfs-client.sh
	@bash scripts/build-nfs-client.sh $@

nfs-client: ## build the local instances' user-space NFS client (.tools/bin/storagebench-mount-nfs; needs make setup's apt packages)
	@bash scripts/ensure-system-deps.sh
	@bash scripts/build-nfs-client.sh $(NFS_CLIENT)

twin-model-table: $(STAMP) ## rewrite tests/data/twin/model-table.json from agent/twin/model.py (the compiled twin is tested against it)
	$(BIN)/python scripts/twin_model_table.py

setup: $(STAMP) $(IMDS_MOCK) $(IAM_SIMULATE) $(EDIVISIVE_VENV)/.installed $(TWIN) ## virtualenv, Python packages, system tools (fio, mkfs, losetup, mdadm), the local instance's metadata service, the compiled EBS twin, the IAM evaluator, the change-point oracle, the local NFS server and client
	@bash scripts/ensure-system-deps.sh
	@$(MAKE) --no-print-directory $(NFS_CLIENT)

demo: setup ## the main job: the whole workflow on this machine, three emulated EBS options
	@test "$$(id -u)" -eq 0 || { echo "the demo emulates EBS volumes (loop devices, cgroup throttling): run it as root" >&2; exit 1; }
	$(SB) run --local --suite events/local-demo.json

lint: $(STAMP) ## ruff lint and format check, statelint on every state machine
	$(BIN)/ruff check layers local tests functions bench scripts
	$(BIN)/ruff format --check layers local tests functions bench scripts
	$(BIN)/python scripts/statelint_asl.py statemachines/*.asl.json  # statelint, less its InputType gap
	$(BIN)/python scripts/asl_branches.py --check

docs: $(STAMP) ## check README.md and docs/*.md: every relative link and anchor resolves, every page is linked, README.md under 15 KB, the field reference is current
	$(BIN)/python scripts/check_docs.py
	$(BIN)/python scripts/field_reference.py --check

SAM_VENV := .venv-sam
$(SAM_VENV)/.installed:
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install -q uv==0.13.9
	$(SAM_VENV)/bin/uv pip install -q --python $(SAM_VENV)/bin/python aws-sam-cli==1.170.0
	@touch $@

sam-validate: $(SAM_VENV)/.installed ## sam validate --lint (cfn-lint) on template.yaml
	$(SAM_VENV)/bin/sam validate --lint --region us-east-1

sam-build: $(SAM_VENV)/.installed ## sam build for python3.13/arm64 without Docker
	PYENV_VERSION=$$(ls $${PYENV_ROOT:-$$HOME/.pyenv}/versions | grep -E '^3\.(11|12|13)\.' | paste -sd: -) \
	  PATH=$${PYENV_ROOT:-$$HOME/.pyenv}/shims:$$PATH $(SAM_VENV)/bin/sam build --build-dir .aws-sam/build

# checkov pins its own boto3/pydantic/networkx: it lives in its own virtualenv, like SAM CLI.
CHECKOV_VENV := .venv-checkov
$(CHECKOV_VENV)/.installed:
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install -q uv==0.13.9
	$(CHECKOV_VENV)/bin/uv pip install -q --python $(CHECKOV_VENV)/bin/python checkov==3.3.30
	@touch $@

security-scan: $(CHECKOV_VENV)/.installed ## checkov on template.yaml: clean, every skip justified next to its resource
	$(CHECKOV_VENV)/bin/checkov --file template.yaml --framework cloudformation --compact --quiet --skip-download  # offline: no Prisma Cloud guidelines

typecheck: $(STAMP) ## mypy --strict on the domain package and local mode
	$(BIN)/mypy

unit: $(STAMP) ## fast tests, no root needed (over every core)
	$(BIN)/pytest tests/unit -q $(XDIST) $(PYTEST_ARGS)

# The edit loop, under 3 minutes on 2 cores: make test runs what it leaves out (the slow-marked API
# fuzz, the multi-machine agent topology with real processes and fio servers).
test-fast: $(STAMP) ## the unit tier over every core less the slow-marked tests and tests/unit/agent/topology (<3 min; make test runs all)
	$(BIN)/pytest tests/unit -q $(XDIST) -m "not slow" --ignore=tests/unit/agent/topology $(PYTEST_ARGS)

integration: setup ## real fio/dd runs on loop devices and directories (root for emulated volumes)
	$(BIN)/pytest tests/integration -q $(PYTEST_ARGS)

# PYTHONS, PYTHONS_TESTS, PYTHONS_ARGS and PYTHONS_NICE let `make test` split the tier (see there).
PYTHONS ?= 3.12 3.13
PYTHONS_TESTS ?= tests/unit
PYTHONS_ARGS ?=
PYTHONS_NICE ?=
test-pythons: $(STAMP) ## the unit tier on Python 3.12 and 3.13 too (the Lambda runtime), over every core
	@for version in $(PYTHONS); do \
	  interpreter=$$(scripts/find-python.sh $$version) || { echo "SKIPPED: no Python $$version (install it with pyenv)"; continue; }; \
	  venv=.venv$${version/./}; \
	  [ -x $$venv/bin/python ] || $(UV) venv -q --python $$interpreter $$venv; \
	  $(UV) pip install -q --python $$venv/bin/python -r $(LOCK) && \
	  $(UV) pip install -q --python $$venv/bin/python --no-deps -e . && \
	  echo "Python $$version: $(PYTHONS_TESTS) $(PYTHONS_ARGS)" && \
	  $(PYTHONS_NICE) $$venv/bin/pytest $(PYTHONS_TESTS) -q -p no:cacheprovider $(XDIST) $(PYTHONS_ARGS) || exit 1; \
	done

test-agent-py39: $(STAMP) ## the agent's own tests on Python 3.9 (Amazon Linux 2023's python3)
	@interpreter=$$(scripts/find-python.sh 3.9) || { echo "SKIPPED: no Python 3.9 (install it with pyenv)"; exit 0; }; \
	[ -x .venv39/bin/python ] || $(UV) venv -q --python $$interpreter .venv39; \
	$(UV) pip install -q --python .venv39/bin/python pytest==8.3.5 && \
	PYTHONPATH=layers/storagebench .venv39/bin/pytest -q -p no:cacheprovider -c tests/agent39.ini tests/unit/agent

# The static checks, one per job (each is one process on one core): make test runs them two at a time.
checks: lint docs typecheck sam-validate security-scan sam-build

# Integration tests that start no local stack (no LocalSession, so no instance addresses, loop
# devices or IMDS ports to share): make test runs them beside the ones that do.
ASIDE_TESTS := tests/integration/packaging tests/integration/store tests/integration/local/test_dynamodb_local.py

# Every test of `pytest tests`, of the Lambda runtime's Python (3.13) and of the instance's (3.9),
# arranged for 2 cores. The first stream (integration) uses about a third of them and sets the
# wall time; the CPU-bound tiers fill the rest with the CPU they leave:
# 1. the static checks two at a time (a broken tree fails in a minute or two);
# 2. three streams at once:
#    - integration, e2e, browser and IAM's root-marked run, one test at a time (root, loop devices,
#      mounts, local stacks, timing), less ASIDE_TESTS;
#    - ASIDE_TESTS, one at a time (pip install, DynamoDB Local, the store's patterns);
#    - at nice 19 (not SCHED_IDLE: see BESIDE_NICE), the unit and IAM tiers less
#      tests/unit/agent over every core, then the unit tier on 3.13 less tests/unit/agent; then
#      tests/unit/agent (real processes, wall-clock timeouts: normal priority) on 3.11, 3.13, 3.9.
#    Their logs follow the first stream's.
# `make test-pythons` runs the unit tier on 3.12 as well (not in make test: 3.11 and 3.13 bracket it).
PYTHONS_BESIDE ?= 1
# nice 19, not SCHED_IDLE (chrt --idle): a SCHED_IDLE task preempted while it holds a page-cache
# folio lock (a fault on a shared library's text) keeps it for as long as the machine is busy, and
# every normal task faulting on that page waits: beside make test-busy, fio's exit waited over 60 s
# in folio_wait_bit_common (3 fresh clones of 3), and DynamoDB Local's JVM start past 60-90 s.
BESIDE_NICE := nice -n 19
test: setup ## the whole suite: lint, docs, types, template, security scan, sam build, all tiers, Python 3.13 and 3.9 (<25 min on 2 cores)
	$(MAKE) --no-print-directory -j 2 --output-sync=target checks
	@aside=$$(mktemp); beside=$$(mktemp); \
	$(BIN)/pytest $(ASIDE_TESTS) -q -p no:cacheprovider $(PYTEST_ARGS) >$$aside 2>&1 & aside_job=$$!; \
	{ [ "$(PYTHONS_BESIDE)" = 1 ] || while [ ! -e $$beside.go ]; do sleep 1; done; \
	  echo "Python 3.11: tests/unit tests/iam -m 'not root', less tests/unit/agent (nice 19)" && \
	  $(BESIDE_NICE) $(BIN)/pytest tests/unit tests/iam -q -p no:cacheprovider $(XDIST) -m "not root" --ignore=tests/unit/agent $(PYTEST_ARGS) && \
	  $(MAKE) --no-print-directory test-pythons PYTHONS=3.13 PYTHONS_NICE="$(BESIDE_NICE)" PYTHONS_ARGS="--ignore=tests/unit/agent" && \
	  echo "Python 3.11: tests/unit/agent" && \
	  $(BIN)/pytest tests/unit/agent -q -p no:cacheprovider $(XDIST) $(PYTEST_ARGS) && \
	  $(MAKE) --no-print-directory test-pythons test-agent-py39 PYTHONS=3.13 PYTHONS_TESTS=tests/unit/agent; \
	} >$$beside 2>&1 & beside_job=$$!; \
	$(BIN)/pytest tests/integration tests/e2e tests/browser -q $(addprefix --ignore=,$(ASIDE_TESTS)) $(PYTEST_ARGS) && \
	  $(BIN)/pytest tests/iam -q -m root $(PYTEST_ARGS); status=$$?; \
	touch $$beside.go; wait $$aside_job || status=1; wait $$beside_job || status=1; \
	echo "--- beside: $(ASIDE_TESTS) ---"; cat $$aside; \
	echo "--- beside: the unit and IAM tiers on 3.11 and 3.13 (nice 19), tests/unit/agent on 3.11, 3.13 and 3.9 ---"; cat $$beside; \
	rm -f $$aside $$beside $$beside.go; \
	exit $$status

# The suite as it must pass on a busy machine: a process spinning on CPU 0 beside all of `make test`.
test-busy: ## make test with a CPU hog on one core beside it (every test must hold under load)
	@$(PYTHON) -c 'import os; os.sched_setaffinity(0, {0}); [None for _ in iter(int, 1)]' & hog=$$!; \
	trap 'kill $$hog 2>/dev/null' EXIT; \
	$(MAKE) --no-print-directory test

DEMO_RUNS ?= 1
bench-demo: setup ## the demo measured (DEMO_RUNS=5: five in a row, each judged against the volumes' limits) -> bench-results/demo.json
	$(BIN)/python bench/demo.py --runs $(DEMO_RUNS) --out bench-results/demo.json

bench-fidelity: setup ## emulated volumes, EBS twin beside the throttle: limits, latency vs the model, twin CPU, knee, agent footprint (root, ~10 min) -> bench-results/fidelity.json
	$(BIN)/python bench/fidelity.py --out bench-results/fidelity.json

bench-preview: setup ## the dry run of the worst requests the API accepts (at MAX_PLANNED_STEPS, 256 KiB) and issue 27's refused one: time, memory -> bench-results/preview.json
	$(BIN)/python bench/preview.py --out bench-results/preview.json

bench-report: setup ## a 20-config x 10-workload report: build/render time, sizes -> bench-results/report.json
	$(BIN)/python bench/report.py --out bench-results/report.json

bench-store: setup ## the store's access patterns on DynamoDB Local, 100,000 results, current vs previous item layout -> bench-results/store.json
	$(BIN)/python bench/store.py --out bench-results/store.json

bench-economy: setup ## nightly and report-card cost/time on-demand vs Spot, fixed vs adaptive repetitions on recorded noise, transitions per config (40 and 60 configs; root) -> bench-results/economy.json
	$(BIN)/python bench/economy.py --out bench-results/economy.json

agent-zipapp: $(STAMP) ## the stdlib-only agent as one file: dist/storagebench-agent.pyz
	$(BIN)/python scripts/build_agent_zipapp.py dist/storagebench-agent.pyz

# the on-demand API
.PHONY: openapi
openapi: $(STAMP) ## regenerate openapi.json from the API's routes and models (a test fails when it drifts)
	$(BIN)/python -m storagebench.api.openapi openapi.json

clean: ## remove virtualenvs, caches and local results
	rm -rf $(VENV) $(SAM_VENV) $(CHECKOV_VENV) .venv312 .venv313 .venv39 .mypy_cache .ruff_cache .pytest_cache dist bench-results .storagebench tools/iam-simulate/node_modules
