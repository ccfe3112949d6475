"""embed_samples: manifest files as a C++ array of {path, text}.

--embedded installs manifests/samples into its API server; compiling them
into the binary keeps `bazel run` and a copied binary alike.
"""

def embed_samples(
        name,
        srcs,
        header,
        array = "kEmbeddedSamples",
        count = "kEmbeddedSampleCount"):
    """Generates <name>.cc defining the array `array` and its `count`.

    Every file of `srcs` except kustomization.yaml, in label order, each
    named by its path under the workspace; the declarations are in `header`
    (namespace kcr::cmd), which the generated file includes.
    """
    native.genrule(
        name = name,
        srcs = srcs,
        outs = [name + ".cc"],
        cmd = """{
echo '// Generated from manifests/; do not edit.'
echo '#include "%s"'
echo 'namespace kcr { namespace cmd {'
echo 'const EmbeddedManifest %s[] = {'
n=0
for f in $(SRCS); do
  case "$$f" in */kustomization.yaml) continue ;; esac
  echo "{\\"manifests/$${f#*manifests/}\\", R\\"kcr_manifest("
  cat "$$f"
  echo ')kcr_manifest"},'
  n=$$((n + 1))
done
echo '};'
echo "const int %s = $$n;"
echo '}  // namespace cmd'
echo '}  // namespace kcr'
} > $@""" % (header, array, count),
    )
