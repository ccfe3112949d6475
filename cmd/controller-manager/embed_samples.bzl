"""embed_samples: manifest files as a C++ array of {path, text}.

--embedded installs manifests/samples into its API server; compiling them
into the binary keeps `bazel run` and a copied binary alike.
"""

def embed_samples(name, srcs, header):
    """Generates <name>.cc defining kEmbeddedSamples and its count.

    Every file of `srcs` except kustomization.yaml, in label order; the
    declarations are in `header` (namespace kcr::cmd), which the generated
    file includes.
    """
    native.genrule(
        name = name,
        srcs = srcs,
        outs = [name + ".cc"],
        cmd = """{
echo '// Generated from manifests/samples; do not edit.'
echo '#include "%s"'
echo 'namespace kcr { namespace cmd {'
echo 'const EmbeddedManifest kEmbeddedSamples[] = {'
n=0
for f in $(SRCS); do
  case "$$f" in */kustomization.yaml) continue ;; esac
  echo "{\\"manifests/samples/$$(basename $$f)\\", R\\"kcr_manifest("
  cat "$$f"
  echo ')kcr_manifest"},'
  n=$$((n + 1))
done
echo '};'
echo "const int kEmbeddedSampleCount = $$n;"
echo '}  // namespace cmd'
echo '}  // namespace kcr'
} > $@""" % header,
    )
