#!/usr/bin/env bash
# A stand-in for hitmap that keeps every --json document it prints, for validation against
# docs/schema/: any e2e test run with HITMAP pointing here has its JSON checked, unchanged.
#
#   HITMAP=$PWD/tests/lib/schema_hook.sh HM_HOOK_HITMAP=$PWD/hitmap \
#       HM_SCHEMA_KEEP=/tmp/docs bash tests/e2e/diff.sh
#   /usr/bin/python3 tests/lib/schema_check.py --strict --tap /tmp/docs/list
#
# It runs HM_HOOK_HITMAP with the same arguments, stdin, stdout and exit code; when --json
# was given and something came out on stdout, it copies that to HM_SCHEMA_KEEP/N.json and
# adds "N.json<tab>hitmap ARGS" to HM_SCHEMA_KEEP/list. Validating afterwards, in one
# process, keeps the hooked test as fast as it was.
real=${HM_HOOK_HITMAP:?HM_HOOK_HITMAP: the hitmap binary to run}
keep=${HM_SCHEMA_KEEP:?HM_SCHEMA_KEEP: the folder to keep documents in}
json=0
for a in "$@"; do [ "$a" = --json ] && json=1; done
[ $json = 1 ] || exec "$real" "$@"
out=$(mktemp "$keep/XXXXXX.json")
"$real" "$@" >"$out"
rc=$?
cat "$out"
if [ -s "$out" ]; then
	printf '%s\thitmap %s\n' "$out" "$*" >>"$keep/list"
else
	rm -f "$out"
fi
exit $rc
