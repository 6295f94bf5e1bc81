"""Validates the SpinApp documents of Kubernetes YAML files against a SpinApp CRD's schema.

usage: validate.py CRD.yaml MANIFEST.yaml...

Stricter than the API server, which prunes fields it does not know: an unknown field is an
error here (a misspelled `replica` would otherwise be dropped in silence). Prints one line per
problem and exits 1 when there is any.
"""
import copy
import sys

import yaml
from jsonschema import Draft7Validator


def strict(schema):
    """The schema with unknown fields refused wherever the CRD lists the known ones."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if node.get("nullable") is True and isinstance(node.get("type"), str):
                node["type"] = [node["type"], "null"]
            if (
                "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def main(crd_path, *manifests):
    with open(crd_path) as f:
        crd = yaml.safe_load(f)
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    validators = {}
    for version in crd["spec"]["versions"]:
        schema = strict(version["schema"]["openAPIV3Schema"])
        Draft7Validator.check_schema(schema)
        validators[f"{group}/{version['name']}"] = Draft7Validator(schema)
    problems = 0
    checked = 0
    for path in manifests:
        with open(path) as f:
            documents = list(yaml.safe_load_all(f))
        for i, doc in enumerate(documents):
            if not doc or doc.get("kind") != kind:
                continue
            checked += 1
            validator = validators.get(doc.get("apiVersion"))
            if validator is None:
                errors = [f"apiVersion {doc.get('apiVersion')!r} is not one of {sorted(validators)}"]
            else:
                errors = [
                    f"{'.'.join(map(str, e.absolute_path)) or '(document)'}: {e.message}"
                    for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
                ]
            if not (doc.get("metadata") or {}).get("name"):
                errors.append("metadata.name: missing")
            # The operator's admission webhook: replicas > 0 unless autoscaling.
            spec = doc.get("spec") or {}
            replicas = spec.get("replicas", 1)
            if not spec.get("enableAutoscaling") and isinstance(replicas, int) and replicas < 1:
                errors.append("spec.replicas: must be > 0")
            for error in errors:
                print(f"{path} [document {i + 1}]: {error}")
            problems += len(errors)
    if checked == 0:
        print(f"no {kind} document in {', '.join(manifests)}")
        return 1
    print(f"{checked} {kind} document(s), {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
