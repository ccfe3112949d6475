// The project templates of cmd/kcr/templates/, compiled into the binary
// (embed_templates.bzl). Paths are relative to that folder, without their
// ".tmpl" suffix; {{Name}} placeholders are substituted by scaffold.cc.
#ifndef KCR_CMD_KCR_TEMPLATES_H_
#define KCR_CMD_KCR_TEMPLATES_H_

namespace kcr::scaffold {

struct Template {
  const char* path;  // e.g. "init/bazel/WORKSPACE"
  const char* text;
};
extern const Template kTemplates[];
extern const int kTemplateCount;

// The absolute path of the kcr checkout this binary was built from, or ""
// when unknown (the default of `kcr init --kcr-path`).
extern const char kBuiltFrom[];

}  // namespace kcr::scaffold

#endif  // KCR_CMD_KCR_TEMPLATES_H_
