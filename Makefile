# Thin driver around CMake. `make` builds build/reassert; `make test` runs the
# whole suite (plain build, then again under ASan+UBSan); `make demo` runs the
# product card's fixture against the embedded fake cluster.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
COV_BUILD  ?= build-cov
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build deps deps-fuzz demo test test-plain test-asan fuzz valgrind bench bench-live clean format
.PHONY: coverage deps-coverage install lint deps-lint format-check swarm bench-sweep
.PHONY: bench-record
.PHONY: report-check deps-report mutate
CTEST_FLAGS ?=
PREFIX     ?= /usr/local

all: build

deps:
	@sh cmake/deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The product card's fixture: the rotation's Stage, then the no-drift
# Reassert, each under both strategies; one line says which is which.
demo: build
	@echo "eager is production today (the fence before the first read); lazy is the fix (the fence at the first write, so a Reassert with nothing to repair takes none):"
	@$(BUILD)/reassert sim scenarios/two-run-stage-reassert.yaml

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DREASSERT_SANITIZE=ON

test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

test: test-plain test-asan

# The guard mutations (tests/mutations/README.md): each patch applied alone
# to a scratch copy, rebuilt, and run against the tests citing its hazard,
# then the whole scenario and unit set; fails on a survivor and writes
# reports/MUTATION.md. Long (a rebuild and a test run per patch): not part of
# `make test`. MUTATE_ONLY=REGEX runs the matching patches (no report);
# MUTATE_FLAGS=--fail-fast stops at the first survivor.
MUTATE_ONLY  ?=
MUTATE_FLAGS ?=
mutate: deps
	nice python3 tests/mutate.py --src . --jobs $(JOBS) $(if $(MUTATE_ONLY),--only '$(MUTATE_ONLY)') $(MUTATE_FLAGS)

# libFuzzer targets (tests/fuzz/README.md): clang, ASan+UBSan, each target
# FUZZ_SECONDS long; fails on any crash, leak, sanitizer report or timeout.
deps-fuzz:
	@sh cmake/deps.sh fuzz

$(FUZZ_BUILD)/CMakeCache.txt: | deps deps-fuzz
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREASSERT_FUZZ=ON

fuzz: deps deps-fuzz $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) --target fuzz_all -j $(JOBS)
	sh tests/fuzz/fuzz_run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# reports/BENCH.md by script (reports/bench.py): the deploy step eager vs
# lazy on preset prod and at 60 and 1,000 nodes, harness throughput
# (BENCH_REPEAT repeats), every bench-* target's build/bench/<area>.json,
# and the before/after table of every scenario; the README's table from it.
bench: build
	python3 reports/bench.py --build $(BUILD)

# Live mode against sim serve beside the in-process sim, and the registry
# proof with and without concurrency (build/bench/live.json).
bench-live: build
	sh tests/bench_live.sh $(BUILD)/reassert . $(BUILD)/bench/live.json

# One shard of the failure search, exactly as the nightly workflow runs it
# (.ci/swarm; .github/workflows/swarm.yml runs shards 1..16): the swarm of
# the rotation's Stage under each strategy (PLANS plans per strategy in this
# shard, from SEED: default today's UTC date) and the perturbation sweeps of
# both runs, shard SHARD=I/N of each. Reports, every shrunk reproducer
# (findings.txt) and a scenario file per finding go to BUILD/swarm; exit 1
# on a finding.
PLANS ?= 10000
SEED  ?=
SHARD ?= 1/1
swarm: build
	sh .ci/swarm ./$(BUILD)/reassert . $(SHARD) $(PLANS) "$(SEED)" $(BUILD)/swarm

# The failure search's cost: the rotation's full crash sweep and swarm
# plans per second (build/bench/sweep.json).
bench-sweep: build
	sh tests/bench_sweep.sh $(BUILD)/reassert . $(BUILD)/bench/sweep.json
# Recording and strict replay overhead per call (build/bench/record.json).
bench-record: build
	cmake --build $(BUILD) --target bench_record -j $(JOBS)
	mkdir -p $(BUILD)/bench
	./$(BUILD)/bench_record . $(BUILD)/bench/record.json

valgrind: build
	sh tests/valgrind.sh $(BUILD)

# Coverage (cmake/coverage.sh): the plain suite once more in a gcov build,
# the lcov HTML report with branch coverage at $(BUILD)/coverage/index.html,
# a summary line per folder, and the gate on core/ (cmake/coverage_gate.py).
deps-coverage:
	@sh cmake/deps.sh coverage

$(COV_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(COV_BUILD) -DCMAKE_BUILD_TYPE=Debug -DREASSERT_COVERAGE=ON

coverage: deps deps-coverage $(COV_BUILD)/CMakeCache.txt
	cmake --build $(COV_BUILD) -j $(JOBS)
	JOBS=$(JOBS) sh cmake/coverage.sh $(COV_BUILD) $(BUILD)/coverage

# The scenario report in a browser (cmake/report_check.sh): the fixture's
# --report page rendered by headless Chromium to $(BUILD)/report.png, which
# must not be blank.
deps-report:
	@sh cmake/deps.sh report

report-check: deps-report build
	sh cmake/report_check.sh $(BUILD)

# Static checks: cppcheck and clang-tidy (.clang-tidy at the root) on core/,
# cli/ and recorder/, with the flags each file is built with
# ($(BUILD)/compile_commands.json); format-check is clang-format's dry run
# over every tracked .c/.h (the same files `make format` rewrites).
deps-lint:
	@sh cmake/deps.sh lint

lint: deps-lint build
	JOBS=$(JOBS) sh cmake/lint.sh $(BUILD) core cli recorder

format-check: deps-lint
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

# The binary to $(PREFIX)/bin and reassert(1) to $(PREFIX)/share/man/man1
# (DESTDIR is honoured, for packaging).
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(COV_BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# scenarios/incidents/ regenerated from
# scenarios/incidents/reconstructed/incident-*.yaml (recorded
# under eager, `replay --to-scenario`); tests/check_incidents.sh fails when
# the committed files differ from what today's core generates.
.PHONY: incidents
incidents: build
	rm -f scenarios/incidents/*.yaml scenarios/incidents/*.db
	sh tests/incidents_gen.sh $(BUILD)/reassert . scenarios/incidents
