"""The installable kcr: libraries, headers, CMake and pkg-config files.

kcr_package_library turns one public umbrella target (//:runtime,
//:apiserver, ...) into a static and a shared library holding the kcr
objects of its closure, less those of the libraries it stands on (`below`),
which the shared library links against instead. kcr_package writes the CMake
package (kcrConfig.cmake, kcrConfigVersion.cmake), the .pc files and the
install manifest that packaging/install.sh copies from.

Everything a consumer needs to know comes from the umbrella's CcInfo, never
retyped: the link flags of the system-library wrappers (third_party/
BUILD.bazel) and the defines they carry (RAPIDJSON_HAS_STDSTRING=1).
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load(":version.bzl", "KCR_VERSION")

_KcrHeadersInfo = provider(
    doc = "The hdrs of the kcr cc_librarys in a target's closure.",
    fields = {"headers": "depset of header Files"},
)

KcrLibraryInfo = provider(
    doc = "One packaged kcr library.",
    fields = {
        "name": "the library's name without lib and suffix (kcr_runtime)",
        "target": "the CMake target and pc module suffix (runtime)",
        "owners": "dict of the labels whose objects this library or one below holds",
        "static": "the static library File",
        "shared": "the shared library File (lib<name>.so.<version>)",
        "below": "list of the KcrLibraryInfo this library links against",
        "link_flags": "system link flags beyond those of `below`, in order",
        "all_link_flags": "every system link flag of the closure",
        "defines": "defines beyond those of `below`",
        "all_defines": "every define of the closure",
        "headers": "depset of the closure's header Files",
    },
)

def _headers_aspect_impl(target, ctx):
    direct = []
    if target.label.workspace_name == "" and hasattr(ctx.rule.attr, "hdrs"):
        for h in ctx.rule.attr.hdrs:
            direct.extend(h.files.to_list())
    transitive = [
        d[_KcrHeadersInfo].headers
        for d in getattr(ctx.rule.attr, "deps", [])
        if _KcrHeadersInfo in d
    ]
    return [_KcrHeadersInfo(headers = depset(direct, transitive = transitive))]

_headers_aspect = aspect(
    implementation = _headers_aspect_impl,
    attr_aspects = ["deps"],
)

def _dedup(items):
    seen = {}
    out = []
    for i in items:
        if i not in seen:
            seen[i] = True
            out.append(i)
    return out

def _soname(name):
    return "lib%s.so.%s" % (name, KCR_VERSION.split(".")[0])

def _member_name(f):
    # runtime/workqueue/_objs/metrics/metrics.pic.o -> runtime_workqueue_metrics_metrics.pic.o
    return f.short_path.replace("/_objs/", "/").replace("/", "_")

def _package_library_impl(ctx):
    cc = ctx.attr.lib[CcInfo]
    below = [b[KcrLibraryInfo] for b in ctx.attr.below]
    excluded = {}
    below_flags = {}
    below_defines = {}
    for b in below:
        excluded.update(b.owners)
        for f in b.all_link_flags:
            below_flags[f] = True
        for d in b.all_defines:
            below_defines[d] = True

    owners = dict(excluded)
    objects = []
    flags = []
    for li in cc.linking_context.linker_inputs.to_list():
        # The system-library wrappers carry only flags; kcr's own libraries
        # carry objects (and may carry flags too).
        flags.extend(li.user_link_flags)
        owner = str(li.owner)
        if owner in excluded:
            continue
        if li.libraries and li.owner.workspace_name != "":
            fail("%s: %s is outside kcr; only kcr's own objects are packaged" % (ctx.label, owner))
        owners[owner] = True
        for lib in li.libraries:
            objects.extend(lib.pic_objects or lib.objects)
    all_flags = _dedup(flags)
    all_defines = _dedup(cc.compilation_context.defines.to_list())

    static = ctx.actions.declare_file("lib%s.a" % ctx.attr.library_name)
    args = ctx.actions.args()
    cc_toolchain = find_cpp_toolchain(ctx)
    args.add(cc_toolchain.ar_executable)
    args.add(static)
    for o in objects:
        args.add(o)
        args.add(_member_name(o))
    ctx.actions.run(
        executable = ctx.executable._merge_archive,
        arguments = [args],
        inputs = objects,
        outputs = [static],
        tools = cc_toolchain.all_files,
        mnemonic = "KcrArchive",
        progress_message = "Merging %d objects into %s" % (len(objects), static.short_path),
    )

    shared = ctx.actions.declare_file("lib%s.so.%s" % (ctx.attr.library_name, KCR_VERSION))
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    action = "c++-link-dynamic-library"
    linker = cc_common.get_tool_for_action(
        feature_configuration = feature_configuration,
        action_name = action,
    )

    # The toolchain's own flags for a shared library (-shared, -B/usr/bin,
    # -fuse-ld=gold, -lstdc++ ...), and its environment.
    link_variables = cc_common.create_link_variables(
        cc_toolchain = cc_toolchain,
        feature_configuration = feature_configuration,
        is_using_linker = True,
        is_linking_dynamic_library = True,
    )
    link = ctx.actions.args()
    link.add_all(cc_common.get_memory_inefficient_command_line(
        feature_configuration = feature_configuration,
        action_name = action,
        variables = link_variables,
    ))
    link.add_all(["-o", shared])
    link.add("-Wl,-soname," + _soname(ctx.attr.library_name))
    # The build's own --linkopt flags (a sanitizer's, say).
    linkopts = ctx.fragments.cpp.linkopts
    link.add_all(linkopts)

    # Every symbol resolves against the libraries named here: proof that
    # the link flags written for consumers are complete. Not under a
    # sanitizer, whose runtime only an executable links.
    if not [o for o in linkopts if o.startswith("-fsanitize")]:
        link.add("-Wl,-z,defs")
    link.add_all(["-Wl,--whole-archive", static, "-Wl,--no-whole-archive"])
    below_files = []
    for b in below:
        link.add(b.shared)
        below_files.append(b.shared)
    if below:
        # The kcr libraries find each other where they are installed.
        link.add("-Wl,-rpath,$ORIGIN")
    link.add_all(all_flags)
    ctx.actions.run(
        executable = linker,
        arguments = [link],
        env = cc_common.get_environment_variables(
            feature_configuration = feature_configuration,
            action_name = action,
            variables = link_variables,
        ),
        inputs = depset([static] + below_files, transitive = [cc_toolchain.all_files]),
        outputs = [shared],
        mnemonic = "KcrSharedLibrary",
        progress_message = "Linking %s" % shared.short_path,
    )

    info = KcrLibraryInfo(
        name = ctx.attr.library_name,
        target = ctx.attr.cmake_name,
        owners = owners,
        static = static,
        shared = shared,
        below = below,
        link_flags = [f for f in all_flags if f not in below_flags],
        all_link_flags = all_flags,
        defines = [d for d in all_defines if d not in below_defines],
        all_defines = all_defines,
        headers = ctx.attr.lib[_KcrHeadersInfo].headers,
    )
    return [info, DefaultInfo(files = depset([static, shared]))]

kcr_package_library = rule(
    implementation = _package_library_impl,
    doc = "A static and a shared library from one public umbrella target.",
    attrs = {
        "lib": attr.label(
            mandatory = True,
            providers = [CcInfo],
            aspects = [_headers_aspect],
        ),
        "library_name": attr.string(mandatory = True, doc = "kcr_runtime for libkcr_runtime.so"),
        "cmake_name": attr.string(mandatory = True, doc = "runtime for kcr::runtime and kcr-runtime"),
        "below": attr.label_list(
            providers = [KcrLibraryInfo],
            doc = "packaged libraries this one links against (their objects are left out)",
        ),
        "_merge_archive": attr.label(
            default = ":merge_archive",
            executable = True,
            cfg = "exec",
        ),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
)

def _cmake_list(items):
    return ";".join(items)

def _cmake_targets(lib):
    """The imported targets of one library, in kcrConfig.cmake."""
    t = "kcr::" + lib.target
    lines = ["# %s: lib%s (kcr's %s)." % (t, lib.name, lib.target)]
    for kind, file, prop in [
        ("shared", lib.shared.basename, 'IMPORTED_SONAME "%s"\n  ' % _soname(lib.name)),
        ("static", lib.static.basename, ""),
    ]:
        # The libraries below, the nearest first, as a static link needs.
        deps = ["kcr::%s_%s" % (b.target, kind) for b in reversed(lib.below)] + lib.link_flags
        lines.append("""add_library({t}_{kind} {KIND} IMPORTED)
set_target_properties({t}_{kind} PROPERTIES
  IMPORTED_LOCATION "${{_kcr_prefix}}/lib/{file}"
  {soname}INTERFACE_INCLUDE_DIRECTORIES "${{_kcr_prefix}}/include/kcr"
  INTERFACE_COMPILE_DEFINITIONS "{defines}"
  INTERFACE_COMPILE_FEATURES "cxx_std_17"
  INTERFACE_LINK_LIBRARIES "{deps}")""".format(
            t = t,
            kind = kind,
            KIND = kind.upper(),
            file = file,
            soname = prop,
            defines = _cmake_list(lib.all_defines),
            deps = _cmake_list(deps),
        ))
    lines.append("""add_library({t} INTERFACE IMPORTED)
if(KCR_USE_STATIC_LIBS)
  set_target_properties({t} PROPERTIES INTERFACE_LINK_LIBRARIES {t}_static)
else()
  set_target_properties({t} PROPERTIES INTERFACE_LINK_LIBRARIES {t}_shared)
endif()
""".format(t = t))
    return "\n".join(lines)

_CONFIG_HEAD = """# The CMake package of kcr {version}, a Kubernetes controller runtime in C++
# (written by `make install`; docs/using-kcr.md).
#
#   find_package(kcr CONFIG REQUIRED)
#   target_link_libraries(app kcr::runtime)
#
# Targets: {targets}. Each carries
# its include directory, defines, C++17 and its link dependencies on the
# system libraries. kcr::<name> links the shared library; with
# KCR_USE_STATIC_LIBS set ON before find_package it links the static one.
# kcr::<name>_shared and kcr::<name>_static name either explicitly.
# Paths are relative to this file, so a moved prefix still works.

if(TARGET kcr::runtime_shared)
  return()
endif()

get_filename_component(_kcr_prefix "${{CMAKE_CURRENT_LIST_DIR}}/../../.." ABSOLUTE)
"""

_CONFIG_VERSION = """# kcr {version}: compatible with a request for the same major.minor (a 0.x
# minor version may change the API), no newer than this one.
set(PACKAGE_VERSION "{version}")
if(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(PACKAGE_FIND_VERSION_MAJOR STREQUAL "{major}" AND PACKAGE_FIND_VERSION_MINOR STREQUAL "{minor}")
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
# Built for 64-bit x86 Linux: a 32-bit project cannot use it (a project
# without a language enabled does not say).
if(CMAKE_SIZEOF_VOID_P AND NOT CMAKE_SIZEOF_VOID_P STREQUAL "8")
  set(PACKAGE_VERSION "${{PACKAGE_VERSION}} (64bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
"""

def _pc_module(lib):
    return "kcr" if lib.target == "runtime" else "kcr-" + lib.target

def _pc(lib):
    requires = ", ".join([_pc_module(b) for b in lib.below])
    return """prefix=@PREFIX@
libdir=${{prefix}}/lib
includedir=${{prefix}}/include/kcr

Name: {module}
Description: kcr {target}, from a Kubernetes controller runtime in C++ (C++17)
Version: {version}
Requires:{requires}
Libs: -L${{libdir}} -l{name} {flags}
Cflags: -I${{includedir}} {defines}
""".format(
        module = _pc_module(lib),
        target = lib.target,
        version = KCR_VERSION,
        requires = " " + requires if requires else "",
        name = lib.name,
        # The system libraries are in Libs, not Libs.private: kcr's headers
        # are templates and inline functions that call them directly.
        flags = " ".join(lib.link_flags),
        defines = " ".join(["-D" + d for d in lib.defines]),
    )

def _package_impl(ctx):
    libs = [l[KcrLibraryInfo] for l in ctx.attr.libraries]
    major, minor = KCR_VERSION.split(".")[0:2]

    config = ctx.actions.declare_file("kcr/kcrConfig.cmake")
    ctx.actions.write(config, "\n".join(
        [_CONFIG_HEAD.format(
            version = KCR_VERSION,
            targets = ", ".join(["kcr::" + l.target for l in libs]),
        )] + [_cmake_targets(l) for l in libs] + ["unset(_kcr_prefix)\n"],
    ))
    config_version = ctx.actions.declare_file("kcr/kcrConfigVersion.cmake")
    ctx.actions.write(config_version, _CONFIG_VERSION.format(
        version = KCR_VERSION,
        major = major,
        minor = minor,
    ))

    # The manifest: one line per installed path, tab-separated.
    #   file MODE SOURCE DEST      copy SOURCE (relative to the execroot)
    #   pc MODE SOURCE DEST        the same, with @PREFIX@ replaced
    #   link TARGET DEST           a symbolic link
    lines = []
    outputs = [config, config_version]
    for l in libs:
        lines.append("file\t0644\t%s\tlib/%s" % (l.static.path, l.static.basename))
        lines.append("file\t0755\t%s\tlib/%s" % (l.shared.path, l.shared.basename))
        lines.append("link\t%s\tlib/%s" % (l.shared.basename, _soname(l.name)))
        lines.append("link\t%s\tlib/lib%s.so" % (_soname(l.name), l.name))
        pc = ctx.actions.declare_file("kcr/%s.pc" % _pc_module(l))
        ctx.actions.write(pc, _pc(l))
        outputs.append(pc)
        lines.append("pc\t0644\t%s\tlib/pkgconfig/%s" % (pc.path, pc.basename))
        outputs.extend([l.static, l.shared])
    lines.append("file\t0644\t%s\tlib/cmake/kcr/%s" % (config.path, config.basename))
    lines.append("file\t0644\t%s\tlib/cmake/kcr/%s" % (config_version.path, config_version.basename))

    # Public headers only: whatever is under an internal/ folder stays
    # private (the install test compiles every installed header alone,
    # which fails if a public one includes a private one).
    headers = depset(transitive = [l.headers for l in libs]).to_list()
    installed = {}
    for h in headers:
        if not h.is_source:
            fail("%s: generated header %s is not installable" % (ctx.label, h.short_path))
        if "/internal/" in "/" + h.short_path or h.short_path in installed:
            continue
        installed[h.short_path] = True
        lines.append("file\t0644\t%s\tinclude/kcr/%s" % (h.path, h.short_path))
        outputs.append(h)

    manifest = ctx.actions.declare_file("install_manifest.txt")
    ctx.actions.write(manifest, "\n".join(lines) + "\n")
    return [DefaultInfo(files = depset([manifest] + outputs))]

kcr_package = rule(
    implementation = _package_impl,
    doc = "kcr's CMake package, .pc files and install manifest.",
    attrs = {
        "libraries": attr.label_list(
            mandatory = True,
            providers = [KcrLibraryInfo],
            doc = "the packaged libraries, each after those it links against",
        ),
    },
)
