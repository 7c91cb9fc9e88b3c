#!/usr/bin/env bash
# Every input a fuzz target crashed on (tests/data/fuzz-regress/TARGET-NAME) runs through the
# commands that read that kind of file, and through the fuzz target itself linked without
# libFuzzer (tests/fuzz/replay.c): each must end with exit 0, 2 (bad input) or 3, with no
# sanitizer report (the asan suite runs this with $HITMAP and $BUILD from build-asan) and
# within 10 s. Some inputs also pin a right answer. Prints "ok NAME" / "not ok NAME".
set -u
cd "$(dirname "$0")/../.." || exit 1
H=${HITMAP:-./hitmap}
BUILD=${BUILD:-build}
D=tests/data/fuzz-regress
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1"; shift; for l in "$@"; do [ -n "$l" ] && echo "    $l"; done; }

# check NAME CMD...: exit 0/2/3, no sanitizer report, no hang (these inputs are tiny: 10 s
# is a hang even under ASan). After one hang the input's other commands are not run.
hung=
check() {
	local name=$1 rc
	shift
	if [ -n "$hung" ]; then
		nok "$name" "not run: an earlier command hung on this input"
		return
	fi
	{ timeout 10 "$@" >"$T/out" 2>"$T/err"; rc=$?; } 2>/dev/null	# not bash's "Segmentation fault"
	[ "$rc" = 124 ] && hung=1
	if [ "$rc" -le 3 ] && [ "$rc" != 1 ] && ! grep -q "Sanitizer\|runtime error:" "$T/err"; then
		ok "$name (exit $rc)"
	else
		nok "$name" "exit $rc$([ $rc = 124 ] && echo ' (hang: killed after 10 s)')" \
			"$(grep -m1 -A8 "ERROR: \|runtime error:" "$T/err" | grep -v '^ *#[1-9][0-9]' | head -8)" \
			"$(tail -2 "$T/err")"
	fi
}

# The fuzz target with a plain main, built against this suite's library.
LIBS=$(make -s --no-print-directory print-libs)
SAN=
[ "${HM_SUITE:-normal}" = asan ] && SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
replayer() {	# replayer TARGET: builds $T/TARGET once; false if it cannot
	[ -x "$T/$1" ] && return 0
	[ -f "$BUILD/libhitmap.a" ] || return 1
	cc -std=c11 -D_GNU_SOURCE -O1 -g -I. $SAN -o "$T/$1" tests/fuzz/replay.c \
		"tests/fuzz/$1_fuzz.c" "$BUILD/libhitmap.a" $LIBS 2>"$T/cc" ||
		{ nok "build the $1 replayer" "$(head -5 "$T/cc")"; return 1; }
}

n=0
for f in "$D"/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	hung=
	base=$(basename "$f")
	target=${base%%-*}
	case $target in
	perfdata)
		check "$base: hitmap script" "$H" script -i "$f"
		check "$base: hitmap script --json" "$H" script -i "$f" --json
		check "$base: hitmap report" "$H" report -i "$f" ;;
	layout_dwarf)
		check "$base: hitmap layout" "$H" layout "$f"
		check "$base: hitmap layout --json -E" "$H" layout "$f" --json -E ;;
	layout_btf)
		check "$base: hitmap layout --btf" "$H" layout --btf "$f"
		check "$base: hitmap layout --btf --json -E" "$H" layout --btf "$f" --json -E ;;
	report)
		check "$base: hitmap report" "$H" report -i "$f"
		check "$base: hitmap report --json" "$H" report -i "$f" --json ;;
	decode | btf_elf | kcore) ;;	# the input is not a file hitmap reads as such: replay only
	*)
		nok "$base: name it TARGET-NAME (perfdata, layout_dwarf, layout_btf, decode, report, btf_elf, kcore)"
		continue ;;
	esac
	# TARGET-NAME-variant: the same types changed, for hitmap diff against TARGET-NAME.
	if [ "${base%-variant}" != "$base" ] && [ -f "${f%-variant}" ]; then
		check "$base: hitmap diff against ${base%-variant}" "$H" diff "${f%-variant}" "$f"
	fi
	if replayer "$target"; then
		check "$base: ${target}_fuzz replay" "$T/$target" "$f"
	fi
done
[ "$n" -gt 0 ] || nok "saved fuzz inputs in $D"

# Right answers on saved inputs, not only survival.
f=$D/perfdata-pipe-event-update-name	# perf 6.1 pipe mode names cpu-clock in EVENT_UPDATE
ev=$("$H" script -i "$f" --json 2>/dev/null | LC_ALL=C grep -ao '"event":"[^"]*"' | sort -u)
[ "$ev" = '"event":"cpu-clock"' ] && ok "pipe-mode EVENT_UPDATE name survives later records (cpu-clock)" ||
	nok "pipe-mode EVENT_UPDATE name survives later records" "events: $(echo "$ev" | head -3 | cat -v)"
