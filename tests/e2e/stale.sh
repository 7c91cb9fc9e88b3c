#!/usr/bin/env bash
# A binary rebuilt after recording is never used silently: report and whatif exit 2 with
# one line naming both build-ids and the fix; with --force they go on, with a warning.
# On the committed recording of false_sharing (tests/data/rec), whose recorded path is
# given, through --sysroot, the padded build instead. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

mkdir -p "$T/root/tmp/hmrec/bin"
cp $REC/bin/false_sharing_padded "$T/root/tmp/hmrec/bin/false_sharing"
for cmd in "report" "whatif --pad worker_stats.errors=56"; do
	c=${cmd%% *}
	# shellcheck disable=SC2086
	"$H" $cmd -i $REC/false_sharing.data --sysroot "$T/root" >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] &&
		grep -q "^hitmap $c: .*/tmp/hmrec/bin/false_sharing: build-id [0-9a-f]* on disk but [0-9a-f]* in the recording.*--force" "$T/err" &&
		ok "$c: a rebuilt binary is refused, exit 2, one line with both build-ids" ||
		nok "$c: a rebuilt binary is refused" "rc=$rc" "$(cat "$T/err")"
	# shellcheck disable=SC2086
	"$H" $cmd -i $REC/false_sharing.data --sysroot "$T/root" --force >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" = 0 ] && grep -q "warning: --force: .*build-id" "$T/err" &&
		ok "$c --force: goes on, with a warning" || nok "$c --force: goes on" "rc=$rc" "$(cat "$T/err")"
done
"$H" report -i $REC/false_sharing.data --buildid-dir $REC >/dev/null 2>"$T/err" &&
	ok "the recorded build, found by build-id: no refusal" || nok "the recorded build" "$(cat "$T/err")"
