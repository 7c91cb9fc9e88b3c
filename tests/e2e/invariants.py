"""Invariants of hitmap's JSON documents that hold for any recording, whatever number of
samples it has and wherever they landed: the smoke tests of live recordings assert these
(tests/e2e/*.sh; docs/hardening.md, A deterministic suite).

usage: invariants.py report|whatif FILE   exit 0 when they hold, else 1 and why."""
import json
import sys

VERDICTS = {'false_sharing', 'true_sharing', 'read_only', 'private'}


def report(d):
    s = d['samples']
    assert d['schema'] == 'hitmap.report/1', d['schema']
    assert 0 <= s['resolved'] <= s['with_addr'] <= s['total'] and s['lost'] >= 0, s
    assert sum(l['records'] for l in d['lines']) <= s['with_addr'], 'line records > with_addr'
    for l in d['lines']:
        assert l['records'] == l['loads'] + l['stores'], l['addr']
        assert sum(t['records'] for t in l['threads']) == l['records'], l['addr']
        if d['stats']['cpus_known']:
            assert sum(c['records'] for c in l['cpus']) == l['records'], l['addr']
        assert sum(f['records'] for f in l['fields']) <= l['records'], l['addr']
        assert l['contention'] >= 0 and l['conflicts'] >= 0, l['addr']
        assert l['verdict'] in VERDICTS, l['verdict']
        for f in l['fields']:
            assert f['records'] == f['loads'] + f['stores'], f['field']
    return 'report: %d samples, %d lines' % (s['total'], len(d['lines']))


def whatif(d):
    s, p = d['samples'], d['prediction']
    assert d['schema'] == 'hitmap.whatif/1', d['schema']
    assert 0 <= s['moved'] <= s['affected'] <= s['with_addr'] <= s['total'], s
    assert s['dropped'] <= s['affected'], s
    for k in ('stops', 'starts', 'stays'):
        assert p[k] == sum(c['change'] == k for c in d['lines']), k
    assert (p['false_sharing'], p['true_sharing']) == \
        (d['after']['false_sharing'], d['after']['true_sharing']), p
    for side in ('before', 'after'):
        b = d[side]
        assert b['shared_lines'] == b['false_sharing'] + b['true_sharing'], side
        assert b['contention'] >= 0, side
    for c in d['lines']:
        for x in c['before'] + c['after']:
            assert x['records'] == x['loads'] + x['stores'], x['addr']
            assert x['verdict'] in VERDICTS, x['verdict']
        # A change lists one line and every line its accesses are linked to on the other
        # side: a started line's accesses all came from its before lines; a line that
        # stops or stays sends its accesses to its after lines, less those dropped.
        rb, ra = (sum(x['records'] for x in c[k]) for k in ('before', 'after'))
        if c['change'] == 'starts':
            assert len(c['after']) == 1 and ra <= rb, c['change']
        else:
            assert len(c['before']) == 1 and rb <= ra + s['dropped'], c['change']
    return 'whatif: %d samples, %d lines changed' % (s['total'], len(d['lines']))


def main():
    kind, path = sys.argv[1], sys.argv[2]
    try:
        print(globals()[kind](json.load(open(path))))
    except (AssertionError, KeyError, ValueError, TypeError) as e:
        print('invariant broken: %r' % (e,))
        sys.exit(1)


main()
