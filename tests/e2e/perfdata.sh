#!/usr/bin/env bash
# perf.data reader and writer end to end, against perf itself (computed live with perf
# script): the real PMU recordings in ../shared/data/perf in file and pipe mode, files
# hitmap writes, a live perf record, then damaged input (one line on stderr, exit 2).
. "$(dirname "$0")/../lib/tap.sh"
B=${BUILD:-build}
W="$B/tests/test_perfdata"	# `--write FILE MODE` writes a small recording
PERF=/usr/bin/perf
nok() { echo "not ok $1"; shift; [ $# -gt 0 ] && printf '    %s\n' "$@"; }

SHARED=$(git rev-parse --show-toplevel 2>/dev/null)/../shared
[ -d "$SHARED/data/perf" ] || SHARED=/work/shared
FIX="$SHARED/data/perf"
have_perf=1
[ -x "$PERF" ] || have_perf=0

# hitmap's columns: TID [CPU] EVENT: ADDR DATA_SRC WEIGHT IP. Prints "tid addr ip" (+ the raw
# data_src and weight with "full").
hm_cols() {
	if [ "$1" = full ]; then awk '{print $1, $(NF-3), $(NF-2), $(NF-1), $NF}'
	else awk '{print $1, $(NF-3), $NF}'; fi
}

# perf script -F tid,addr,data_src,weight,ip prints the decoded data_src after the raw one.
perf_cols() {
	if [ "$1" = full ]; then
		"$PERF" script -i "$2" -F tid,addr,data_src,weight,ip 2>/dev/null |
			awk '{print $1, $2, $3, $(NF-1), $NF}'
	else
		"$PERF" script -i "$2" -F tid,addr,ip 2>/dev/null | awk '{print $1, $2, $3}'
	fi
}

# compare NAME FILE_FOR_PERF HITMAP_INPUT COLUMNS [stdin file]
compare() {
	local name=$1 pf=$2 hin=$3 cols=$4 stdin=${5:-/dev/null} n
	if [ $have_perf = 0 ]; then ok "$name # skip: no $PERF"; return; fi
	perf_cols "$cols" "$pf" >"$T/perf.txt"
	if ! "$H" script -i "$hin" <"$stdin" 2>"$T/err" | hm_cols "$cols" >"$T/hm.txt"; then
		nok "$name" "hitmap script failed: $(cat "$T/err")"; return
	fi
	n=$(wc -l <"$T/perf.txt")
	if [ "$n" -gt 0 ] && cmp -s "$T/perf.txt" "$T/hm.txt"; then
		ok "$name ($n samples)"
	else
		nok "$name" "perf $(wc -l <"$T/perf.txt") samples, hitmap $(wc -l <"$T/hm.txt")" \
			"$(diff "$T/perf.txt" "$T/hm.txt" | head -5)"
	fi
}

# --- Real PMU recordings: every sample's tid, addr, raw data_src, weight and ip, in order.
if [ ! -d "$FIX" ]; then
	ok "perf-fixtures # skip: no $FIX"
else
	for f in "$FIX"/*.data; do
		b=$(basename "$f" .data)
		compare "fixture $b agrees with perf script" "$f" "$f" full
		# perf inject -o - writes pipe mode; hitmap reads it from stdin.
		if [ $have_perf = 1 ]; then
			"$PERF" inject -i "$f" -o - 2>/dev/null >"$T/pipe.data"
			compare "fixture $b in pipe mode from stdin" "$f" - full "$T/pipe.data"
		fi
	done
fi

# --- Files hitmap writes are read by perf: same samples; pipe mode; killed after a sync.
for mode in finished pipe unfinished kslab; do
	if ! "$W" --write "$T/w-$mode.data" "$mode" 2>"$T/err"; then
		nok "written $mode file" "$(cat "$T/err")"; continue
	fi
	compare "perf script reads a hitmap-written $mode file" "$T/w-$mode.data" \
		"$T/w-$mode.data" full
done
# hitmap's slab section (feature bit 250): perf neither stops nor warns at it
if [ $have_perf = 1 ] && [ -s "$T/w-kslab.data" ]; then
	"$PERF" report --header-only -i "$T/w-kslab.data" >"$T/hdr.txt" 2>"$T/err"
	if [ $? = 0 ] && grep -q 'hostname' "$T/hdr.txt" && ! grep -qi 'warn\|unknown\|error' "$T/err"; then
		ok "perf report --header-only reads a file with hitmap's slab section, silently"
	else nok "perf report --header-only reads a file with hitmap's slab section, silently" \
		"$(head -3 "$T/err")"; fi
fi
n=$("$H" script -i "$T/w-unfinished.data" 2>/dev/null | wc -l)
[ "$n" = 60 ] && ok "killed writer: the 60 synced samples survive" ||
	nok "killed writer: the 60 synced samples survive" "got $n"

# Killed before its first sync: data size 0; perf reads nothing, hitmap reads to EOF, warns.
"$W" --write "$T/w-zero.data" unsynced
n=$("$H" script -i "$T/w-zero.data" 2>"$T/err" | wc -l)
if [ "$n" = 100 ] && grep -q 'warning: .*data size is 0' "$T/err"; then
	ok "data size 0: hitmap reads to the end of the file and warns"
else nok "data size 0: hitmap reads to the end of the file and warns" "$n" "$(cat "$T/err")"; fi

# --- A live perf record with user registers (no PMU needed: cpu-clock). It asserts only
# that both readers agree; that there are samples holds by construction: the shell loop
# burns a fixed amount of CPU, and cpu-clock (one sample per 50 us of it) runs while it runs.
if [ $have_perf = 1 ] && "$PERF" record -q -e cpu-clock -c 50000 --user-regs=ax,bx,sp,ip \
	-o "$T/live.data" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' \
	>/dev/null 2>&1; then
	"$PERF" script -i "$T/live.data" -F tid,ip 2>/dev/null | awk '{print $1, $2}' >"$T/perf.txt"
	"$H" script -i "$T/live.data" 2>/dev/null | awk '{print $1, $NF}' >"$T/hm.txt"
	if [ -s "$T/perf.txt" ] && cmp -s "$T/perf.txt" "$T/hm.txt"; then
		ok "live perf record --user-regs agrees ($(wc -l <"$T/hm.txt") samples)"
	else
		nok "live perf record --user-regs agrees" "$(diff "$T/perf.txt" "$T/hm.txt" | head -5)"
	fi
else
	ok "live perf record # skip: perf record cannot sample here"
fi

# --- Damaged input: truncated and corrupted copies of a real recording and of ours.
bad() {	# NAME FILE: exit 2, one line on stderr naming the file and a byte offset
	local rc
	"$H" script -i "$2" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -qF "$2" "$T/err" &&
		grep -q 'byte' "$T/err"; then
		ok "$1"
	else nok "$1" "exit $rc" "$(head -3 "$T/err")"; fi
}
src="$FIX/cml-i7-10700-perf-c2c-record.data"
[ -f "$src" ] || src="$T/w-finished.data"
size=$(stat -c %s "$src")
for cut in 10 60 200 1000 $((size / 2)) $((size - 1)); do
	head -c "$cut" "$src" >"$T/cut-$cut.data"
	bad "truncated at $cut of $size bytes: exit 2, one line" "$T/cut-$cut.data"
done
cp "$src" "$T/corrupt.data"
printf '\xff\xff\xff\x7f' | dd of="$T/corrupt.data" bs=1 seek=40 conv=notrunc 2>/dev/null
bad "data offset past the end: exit 2, one line" "$T/corrupt.data"
"$H" script -i "$T/nonexistent.data" >/dev/null 2>"$T/err"
rc=$?
[ $rc = 2 ] && grep -q 'cannot open' "$T/err" && ok "missing file: exit 2" ||
	nok "missing file: exit 2" "exit $rc"
"$H" script --bogus >/dev/null 2>&1
[ $? = 1 ] && ok "unknown option: exit 1" || nok "unknown option: exit 1"
exit 0
