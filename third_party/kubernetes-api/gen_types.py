#!/usr/bin/python3
"""Turns api.json.gz (vendor.py) into C++ tables of the built-in API's Go
types: apiserver/registry/builtin_types.h declares what this writes.

    gen_types.py api.json.gz builtin_types.cc

Every model becomes a struct with its fields in the package's order, each
with its JSON name, type, whether it is required and its description. A
type this does not know fails the build: nothing is guessed. Standard
library only (Bazel runs it with Debian's /usr/bin/python3).
"""

import gzip
import json
import re
import sys

# What the package's models lose, from k8s.io/api's Go types: fields of
# type resource.Quantity (the package makes them strings). Each entry must
# match a field of the source, so a change upstream fails here loudly.
QUANTITY_FIELDS = [
    "CSIStorageCapacity.capacity", "CSIStorageCapacity.maximumVolumeSize",
    "ContainerStatus.allocatedResources", "DeviceCapacity.value",
    "Counter.value", "EmptyDirVolumeSource.sizeLimit",
    "LimitRangeItem.default", "LimitRangeItem.defaultRequest",
    "LimitRangeItem.max", "LimitRangeItem.maxLimitRequestRatio",
    "LimitRangeItem.min", "MetricTarget.averageValue", "MetricTarget.value",
    "MetricValueStatus.averageValue", "MetricValueStatus.value",
    "NodeStatus.allocatable", "NodeStatus.capacity", "Overhead.podFixed",
    "PersistentVolumeClaimStatus.allocatedResources",
    "PersistentVolumeClaimStatus.capacity", "PersistentVolumeSpec.capacity",
    "PodSpec.overhead", "ResourceFieldSelector.divisor",
    "ResourceQuotaSpec.hard", "ResourceQuotaStatus.hard",
    "ResourceQuotaStatus.used", "ResourceRequirements.limits",
    "ResourceRequirements.requests", "VolumeResourceRequirements.limits",
    "VolumeResourceRequirements.requests",
]

# k8s.io/apimachinery/pkg/apis/meta/v1's types among the models.
META_V1 = {
    "APIGroup", "APIGroupList", "APIResource", "APIResourceList",
    "APIVersions", "Condition", "DeleteOptions", "FieldSelectorRequirement",
    "GroupVersionForDiscovery", "LabelSelector", "LabelSelectorRequirement",
    "ListMeta", "ManagedFieldsEntry", "ObjectMeta", "OwnerReference",
    "Preconditions", "ServerAddressByClientCIDR", "Status", "StatusCause",
    "StatusDetails", "WatchEvent",
}

# The package prefixes a model's name with its group where two groups
# have a type of that name (CoreV1Event, EventsV1Event).
NAME_RE = re.compile(r"^([A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$")

KINDS = {  # GoType::Kind
    "string": "kString", "bool": "kBool", "int32": "kInt32",
    "int64": "kInt64", "float64": "kFloat64", "bytes": "kBytes",
    "quantity": "kQuantity", "intstr": "kIntOrString", "time": "kTime",
    "any": "kAny", "struct": "kStruct", "map": "kMap", "slice": "kSlice",
}

SCALARS = {  # (type, format) -> (kind, Go name)
    ("string", ""): ("string", "string"),
    ("string", "byte"): ("bytes", "[]uint8"),
    ("boolean", ""): ("bool", "bool"),
    ("number", "int32"): ("int32", "int32"),
    ("number", "int64"): ("int64", "int64"),
    ("number", "double"): ("float64", "float64"),
    ("Date", "date-time"): ("time", "v1.Time"),
    ("V1MicroTime", "date-time-micro"): ("time", "v1.MicroTime"),
    ("IntOrString", "int-or-string"): ("intstr", "intstr.IntOrString"),
    ("any", ""): ("any", "runtime.RawExtension"),
}


def fail(message):
    sys.exit("gen_types.py: " + message)


def package_of(group):
    """The kube-openapi name prefix of a group's Go package."""
    if group == "":
        return "io.k8s.api.core"
    if group == "apiextensions.k8s.io":
        return "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions"
    if group == "apiregistration.k8s.io":
        return "io.k8s.kube-aggregator.pkg.apis.apiregistration"
    if group == "internal.apiserver.k8s.io":
        return "io.k8s.api.apiserverinternal"
    return "io.k8s.api." + group.split(".")[0]


def c_string(s):
    out = ['"']
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "?":
            out.append("\\?")  # no trigraphs
        elif ord(ch) < 0x20:
            out.append("\\%03o" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class Tables:
    def __init__(self, doc):
        self.models = doc["models"]
        self.types = []  # [kind, go name, elem, fields, openapi name, desc]
        self.index = {}  # key -> type index
        self.quantity = {f: False for f in QUANTITY_FIELDS}
        self.openapi = {}
        self.go_names = {}
        for name in self.models:
            m = NAME_RE.match(name)
            if m:
                self.go_names[name] = (m.group(2).lower(), m.group(3))
            elif name == "VersionInfo":  # k8s.io/apimachinery/pkg/version
                self.go_names[name] = ("version", "Info")
            else:
                fail("model %s: name not understood" % name)

    def add(self, key, kind, go_name, elem=-1, openapi="", desc=""):
        if key in self.index:
            return self.index[key]
        self.index[key] = len(self.types)
        self.types.append([kind, go_name, elem, None, openapi, desc])
        return self.index[key]

    def field_type(self, owner, field, t, fmt):
        label = "%s.%s" % (owner, field)
        if t.startswith("Array<") and t.endswith(">"):
            e = self.field_type(owner, field, t[6:-1], fmt)
            return self.add(("slice", e), "slice", "[]" + self.types[e][1], e)
        if t.startswith("{ [key: string]: ") and t.endswith("; }"):
            e = self.field_type(owner, field, t[17:-3], fmt)
            return self.add(("map", e), "map", "map[string]" + self.types[e][1], e)
        if label in self.quantity and (t, fmt) == ("string", ""):
            self.quantity[label] = True
            return self.add("quantity", "quantity", "resource.Quantity")
        if (t, fmt) in SCALARS:
            kind, go = SCALARS[(t, fmt)]
            return self.add(kind + ":" + go, kind, go)
        if t in self.models:
            return self.struct(t)
        fail("%s: type %r (format %r) not understood" % (label, t, fmt))

    def struct(self, name):
        if name in self.index:
            return self.index[name]
        version, short = self.go_names[name]
        m = self.models[name]
        i = self.add(name, "struct", "%s.%s" % (version, short),
                     openapi=self.openapi.get(name, ""), desc=m["description"])
        rows = []
        for json_name, t, fmt, required, desc in m["fields"]:
            if not desc and t in self.models:
                # The package drops the description of a field whose type
                # is another model: the model's own stands in for it.
                desc = self.models[t]["description"]
            rows.append([json_name, self.field_type(short, json_name, t, fmt),
                         required, desc])
        self.types[i][3] = rows
        return i

    def name_models(self, resources):
        """kube-openapi names: meta/v1 by name, the rest after the group of
        the first resource that reaches them (core first)."""
        for name, (version, short) in self.go_names.items():
            if short in META_V1 and version == "v1":
                self.openapi[name] = "io.k8s.apimachinery.pkg.apis.meta.v1." + short
        for group, _, _, _, model in resources:
            pending = [model]
            while pending:
                name = pending.pop()
                if name in self.openapi:
                    continue
                version, short = self.go_names[name]
                self.openapi[name] = "%s.%s.%s" % (package_of(group), version, short)
                for _, t, _, _, _ in self.models[name]["fields"]:
                    for ref in re.findall(r"\w+", t):
                        if ref in self.models:
                            pending.append(ref)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_types.py api.json.gz builtin_types.cc")
    with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f:
        doc = json.load(f)
    tables = Tables(doc)
    resources = sorted(doc["resources"], key=lambda r: (r[0] != "", r[0], r[1], r[2]))
    tables.name_models(resources)
    rows = []
    for group, version, plural, namespaced, model in resources:
        go_version, kind = tables.go_names[model]
        if go_version != version:
            fail("%s/%s %s: model %s is of version %s" % (group, version, plural, model, go_version))
        rows.append((group, version, plural, kind, namespaced, tables.struct(model)))
    for name in sorted(tables.models):
        tables.struct(name)
    for label, used in tables.quantity.items():
        if not used:
            fail("%s: no such field of the right type in the source" % label)
    out = []
    w = out.append
    w("// Generated by third_party/kubernetes-api/gen_types.py from %s" % doc["source"])
    w("// (Kubernetes %s). Do not edit." % doc["kubernetes"])
    w('#include "apiserver/registry/builtin_types.h"')
    w("")
    w("namespace kcr {")
    w("namespace apiserver {")
    w("namespace builtin_types {")
    w("")
    w("const char kKubernetesVersion[] = %s;" % c_string(doc["kubernetes"]))
    w("")
    w("const TypeRow kTypes[] = {")
    field_rows = []
    for kind, go, elem, fields, openapi, desc in tables.types:
        first = len(field_rows)
        for f in fields or []:
            field_rows.append(f)
        w("    {GoType::Kind::%s, %s, %d, %d, %d, %s, %s}," % (
            KINDS[kind], c_string(go), elem, first, len(fields or []),
            c_string(openapi), c_string(desc)))
    w("};")
    w("const int kNumTypes = %d;" % len(tables.types))
    w("")
    w("const FieldRow kFields[] = {")
    for json_name, t, required, desc in field_rows:
        w("    {%s, %d, %s, %s}," % (c_string(json_name), t,
                                    "true" if required else "false", c_string(desc)))
    w("};")
    w("const int kNumFields = %d;" % len(field_rows))
    w("")
    w("const ResourceRow kResources[] = {")
    for group, version, plural, kind, namespaced, t in rows:
        w("    {%s, %s, %s, %s, %s, %d}," % (c_string(group), c_string(version),
                                         c_string(plural), c_string(kind),
                                         "true" if namespaced else "false", t))
    w("};")
    w("const int kNumResources = %d;" % len(rows))
    w("")
    w("}  // namespace builtin_types")
    w("}  // namespace apiserver")
    w("}  // namespace kcr")
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
