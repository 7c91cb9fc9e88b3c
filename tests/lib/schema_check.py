#!/usr/bin/python3
"""Validates hitmap --json documents against docs/schema/ (JSON Schema draft 2020-12).

usage: schema_check.py [--strict] [--schema NAME] FILE...
       schema_check.py [--strict] --tap LIST

--tap LIST: LIST holds lines "FILE<tab>NAME"; prints "ok NAME" or "not ok NAME" and the
errors (indented) for each, as the e2e tests do: one process for many documents.

Each FILE must hold one JSON document; its "schema" key ("hitmap.report/1") picks
docs/schema/report.json, or --schema NAME forces one. --strict also refuses keys a schema
does not declare (every object with "properties" and no "additionalProperties" of its own
is closed), so that a key added to an emitter without its schema fails the tests; the
published schemas stay open, as the documents are additive. Every key must be snake_case.

Exit 0: all valid; 1: some document is invalid (each error printed as FILE: PATH: MESSAGE);
2: the checker could not run (python3-jsonschema missing, a schema unreadable): a test that
expects a document to fail must ask for exit 1, not just "not 0".
"""
import copy
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_DIR = os.path.join(HERE, "..", "..", "docs", "schema")
KEY = re.compile(r"^[a-z][a-z0-9_]*$")


def die(msg):
    print("schema_check: " + msg, file=sys.stderr)
    sys.exit(2)


try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    die("python3-jsonschema is missing: run make deps (apt-get install python3-jsonschema)")


def close_objects(node):
    """--strict: an object schema with properties and no additionalProperties is closed."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for v in node.values():
            close_objects(v)
    elif isinstance(node, list):
        for v in node:
            close_objects(v)


def load_schemas(strict):
    store = {}
    for path in sorted(glob.glob(os.path.join(SCHEMA_DIR, "*.json"))):
        try:
            with open(path) as f:
                s = json.load(f)
        except (OSError, ValueError) as e:
            die("%s: %s" % (path, e))
        try:
            Draft202012Validator.check_schema(s)
        except jsonschema.exceptions.SchemaError as e:
            die("%s: not a valid draft 2020-12 schema: %s" % (path, e.message))
        if strict:
            s = copy.deepcopy(s)
            close_objects(s)
        store[os.path.basename(path)[:-5]] = s
    if "common" not in store:
        die("%s: no common.json: run from a hitmap checkout" % SCHEMA_DIR)
    return store


def validator(store, name):
    schema = store[name]
    try:	# jsonschema >= 4.18: the referencing library
        from referencing import Registry, Resource
        reg = Registry().with_resources(
            (s["$id"], Resource.from_contents(s)) for s in store.values())
        return Draft202012Validator(schema, registry=reg)
    except ImportError:	# Debian 12's 4.10
        res = jsonschema.RefResolver(schema["$id"], schema,
                                     store={s["$id"]: s for s in store.values()})
        return Draft202012Validator(schema, resolver=res)


def bad_keys(node, path, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if not KEY.match(k):
                out.append("%s: key %r is not snake_case" % (path or "/", k))
            bad_keys(v, "%s/%s" % (path, k), out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            bad_keys(v, "%s/%d" % (path, i), out)


def check_file(store, path, forced):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        return ["cannot read it: %s" % e]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["not UTF-8, as JSON must be (RFC 8259): byte 0x%02x at offset %d"
                % (raw[e.start], e.start)]
    if not text.strip():
        return ["empty: no JSON document"]
    try:
        doc = json.loads(text)
    except ValueError as e:
        return ["not JSON: %s" % e]
    name = forced
    if name is None:
        tag = doc.get("schema") if isinstance(doc, dict) else None
        m = re.match(r"^hitmap\.([a-z][a-z.]*)/[0-9]+$", tag) if isinstance(tag, str) else None
        if not m:
            return ["no \"schema\": \"hitmap.NAME/N\" key to pick a schema by"]
        name = m.group(1)
    if name not in store or name == "common":
        return ["no docs/schema/%s.json" % name]
    errs = ["%s: %s" % ("/" + "/".join(str(p) for p in e.absolute_path), e.message)
            for e in sorted(validator(store, name).iter_errors(doc),
                            key=lambda e: list(map(str, e.absolute_path)))]
    bad_keys(doc, "", errs)
    return errs


def main(argv):
    strict, forced, tap, files = False, None, None, []
    it = iter(argv)
    for a in it:
        if a == "--strict":
            strict = True
        elif a == "--schema":
            forced = next(it, None)
        elif a == "--tap":
            tap = next(it, None)
        elif a.startswith("-"):
            die("unknown option %s" % a)
        else:
            files.append(a)
    names = {}
    if tap:
        try:
            with open(tap) as f:
                for ln in f.read().splitlines():
                    path, _, name = ln.partition("\t")
                    files.append(path)
                    names[path] = name or path
        except OSError as e:
            die("--tap %s: %s" % (tap, e))
    if not files:
        die("give the JSON files to check")
    store = load_schemas(strict)
    failed = 0
    for path in files:
        errs = check_file(store, path, forced)
        if tap:
            print("%s %s" % ("not ok" if errs else "ok", names[path]))
        for e in errs[:20]:
            print("    " + e if tap else "%s: %s" % (path, e))
        if len(errs) > 20:
            print("%s... %d more" % ("    " if tap else path + ": ", len(errs) - 20))
        failed += bool(errs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
