# Two commands do everything on a fresh Debian 12 machine:
#   make run    install what is missing, build, run kcr's main job
#   make test   install what is missing, run every test, print the count
# The rest are conveniences for developers.

BAZEL ?= bazel

.PHONY: deps run test bench tsan asan clang fuzz clean

FUZZ_SECONDS ?= 60

deps:
	@./third_party/deps.sh

run: deps
	$(BAZEL) run -c opt //bench:workqueue_benchmark -- --benchmark_report_aggregates_only=true

test: deps
	@./test/run_all.sh

bench: deps
	$(BAZEL) run -c opt //bench:workqueue_benchmark -- --benchmark_report_aggregates_only=true

tsan: deps
	$(BAZEL) test --config=tsan //test/runtime/...

asan: deps
	$(BAZEL) test --config=asan //...

clang: deps
	$(BAZEL) build --config=clang //...

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./test/fuzz/run_fuzzers.sh

clean:
	$(BAZEL) clean
