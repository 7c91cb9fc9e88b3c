# Sourced by e2e tests: validate hitmap --json output against docs/schema/ (JSON Schema
# draft 2020-12, tests/lib/schema_check.py, python3-jsonschema from make deps).
#
#   . tests/lib/json_schema.sh
#   "$H" report -i X --json >"$T/r.json"
#   json_schema_ok "report on X: valid hitmap.report/1" "$T/r.json"
#
# json_schema_ok prints "ok NAME" or "not ok NAME" with the checker's errors; the schema is
# picked by the document's "schema" key. --strict is always on: a key the schema does not
# declare fails, so a new key is documented in docs/schema/ with the change that adds it.
# json_schema_check FILE... is the bare check (exit 0 valid, 1 invalid, 2 no checker).
HM_SCHEMA_CHECK=${HM_SCHEMA_CHECK:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/schema_check.py}

json_schema_check() {
	/usr/bin/python3 "$HM_SCHEMA_CHECK" --strict "$@"
}

json_schema_ok() {
	local name=$1 out
	shift
	if out=$(json_schema_check "$@" 2>&1); then
		echo "ok $name"
	else
		echo "not ok $name"
		printf '%s\n' "$out" | head -20 | sed 's/^/    /'
	fi
}
