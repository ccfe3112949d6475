"""embed_templates: the scaffolder's templates as a C++ array of {path, text}.

Compiling them into the binary keeps `bazel run //cmd/kcr` and a copied
binary alike. The generated file also records the checkout the binary was
built from (kBuiltFrom), the default of `kcr init --kcr-path`.
"""

def embed_templates(name, srcs, header, workspace_file):
    """Generates <name>.cc defining kTemplates, kTemplateCount and kBuiltFrom.

    Every file of `srcs` (named <path>.tmpl under a templates/ folder) in
    label order; the declarations are in `header` (namespace
    kcr::scaffold), which the generated file includes. `workspace_file`, a
    file at the root of the checkout, is resolved through its symlinks to
    find the checkout. The action is neither cached nor sandboxed: its
    output depends on where the checkout is, which no input says.
    """
    native.genrule(
        name = name,
        srcs = srcs + [workspace_file],
        outs = [name + ".cc"],
        tags = ["no-cache", "no-remote", "local"],
        cmd = """{
echo '// Generated from cmd/kcr/templates; do not edit.'
echo '#include "%s"'
echo 'namespace kcr { namespace scaffold {'
echo 'const Template kTemplates[] = {'
n=0
for f in $(SRCS); do
  case "$$f" in *.tmpl) ;; *) continue ;; esac
  rel=$${f#*cmd/kcr/templates/}
  echo "{\\"$${rel%%.tmpl}\\", R\\"kcr_template("
  cat "$$f"
  echo ')kcr_template"},'
  n=$$((n + 1))
done
echo '};'
echo "const int kTemplateCount = $$n;"
root=$$(dirname "$$(readlink -f $(location %s))")
case "$$root" in */execroot/*|*/sandbox/*) root= ;; esac
echo "const char kBuiltFrom[] = \\"$$root\\";"
echo '}  // namespace scaffold'
echo '}  // namespace kcr'
} > $@""" % (header, workspace_file),
    )
