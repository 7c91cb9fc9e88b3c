#!/usr/bin/env bash
# whatif streamed (docs/whatif.md, Memory): a run over one batch is not held: it is read
# once for the summary the plan and --suggest read, and replayed from the accesses that
# read kept in an unlinked file (or, with no $TMPDIR to write, from a second read).
# --stream takes that path on any run, so on the committed recordings (tests/data/rec:
# every count here is the same on every run) it must print what the held run prints,
# byte for byte. A committed recording grown past one batch by build/bench/perfgrow (data
# our own tool synthesized from a real recording) is streamed by default: its totals
# and the line's conflicts must be report's. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

check() {	# NAME, then a command that succeeds when the case holds
	local name=$1
	shift
	if "$@" >"$T/why" 2>&1; then
		echo "ok $name"
	else
		echo "not ok $name"
		sed 's/^/    /' "$T/why" | head -10
	fi
}

same() {	# recording, then whatif options: held and --stream print the same
	local f=$1
	shift
	"$H" whatif -i "$R/$f.data" --buildid-dir "$R" "$@" >"$T/held" 2>"$T/held.err"
	echo "exit $?" >>"$T/held"
	"$H" whatif -i "$R/$f.data" --buildid-dir "$R" --stream "$@" >"$T/str" 2>"$T/str.err"
	echo "exit $?" >>"$T/str"
	cmp "$T/held" "$T/str" && cmp "$T/held.err" "$T/str.err" && grep -q "exit 0" "$T/held"
}

for j in "" --json; do
	check "false_sharing --suggest ${j:-text}: streamed = held" same false_sharing --suggest worker_stats $j
	check "false_sharing --pad ${j:-text}: streamed = held" same false_sharing --pad worker_stats.errors=56 $j
	check "false_sharing --layout padded ${j:-text}: streamed = held" \
		same false_sharing --layout "$R/bin/false_sharing_padded" $j
	check "xfs_like --layout variant ${j:-text}: streamed = held" \
		same xfs_like --layout "$R/bin/xfs_like_variant" $j
	check "interleaved --suggest ${j:-text}: streamed = held" same interleaved --suggest interleaved $j
	check "interleaved --order ${j:-text}: streamed = held" same interleaved --order interleaved=f2,f0 $j
	check "packed --align ${j:-text}: streamed = held" same packed --align wire_record.body=64 $j
	check "objects_heap --pad ${j:-text}: streamed = held" same objects_heap --pad order.qty=64 $j
	check "objects_heap --align ${j:-text} --aligned-alloc: streamed = held" \
		same objects_heap --align order.total=64 $j --aligned-alloc
	check "wide_stats --suggest ${j:-text}: streamed = held" same wide_stats --suggest worker_stats $j
	check "true_sharing --suggest ${j:-text}: streamed = held" same true_sharing --suggest shared_counter $j
done

same_err() {	# the same for a refused change: the same message and exit code
	! same "$@" && cmp "$T/held" "$T/str" && cmp "$T/held.err" "$T/str.err" && grep -q "exit 2" "$T/held"
}
check "array_threads (no struct type): streamed refuses as held" same_err array_threads --suggest slot
check "false_sharing unknown member: streamed refuses as held" same_err false_sharing --pad worker_stats.erors=8

# a pipe can be read only once: held, and --stream refused
pipe() { "$H" whatif -i - --buildid-dir "$R" --suggest worker_stats "$@" <"$R/false_sharing.data"; }
check "a pipe is held: every sample replayed" \
	sh -c "$(declare -f pipe); H='$H' R='$R'; pipe --json | grep -q '\"samples\":{\"total\":877,'"
check "--stream of a pipe: a usage error naming the flag" \
	sh -c "$(declare -f pipe); H='$H' R='$R'; pipe --stream 2>&1 >/dev/null | grep -q -- '--stream reads - twice'; pipe --stream 2>/dev/null; [ \$? = 1 ]"

# past one batch (262144 accesses): streamed by default
if [ -x build/bench/perfgrow ] || make --no-print-directory -s build/bench/perfgrow >/dev/null 2>&1; then
	build/bench/perfgrow "$R/false_sharing.data" "$T/long.data" 300000 >/dev/null
	"$H" whatif -i "$T/long.data" --buildid-dir "$R" --suggest worker_stats --json >"$T/w.json"
	"$H" report -i "$T/long.data" --buildid-dir "$R" --json >"$T/r.json"
	check "300000 samples streamed: all counted, the line's conflicts are report's, sharing stops" \
		python3 - "$T/w.json" "$T/r.json" <<'EOF'
import json, sys
w, r = (json.load(open(p)) for p in sys.argv[1:3])
assert w["samples"]["total"] == 300000, w["samples"]
shared = [l for l in r["lines"] if l["verdict"] in ("false_sharing", "true_sharing")]
assert len(shared) == 1, shared
assert w["before"]["contention"] == shared[0]["contention"] > 0, (w["before"], shared[0])
assert w["prediction"]["stops"] == 1 and w["prediction"]["false_sharing"] == 0, w["prediction"]
EOF
	# The replay reads the first read's accesses back from an unlinked file in $TMPDIR;
	# where none can be written it reads the recording again: the same bytes either way.
	mkdir "$T/tmpd"
	TMPDIR=$T/tmpd "$H" whatif -i "$T/long.data" --buildid-dir "$R" --suggest worker_stats \
		--json >"$T/w1.json" 2>&1
	TMPDIR=$T/no-such-dir "$H" whatif -i "$T/long.data" --buildid-dir "$R" --suggest \
		worker_stats --json >"$T/w2.json" 2>&1
	for a in "--pad worker_stats.errors=56" "--layout $R/bin/false_sharing_padded"; do
		TMPDIR=$T/tmpd "$H" whatif -i "$T/long.data" --buildid-dir "$R" $a >>"$T/w1.json" 2>&1
		TMPDIR=$T/no-such-dir "$H" whatif -i "$T/long.data" --buildid-dir "$R" $a \
			>>"$T/w2.json" 2>&1
	done
	check "300000 samples: the replay from the first read's accesses = re-reading the recording (suggest, pad, layout)" \
		cmp "$T/w1.json" "$T/w2.json"
	check "the replay's file of accesses is unlinked: \$TMPDIR is left empty" \
		sh -c "[ -z \"\$(ls -A '$T/tmpd')\" ]"
	# --jobs 2 (the default with two CPUs) sums on a second thread as it reads and
	# replays the new side there while this one builds the recorded side; --jobs 1 is
	# all on one: the same bytes (run under ThreadSanitizer by make check)
	for a in "--suggest worker_stats --json" "--pad worker_stats.errors=56" \
		 "--layout $R/bin/false_sharing_padded --max-lines 4"; do
		"$H" whatif -i "$T/long.data" --buildid-dir "$R" $a --jobs 1 >"$T/j1" 2>&1
		echo "exit $?" >>"$T/j1"
		"$H" whatif -i "$T/long.data" --buildid-dir "$R" $a --jobs 2 >"$T/j2" 2>&1
		echo "exit $?" >>"$T/j2"
		check "300000 samples, ${a%% *}: --jobs 1 = --jobs 2" \
			sh -c "cmp '$T/j1' '$T/j2' && grep -q 'exit 0' '$T/j1'"
	done
else
	echo "not ok build/bench/perfgrow could not be built (make build/bench/perfgrow)"
fi
