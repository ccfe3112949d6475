"""kcr's own dependencies, for a workspace that depends on kcr.

    local_repository(name = "kcr", path = "/path/to/kcr")
    load("@kcr//:repositories.bzl", "kcr_dependencies")
    kcr_dependencies()

kcr builds offline against Debian's system libraries: @kcr//third_party
wraps each one (third_party/deps.sh installs them), and Bazel 4.2's own
@bazel_tools needs three repositories that it would otherwise download
(rules_cc, rules_java, remote_coverage_tools). kcr_dependencies() declares
kcr's local stand-ins for those three, unless the workspace declared its
own first. kcr's WORKSPACE uses the same stand-ins.
"""

# The repositories @bazel_tools loads, each with a stand-in under
# third_party/bazel/ (BAZEL_OFFLINE.md in docs/using-kcr.md says why).
_STAND_INS = ["rules_cc", "rules_java", "remote_coverage_tools"]

def _stand_in_impl(rctx):
    # The folder of the stand-in inside kcr's own checkout, found through
    # a file of kcr's root package, whatever name the workspace gave kcr.
    root = rctx.path(rctx.attr._kcr_workspace).dirname
    src = root.get_child("third_party").get_child("bazel").get_child(rctx.attr.stand_in)
    if not src.exists:
        fail("kcr: %s is missing; is @kcr a full checkout of kcr?" % src)
    for child in src.readdir():
        rctx.symlink(child, child.basename)

_stand_in = repository_rule(
    implementation = _stand_in_impl,
    attrs = {
        "stand_in": attr.string(mandatory = True),
        "_kcr_workspace": attr.label(default = Label("//:WORKSPACE")),
    },
    local = True,
)

def kcr_dependencies():
    """Declares what kcr needs in the calling WORKSPACE (call it once)."""
    for name in _STAND_INS:
        if not native.existing_rule(name):
            _stand_in(name = name, stand_in = name)
