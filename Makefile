# Two commands do everything on a fresh Debian 12 machine:
#   make run    install what is missing, build, run the controller manager
#               on its embedded API server
#   make test   install what is missing, run every test, print the count
# The rest are conveniences for developers; .ci/run runs the CI set.

BAZEL ?= bazel
CLANG_FORMAT ?= clang-format-14

.PHONY: deps run test install uninstall bench bench-informer bench-e2e bench-e2e-soak tsan asan clang werror fuzz soak format format-check layers clean

FUZZ_SECONDS ?= 60
# Extra flags for `make test`, e.g. TEST_FLAGS=--config=werror (as CI does).
TEST_FLAGS ?=
# The .bazelrc config `make clang` builds with. CI uses tsan (clang with
# the thread-safety analysis and TSan) so that `make tsan` reuses the build.
CLANG_CONFIG ?= clang
# What `make tsan` runs: the runtime's, the local API server's and the
# controllers' tests.
TSAN_TARGETS ?= //test/base/... //test/runtime/... //test/apiserver/... //test/controllers/...
# Every tracked C++ file outside third_party/, NUL-separated.
FORMAT_FILES = git ls-files -z -- '*.cc' '*.h' ':(exclude)third_party/**'

deps:
	@./third_party/deps.sh

# The controller manager on an API server of its own (Ctrl-C stops it).
# RUN_FLAGS go to bazel (e.g. -c opt), RUN_ARGS to the manager.
RUN_FLAGS ?=
RUN_ARGS ?=
run: deps
	$(BAZEL) run $(RUN_FLAGS) //cmd/controller-manager -- --embedded $(RUN_ARGS)

test: deps
	@./test/run_all.sh $(TEST_FLAGS)

# kcr as a library for CMake and pkg-config users (docs/using-kcr.md):
# headers under PREFIX/include/kcr, static and shared libraries, the CMake
# package and the .pc files. DESTDIR stages the files for a package.
# INSTALL_BAZEL_FLAGS is what the libraries are built with (empty: the
# fastbuild objects `make test` already has).
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_BAZEL_FLAGS ?= -c opt
install: deps
	@./packaging/install.sh install "$(PREFIX)" "$(DESTDIR)" $(INSTALL_BAZEL_FLAGS)

# Removes exactly what `make install` with the same PREFIX and DESTDIR put
# there (the list it kept in PREFIX/share/kcr).
uninstall:
	@./packaging/install.sh uninstall "$(PREFIX)" "$(DESTDIR)"

bench: deps
	$(BAZEL) run -c opt //bench:workqueue_benchmark -- --benchmark_report_aggregates_only=true

# kcr's informer beside client-node's over loopback HTTP (bench/informer/
# run.sh; needs npm for client-node). Not part of `make test`.
bench-informer: deps
	@./bench/informer/run.sh

# The whole system end to end: cmd/local-apiserver and
# cmd/controller-manager as processes, N Nginx until all are ready
# (bench/e2e/run.sh). E2E_SIZES chooses the sizes; the soak patches 300
# Nginx and 300 ConfigMaps for E2E_SOAK_SECONDS and follows both RSS.
E2E_SIZES ?= 1000 10000 50000
E2E_SOAK_SECONDS ?= 300
bench-e2e: deps
	@E2E_SIZES="$(E2E_SIZES)" ./bench/e2e/run.sh

bench-e2e-soak: deps
	@E2E_SOAK=1 E2E_SOAK_SECONDS=$(E2E_SOAK_SECONDS) ./bench/e2e/run.sh

tsan: deps
	@./test/run_all.sh --config=tsan $(TSAN_TARGETS)

asan: deps
	$(BAZEL) test --config=asan //...

clang: deps
	$(BAZEL) build --keep_going --config=$(CLANG_CONFIG) //...

werror: deps
	$(BAZEL) build --keep_going --config=werror //...

# The informer fault test at 1,000,000 writes instead of 10,000
# (docs/cache.md). SOAK_OPS overrides the count.
SOAK_OPS ?= 1000000
soak: deps
	$(BAZEL) test -c opt //test/integration:informer_fault_test \
	  --test_env=KCR_INFORMER_FAULT_OPS=$(SOAK_OPS) --test_timeout=7200 \
	  --test_output=errors --nocache_test_results

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./test/fuzz/run_fuzzers.sh

# Rewrites every file in place with clang-format-14 (.clang-format).
format: deps
	@$(FORMAT_FILES) | xargs -0 $(CLANG_FORMAT) -i

# Lists what `make format` would change and fails if anything would.
format-check: deps
	@$(FORMAT_FILES) | xargs -0 $(CLANG_FORMAT) --dry-run --Werror

# Fails if a package depends on a layer above it (docs/design.md, Layers).
layers: deps
	@./test/layering/check_layers.sh

clean:
	$(BAZEL) clean
