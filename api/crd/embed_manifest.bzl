"""embed_manifest: a manifest's text as a C++ string constant.

The CRD types validate and default custom resources with the schema of
their manifest under manifests/crds. Compiling the manifest's text into the
library, rather than reading the file at run time, keeps one source of
truth without making the binaries depend on where the manifests are
installed.
"""

def embed_manifest(name, src, symbol, header):
    """Generates <name>.cc defining `const char <symbol>[]` as src's text.

    The constant is declared in `header` (in namespace kcr::api::crd),
    which the generated file includes so that the two cannot disagree.
    """
    native.genrule(
        name = name,
        srcs = [src],
        outs = [name + ".cc"],
        cmd = " ".join([
            "{",
            "echo '// Generated from $(location %s); do not edit.';" % src,
            "echo '#include \"%s\"';" % header,
            "echo 'namespace kcr { namespace api { namespace crd {';",
            "echo 'const char %s[] = R\"kcr_manifest(';" % symbol,
            "cat $(location %s);" % src,
            "echo ')kcr_manifest\";';",
            "echo '}  // namespace crd'; echo '}  // namespace api';",
            "echo '}  // namespace kcr';",
            "} > $@",
        ]),
    )
