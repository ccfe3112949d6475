"""Shared compile options and rule macros for every kcr target.

Every BUILD file loads its C++ rules from here, so warnings, the language
level and test defaults are set in one place.
"""

KCR_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
    # RapidJSON 1.1.0 computes out-of-range pointers in its number and
    # string parsers, which UBSan's pointer-overflow check reports in the
    # sanitizer and fuzz builds. Its headers reach almost every target
    # (through api/object.h), so the check is off everywhere; the flag is a
    # no-op without -fsanitize.
    "-fno-sanitize=pointer-overflow",
]

def kcr_cc_library(name, copts = [], visibility = None, **kwargs):
    native.cc_library(
        name = name,
        copts = KCR_COPTS + copts,
        visibility = visibility,
        **kwargs
    )

def kcr_cc_binary(name, copts = [], **kwargs):
    native.cc_binary(
        name = name,
        copts = KCR_COPTS + copts,
        **kwargs
    )

def kcr_cc_test(name, copts = [], deps = [], size = "small", **kwargs):
    """A GoogleTest test linked with gmock_main.

    `size` follows how long the test (each shard) runs, as Bazel's timeout
    classes expect (.bazelrc keeps --test_verbose_timeout_warnings on):
    "small" (60 s timeout) up to about 20 s, "medium" (300 s) from about
    25 s; a test that runs longer than about 15 s is better sharded than
    moved up. Under --config=tsan every timeout is five times longer.
    """
    native.cc_test(
        name = name,
        copts = KCR_COPTS + copts,
        deps = deps + ["//third_party:gtest_main"],
        size = size,
        **kwargs
    )

def kcr_cc_benchmark(name, copts = [], deps = [], **kwargs):
    """A Google Benchmark program; run it with `bazel run -c opt`."""
    native.cc_binary(
        name = name,
        copts = KCR_COPTS + copts,
        deps = deps + ["//third_party:benchmark"],
        **kwargs
    )

def kcr_cc_fuzz_test(name, srcs, deps = [], copts = [], data = [], **kwargs):
    """A libFuzzer target and a test that replays its seed corpus.

    `srcs` define LLVMFuzzerTestOneInput, which should run its input through
    kcr::fuzz::RunOnServerStack (test/fuzz/server_stack.h, linked in here)
    so that it meets the local API server's connection-thread stack; the
    seed corpus is the directory corpus/<name>/ next to the BUILD file.
    `data` is made available to both targets (paths relative to the
    workspace root). Two targets are made:
      <name>:        a cc_test (any compiler) that feeds every seed to the
                     fuzz function; part of `bazel test //...`.
      <name>_fuzzer: the libFuzzer binary, tagged "manual" and "fuzzer";
                     build it with --config=fuzz (clang). `make fuzz` runs
                     each one for FUZZ_SECONDS on a copy of its corpus.
    """
    corpus = "corpus/" + name
    native.cc_test(
        name = name,
        srcs = srcs,
        copts = KCR_COPTS + copts,
        deps = deps + ["//test/fuzz:replay_main", "//test/fuzz:server_stack"],
        data = data + native.glob([corpus + "/**"]),
        args = [native.package_name() + "/" + corpus],
        size = "small",
        **kwargs
    )
    native.cc_binary(
        name = name + "_fuzzer",
        srcs = srcs,
        copts = KCR_COPTS + copts,
        deps = deps + ["//test/fuzz:server_stack"],
        data = data,
        linkopts = ["-fsanitize=fuzzer"],
        tags = ["manual", "fuzzer"],
        testonly = True,
        **kwargs
    )
