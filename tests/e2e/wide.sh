#!/usr/bin/env bash
# Wide accesses end to end, on the committed recording of examples/wide_stats.c
# (tests/data/rec/wide_stats.data and its binary, found by build-id): gcc 12 -O2 merges
# `s->ops++; s->bytes += n` into one 16-byte movdqu and movups, and the report must credit
# ops and bytes each with its own count (the same count: every access covers both), in
# the lines, fields and heat-map views, while samples are counted once and the splits view
# still sees one 16-byte access crossing a line. Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

# The binary really has the wide access (the reason for the example): objdump agrees.
if objdump -d --no-show-raw-insn $REC/bin/wide_stats | awk '/<work>:/,/ret/' |
	grep -q 'movups %xmm[0-9]*,(%r'; then
	echo "ok wide_binary_has_16_byte_store"
else
	echo "not ok wide_binary_has_16_byte_store"
fi

for v in lines heatmap; do
	"$H" report -i $REC/wide_stats.data --buildid-dir $REC --json --view $v >"$T/$v.json" \
		2>"$T/err" || { echo "not ok wide_report_$v"; sed 's/^/    /' "$T/err"; }
done
"$H" report -i $REC/wide_stats.data --buildid-dir $REC --stats >"$T/stats.txt" 2>&1

check() {	# NAME PYTHON-EXPR over d (lines report), hm (heat-map report)
	/usr/bin/python3 - "$T" "$2" <<'PY' && echo "ok $1" || echo "not ok $1"
import json, sys, collections
t = sys.argv[1]
d = json.load(open(t + '/lines.json'))
hm = json.load(open(t + '/heatmap.json'))
per = collections.Counter()	# (field, tid) -> records, over every line
for l in d['lines']:
    for f in l['fields']:
        for th in f['threads']:
            per[(f.get('field'), th['tid'])] += th['records']
tids = {k[1] for k in per if k[0] == 'worker_stats.ops'}
heat = {f['field']: f for h in hm['heatmap'] if h['type'] == 'worker_stats' for f in h['fields']}
ok = eval(sys.argv[2])
if not ok:
    print('    per field and thread:', dict(per))
sys.exit(0 if ok else 1)
PY
}

check wide_both_fields_named "len(tids) == 2 and all(per[('worker_stats.bytes', t)] > 0 for t in tids)"
check wide_fields_same_count "all(per[('worker_stats.ops', t)] == per[('worker_stats.bytes', t)] for t in tids)"
check wide_fields_8_bytes "all(f['size'] == 8 for l in d['lines'] for f in l['fields'] if (f.get('field') or '').startswith('worker_stats.'))"
check wide_samples_counted_once "d['samples']['total'] == $(sed -n 's/^samples: \([0-9]*\) .*/\1/p' "$T/stats.txt")"
check wide_heatmap_credits_bytes "heat['bytes']['loads'] == heat['ops']['loads'] > 0 and heat['bytes']['stores'] == heat['ops']['stores'] > 0 and heat['errors']['loads'] == 0"
# stats[1] starts 8 bytes before a line: its movdqu still crosses it, as one access.
check wide_split_is_whole_access "any(s['size'] == 16 and s['field'] == 'worker_stats.ops' and s['line_offset'] == 56 for s in d['splits'])"
if grep -q 'wide accesses split into the members they cover: [1-9]' "$T/stats.txt"; then
	echo "ok wide_stats_counts_splits"
else
	echo "not ok wide_stats_counts_splits"
	sed 's/^/    /' "$T/stats.txt" | tail -20
fi

# rep stos: examples/rep_reset.c's memset of a session's request, one `rep stosq` (objdump
# agrees), sampled inside with rcx quadwords left: the access covers the rest of path,
# then len and flags, each credited with its own bytes, all named from session_t (which
# only the counting stores in serve type: the rep's pointer is untyped).
if objdump -d --no-show-raw-insn $REC/bin/rep_reset | awk '/<clear_request>:/,/ret/' |
	grep -q 'rep stos'; then
	echo "ok rep_binary_has_rep_stos"
else
	echo "not ok rep_binary_has_rep_stos"
fi
"$H" report -i $REC/rep_reset.data --buildid-dir $REC --json >"$T/rep.json" 2>"$T/err" ||
	{ echo "not ok rep_report"; sed 's/^/    /' "$T/err"; }
"$H" report -i $REC/rep_reset.data --buildid-dir $REC --stats >"$T/rep.txt" 2>&1
/usr/bin/python3 - "$T/rep.json" <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
per = collections.Counter()
size = {}
unnamed = 0
for l in d['lines']:
    for f in l['fields']:
        at_rep = sum(s['count'] for s in f['sites'] if s.get('func') == 'clear_request')
        if not at_rep:
            continue
        if not (f.get('field') or '').startswith('session_t.req.'):
            unnamed += at_rep
            continue
        member = f['field'].split('[')[0]
        per[member] += at_rep
        size[member] = f['size']
def ok(name, cond):
    print(('ok ' if cond else 'not ok ') + name)
    if not cond:
        print('    at the rep stos:', dict(per), 'sizes', size, 'unnamed', unnamed)
ok('rep_members_credited', per['session_t.req.len'] > 100 and per['session_t.req.path'] > 0)
ok('rep_len_and_flags_together', per['session_t.req.len'] == per['session_t.req.flags'])
ok('rep_member_sizes', size.get('session_t.req.len') == 8 and size.get('session_t.req.flags') == 4)
ok('rep_named_from_session', unnamed == 0)
PY
rep=$(sed -n 's/^  rep string instructions sized by rcx: \([0-9]*\)/\1/p' "$T/rep.txt")
wide=$(sed -n 's/^  wide accesses split into the members they cover: \([0-9]*\),.*/\1/p' "$T/rep.txt")
if [ "${rep:-0}" -gt 100 ] && [ "${wide:-0}" -ge "$rep" ]; then
	echo "ok rep_sized_and_split ($rep rep, $wide split)"
else
	echo "not ok rep_sized_and_split (${rep:-none} rep, ${wide:-none} split)"
fi

# A library copy: examples/lib_copy.c's memcpy of a run-time size is libc's (vector loads
# and stores of 32 bytes, or 64 with AVX-512); libc has no types, so each access is named
# from the record_t the program's own samples typed, and split per member. The recording
# decodes libc's code from this machine's libc: only when it is the recorded build.
libc=$(sed -n 's/^\([0-9a-f]*\) .*libc\.so\.6$/\1/p' <(perf buildid-list -i $REC/lib_copy.data 2>/dev/null))
here=$(readelf -n /usr/lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -z "$libc" ] || [ "$libc" != "$here" ]; then
	echo "ok lib_copy_skipped (this libc ${here:-?} is not the recorded ${libc:-?})"
else
	"$H" report -i $REC/lib_copy.data --buildid-dir $REC --json >"$T/lib.json" 2>"$T/err" ||
		{ echo "not ok lib_copy_report"; sed 's/^/    /' "$T/err"; }
	/usr/bin/python3 - "$T/lib.json" <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
per = collections.Counter()
unnamed = 0
for l in d['lines']:
    for f in l['fields']:
        n = sum(s['count'] for s in f['sites'] if (s.get('func') or '').startswith('__mem'))
        if not n:
            continue
        if (f.get('field') or '').startswith('record_t.'):
            per[f['field'].split('[')[0]] += n
        else:
            unnamed += n
def ok(name, cond):
    print(('ok ' if cond else 'not ok ') + name)
    if not cond:
        print('    in libc:', dict(per), 'unnamed', unnamed)
ok('lib_copy_named_from_record', unnamed == 0 and sum(per.values()) > 300)
ok('lib_copy_every_member_credited',
   all(per['record_t.' + m] > 50 for m in ('seq', 'sum', 'used', 'vals')))
PY
fi
