# kirocrew — build, run and test.
#
#   make run    install missing system packages, build (release), start the daemon
#   make test   install missing system packages, run the whole test suite
#
# Builds go to CARGO_TARGET_DIR: /var/cache/kirocrew/target when that is
# writable (one shared cache for every checkout and CI run on the machine;
# llama.cpp is slow to build on small machines), else ./target.

SHELL := /bin/bash
.DEFAULT_GOAL := help

CACHE_TARGET := /var/cache/kirocrew/target
CARGO_TARGET_DIR ?= $(shell if mkdir -p $(CACHE_TARGET) 2>/dev/null && [ -w $(CACHE_TARGET) ]; then echo $(CACHE_TARGET); else echo $(CURDIR)/target; fi)
export CARGO_TARGET_DIR

# Debian packages the build needs: a C toolchain (SQLite is compiled in),
# and cmake + clang/libclang for llama.cpp; and what the tests need:
# headless Chromium and its WebDriver for the dashboard's browser tests.
APT_PACKAGES := build-essential pkg-config cmake clang libclang-dev ca-certificates chromium chromium-driver python3 python3-venv
MIN_RUST := 1.85

# The official MCP Python SDK, a second MCP client for the tests
# (tests/mcp_python/client.py), in a venv beside the build cache.
MCP_SDK := mcp==2.3.0
MCP_VENV ?= $(dir $(CARGO_TARGET_DIR))mcp-venv
export KIROCREW_MCP_PYTHON := $(MCP_VENV)/bin/python

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ARGS ?=

.PHONY: help deps mcp-sdk build run test bench fmt lint install-service

help:
	@echo "make run     build and start the daemon (ARGS='--port 7431' to pass options)"
	@echo "make test    run the whole test suite"
	@echo "make bench   run the criterion benchmarks"
	@echo "make install-service   install the systemd unit (see README)"

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@if ! command -v cargo >/dev/null; then \
	  echo "Rust is not installed. Install it with rustup (https://rustup.rs), then re-run make."; exit 1; \
	fi
	@have=$$(rustc --version | awk '{print $$2}'); \
	if [ "$$(printf '%s\n' $(MIN_RUST) $$have | sort -V | head -n1)" != "$(MIN_RUST)" ]; then \
	  echo "rustc $$have is older than $(MIN_RUST): run 'rustup update'"; exit 1; \
	fi

build: deps
	cargo build --release --locked

run: build
	$(CARGO_TARGET_DIR)/release/kirocrew serve $(ARGS)

# The venv is made once and kept; a marker names the SDK version in it.
mcp-sdk: deps
	@if [ "$$(cat $(MCP_VENV)/.sdk 2>/dev/null)" != "$(MCP_SDK)" ]; then \
	  echo "installing $(MCP_SDK) into $(MCP_VENV)"; \
	  rm -rf $(MCP_VENV) && /usr/bin/python3 -m venv $(MCP_VENV) && \
	  $(MCP_VENV)/bin/pip install -q --disable-pip-version-check $(MCP_SDK) && \
	  echo "$(MCP_SDK)" > $(MCP_VENV)/.sdk; \
	fi

test: deps mcp-sdk
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	cargo test --workspace --locked --no-fail-fast

bench: deps
	cargo bench --workspace --locked

fmt:
	cargo fmt --all

lint: deps
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings

# The binary's run path finds llama.cpp's shared libraries in
# /usr/local/lib/kirocrew, and so do the CPU backend modules (one per CPU
# generation; the best one for the processor is loaded at start).
LIB_DIR := /usr/local/lib/kirocrew

install-service: build
	$(SUDO) install -d $(LIB_DIR)
	libs=$$(env -u LD_LIBRARY_PATH ldd $(CARGO_TARGET_DIR)/release/kirocrew | awk '/lib(llama|ggml)/ {print $$3}') && \
	  $(SUDO) install -m 0644 $$libs $(LIB_DIR)/
	backends=$$($(CARGO_TARGET_DIR)/release/kirocrew doctor --backends-dir) && \
	  $(SUDO) install -m 0644 "$$backends"/libggml-*.so $(LIB_DIR)/
	$(SUDO) install -m 0755 $(CARGO_TARGET_DIR)/release/kirocrew /usr/local/bin/kirocrew
	$(SUDO) install -m 0644 config/kirocrew.service /etc/systemd/system/kirocrew.service
	$(SUDO) systemctl daemon-reload
	@echo "now: sudo systemctl enable --now kirocrew"
