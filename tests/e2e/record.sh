#!/usr/bin/env bash
# hitmap record end to end: timer recordings that perf reads, signals, exit codes, and
# the errors for what this machine cannot do. Prints "ok NAME" / "not ok NAME".
#
# Live recordings here assert what holds for any sample count: both readers agree, the
# file is whole, the exit status. Counts are bounded only by construction: cpu-clock
# runs while the task runs, so a workload that burns a fixed amount of CPU gets samples
# however loaded the machine is; a signal is sent only once the file holds a sample
# (wait_samples), not after a sleep that a loaded machine may spend elsewhere. Where
# samples land is asserted on a committed recording (tests/data/rec).
. "$(dirname "$0")/../lib/tap.sh"
B=examples/bin
count_perf() { perf script -i "$1" -F tid 2>/dev/null | wc -l; }
count_hm() { "$H" script -i "$1" 2>/dev/null | wc -l; }
REC=tests/data/rec
# wait_samples FILE PID: until FILE, still being written by PID, holds a sample (the
# writer syncs at least once a second); 1 when PID ended or 60 s passed first.
wait_samples() {
	for _ in $(seq 600); do
		[ -s "$1" ] && [ "$(count_hm "$1")" -gt 0 ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# --- timer: perf reads our file and agrees on samples, threads and ips.
"$H" record -o "$T/t.data" -- $B/false_sharing 100000000 >"$T/out" 2>"$T/err"
rc=$?
np=$(count_perf "$T/t.data")
nh=$(count_hm "$T/t.data")
if [ "$rc" = 0 ] && [ "$np" -gt 0 ] && [ "$np" = "$nh" ]; then	# 2 threads, 0.2 s of CPU each
	ok "timer record: perf script and hitmap script see the same $np samples"
else nok "timer record: perf script and hitmap script agree" "rc=$rc perf=$np hitmap=$nh" "$(cat "$T/err")"; fi

# Where samples land, on the committed recording, by perf alone: its binary from a
# --symfs tree at the recorded path (/tmp/hmrec/bin), no build-id cache.
mkdir -p "$T/symfs/tmp/hmrec/bin" "$T/nocache"
cp $REC/bin/false_sharing "$T/symfs/tmp/hmrec/bin/"
perf --buildid-dir "$T/nocache" script -i $REC/false_sharing.data --symfs "$T/symfs" -F ip,sym \
	2>/dev/null | awk '{print $2}' | sort | uniq -c | sort -rn >"$T/syms"
if grep -q count_ops "$T/syms" && grep -q count_errors "$T/syms"; then
	ok "timer samples land in both worker threads' loops (committed recording, perf script)"
else nok "timer samples land in both worker threads' loops" "$(head -5 "$T/syms")"; fi

perf script -i "$T/t.data" -F tid,ip 2>/dev/null | awk '{print $1, $2}' | sort >"$T/p.txt"
"$H" script -i "$T/t.data" 2>/dev/null | awk '{print $1, $NF}' | sort >"$T/h.txt"
if [ -s "$T/p.txt" ] && diff -q "$T/p.txt" "$T/h.txt" >/dev/null; then
	ok "perf script and hitmap script agree on every (tid, ip)"
else nok "perf script and hitmap script agree on every (tid, ip)" "$(diff "$T/p.txt" "$T/h.txt" | head -4)"; fi

regs=$(perf script -i "$T/t.data" -F uregs 2>/dev/null | grep -c 'ABI:2.*R15:')
[ "$regs" -gt 0 ] && ok "user registers recorded ($regs samples with ABI 2)" || nok "user registers recorded" "$(perf script -i "$T/t.data" -F uregs 2>&1 | head -3)"

bid=$(perf buildid-list -i "$T/t.data" 2>/dev/null | grep -c false_sharing)
[ "$bid" = 1 ] && ok "build-id of the workload in the BUILD_ID feature" || nok "build-id of the workload recorded" "$(perf buildid-list -i "$T/t.data" 2>&1)"

# --- exit status and bad commands.
"$H" record -o "$T/e.data" -- sh -c 'exit 7' 2>/dev/null
rc=$?
[ "$rc" = 7 ] && ok "the workload's exit status is hitmap's" || nok "workload exit status" "rc=$rc"
"$H" record -o "$T/e.data" -- sh -c 'kill -SEGV $$' 2>/dev/null
rc=$?
[ "$rc" = 139 ] && ok "a workload killed by SIGSEGV gives 139" || nok "workload killed by a signal" "rc=$rc"
[ "$(count_perf "$T/e.data")" -ge 0 ] && perf script -i "$T/e.data" >/dev/null 2>&1 &&
	ok "the file of a crashed workload is readable" || nok "file of a crashed workload readable"
"$H" record -o "$T/x.data" -- /nonexistent/cmd 2>"$T/err"
rc=$?
[ "$rc" = 1 ] && grep -q "cannot run '/nonexistent/cmd'" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] &&
	ok "a command that cannot run: one line, exit 1" || nok "a command that cannot run" "rc=$rc" "$(cat "$T/err")"

# The long runs below, stopped by signals, run a copy of false_sharing at a path of this
# run's own: other suites on the same machine that kill their workloads by name (pkill -f)
# must not match ours.
LONG=$T/long_run
cp $B/false_sharing "$LONG"
# --- signals: the file stays valid and keeps what was recorded.
for sig in INT TERM; do
	rm -f "$T/s.data"
	"$H" record -o "$T/s.data" -- $LONG 10000000000 >/dev/null 2>"$T/err" &
	pid=$!
	wait_samples "$T/s.data" $pid
	kill -$sig $pid
	wait $pid
	rc=$?
	n=$(count_perf "$T/s.data")
	if [ "$n" -gt 0 ] && [ "$(count_hm "$T/s.data")" = "$n" ] && grep -q "stopped by signal" "$T/err"; then
		ok "SIG$sig during record: valid file with $n samples (rc=$rc)"
	else nok "SIG$sig during record leaves a valid file" "rc=$rc samples=$n" "$(cat "$T/err")"; fi
done
rm -f "$T/k.data"
"$H" record -o "$T/k.data" -- $LONG 10000000000 >/dev/null 2>&1 &
pid=$!
wait_samples "$T/k.data" $pid
wpid=$(pgrep -P $pid)
kill -KILL $pid
wait $pid 2>/dev/null
[ -n "$wpid" ] && kill -KILL $wpid 2>/dev/null	# no hitmap left to stop it
n=$(count_perf "$T/k.data")
[ "$n" -gt 0 ] && [ "$(count_hm "$T/k.data")" = "$n" ] &&
	ok "SIGKILL of hitmap: the file is readable up to the last sync ($n samples)" ||
	nok "SIGKILL of hitmap leaves a readable file" "samples=$n"

# --- -p and -a.
$LONG 10000000000 >/dev/null &
wpid=$!
sleep 0.2
"$H" record -p $wpid -o "$T/p.data" 2>"$T/err" &
rpid=$!
wait_samples "$T/p.data" $rpid
kill -INT $rpid
wait $rpid
kill $wpid
wait $wpid 2>/dev/null
n=$(perf script -i "$T/p.data" -F pid 2>/dev/null | awk -v p=$wpid '$1==p' | wc -l)
[ "$n" -gt 0 ] && [ "$n" = "$(count_perf "$T/p.data")" ] &&
	ok "-p PID records a running process ($n samples, all of it)" || nok "-p PID" "$n" "$(cat "$T/err")"
"$H" record -a -o "$T/a.data" -- $B/false_sharing 30000000 >/dev/null 2>"$T/err"
rc=$?
n=$(count_perf "$T/a.data")
[ "$rc" = 0 ] && [ "$n" -gt 0 ] && [ "$n" = "$(count_hm "$T/a.data")" ] &&	# 2 threads' CPU time
	ok "-a records system-wide while a command runs ($n samples)" ||
	nok "-a system-wide" "rc=$rc n=$n" "$(cat "$T/err")"

# --- what cannot work here says so.
"$H" record -c pmu -o "$T/pmu.data" -- true 2>"$T/err"
rc=$?
[ "$rc" = 3 ] && grep -q -- "-c timer" "$T/err" && ok "-c pmu without a PMU: exit 3, suggests -c timer" ||
	nok "-c pmu without a PMU" "rc=$rc" "$(cat "$T/err")"
# --- watch: real debug-register traps where the machine delivers them (tests/lib/traps.sh;
# tests/e2e/watch.sh checks every count against perf's). Where traps are not delivered, the
# self-test says so (watch_selftest.sh checks that).
# --no-alloc: the count is of the watch event alone (allocation probes add samples)
if ! traps; then
	skip "watch: 1000 write hits of a field written 1000 times"
else
"$H" record -c watch --no-alloc --watch stats.errors:w -o "$T/w.data" -- $B/false_sharing 1000 >/dev/null 2>"$T/err"
rc=$?
if [ "$rc" = 0 ]; then
	n=$(perf script -i "$T/w.data" -F tid 2>/dev/null | wc -l)
	[ "$n" = 1000 ] && ok "watch: a field written 1000 times gives exactly 1000 write hits (perf script)" ||
		nok "watch exactness" "hits=$n"
else nok "watch record (real traps)" "rc=$rc" "$(cat "$T/err")"; fi
fi
# The symbol is looked up before the self-test: a misspelt name is exit 2 on any machine,
# with or without traps, and the command (stopped at exec) never runs.
"$H" record -c watch --watch nosuchvar -o "$T/w.data" -- sh -c "touch $T/ran" 2>"$T/err"
rc=$?
[ "$rc" = 2 ] && grep -q "no global or static variable 'nosuchvar'" "$T/err" && [ ! -e "$T/ran" ] &&
	ok "--watch of an unknown symbol: exit 2, names it, the command never runs" ||
	nok "--watch unknown symbol" "rc=$rc" "$(cat "$T/err")"
"$H" record -F 0 -- true 2>"$T/err"
[ $? = 1 ] && ok "bad -F is a usage error" || nok "bad -F is a usage error"

# perf's own watchpoint recording (perf record -e mem:ADDR:rw -d): hitmap reads it and
# agrees with perf script (main's load and store of hot_counter++: real traps).
gcc -O2 -g -no-pie -fno-toplevel-reorder -o "$T/lc" examples/layout_change.c
addr=$(nm "$T/lc" | awk '$3 == "hot_counter" {print $1}')
if ! traps; then
	skip "a perf mem:ADDR:rw -d recording reads as perf reads it"
else
perf record -q -e "mem:0x$addr:rw" -d -o "$T/mem.data" -- "$T/lc" >/dev/null 2>&1
np=$(count_perf "$T/mem.data")
nh=$("$H" script -i "$T/mem.data" 2>"$T/err" | wc -l)
if [ "$np" -gt 0 ] && [ "$np" = "$nh" ] && grep -q "mem:0x$addr" "$T/err"; then
	ok "a perf mem:ADDR:rw -d recording reads as perf reads it ($np samples, event named)"
else nok "perf mem: recording" "perf=$np hitmap=$nh" "$(cat "$T/err")"; fi
fi
