#!/usr/bin/python3
"""Compares hitmap layout --json with pahole's text on the same input, type by type:
size, every top-level member's offset/size/bit position, byte holes, bit holes and
padding. Prints one "ok"/"not ok" line per input and the first differences.

usage: pahole_peer.py HITMAP LABEL [--btf] FILE [TYPE...]
"""
import json
import re
import subprocess
import sys

MEMBER = re.compile(r'/\*\s+(\d+)(?::\s*(\d+))?\s+(\d+)\s+\*/\s*$')
HEAD = re.compile(r'^(struct|union|class) (\S+) \{$')


def parse_pahole(text):
    types = {}
    cur = None
    for line in text.splitlines():
        m = HEAD.match(line)
        if m and cur is None:
            cur = {'kind': m.group(1), 'members': [], 'holes': [], 'bit_holes': [],
                   'size': None, 'padding': 0}
            name = m.group(2)
            continue
        if cur is None:
            continue
        if line.startswith('}'):
            types.setdefault(name, cur)
            cur = None
            continue
        depth = len(line) - len(line.lstrip('\t'))
        if depth != 1:
            continue
        body = line.strip()
        mm = MEMBER.search(body)
        if mm and not body.startswith('/*'):
            off, bit, size = int(mm.group(1)), mm.group(2), int(mm.group(3))
            cur['members'].append((off, size, int(bit) if bit is not None else None))
            continue
        h = re.match(r'/\* XXX (\d+) bytes? hole', body)
        if h:
            cur['holes'].append(int(h.group(1)))
        h = re.match(r'/\* XXX (\d+) bits? hole', body)
        if h:
            cur['bit_holes'].append(int(h.group(1)))
        s = re.match(r'/\* size: (\d+), cachelines: (\d+), members: (\d+) \*/', body)
        if s:
            cur['size'] = int(s.group(1))
            cur['cachelines'] = int(s.group(2))
            cur['nr'] = int(s.group(3))
        p = re.match(r'/\* padding: (\d+) \*/', body)
        if p:
            cur['padding'] = int(p.group(1))
    return types


def from_hitmap(doc):
    types = {}
    for t in doc['types']:
        members = [(m['offset'], m['size'], m.get('bit_offset')) for m in t['members']]
        types.setdefault(t['name'], {
            'kind': t['kind'], 'members': members, 'size': t['size'],
            'cachelines': t['cachelines'], 'nr': len(members),
            'holes': [h['size'] for h in t['holes']],
            'bit_holes': ([t['lead_bit_hole']] if t['lead_bit_hole'] else []) +
                         [m['bit_hole_after'] for m in t['members'] if m.get('bit_hole_after')],
            'padding': t['padding']})
    return types


def compare(name, h, p):
    diffs = []
    if h['members'] != p['members']:
        for i, (a, b) in enumerate(zip(h['members'], p['members'])):
            if a != b:
                diffs.append(f'{name}: member #{i}: hitmap {a} pahole {b}')
                break
        else:
            diffs.append(f'{name}: {len(h["members"])} members, pahole {len(p["members"])}')
    if p['kind'] == 'union' or p['size'] is None:
        return diffs	# pahole prints no summary for unions
    for key in ('size', 'cachelines', 'nr', 'holes', 'bit_holes', 'padding'):
        if h[key] != p[key]:
            diffs.append(f'{name}: {key}: hitmap {h[key]} pahole {p[key]}')
    return diffs


def main():
    hitmap, label, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    btf = args[:1] == ['--btf']
    if btf:
        args = args[1:]
    path, names = args[0], args[1:]
    hcmd = [hitmap, 'layout', '--json'] + (['--btf'] if btf else []) + [path]
    for n in names:
        hcmd += ['-t', n]
    doc = json.loads(subprocess.run(hcmd, check=True, capture_output=True, text=True).stdout)
    ours = from_hitmap(doc)
    pcmd = ['pahole'] + (['-F', 'btf'] if btf else [])
    if names:
        pcmd += ['-C', ','.join(names)]
    ptext = subprocess.run(pcmd + [path], capture_output=True, text=True).stdout
    theirs = parse_pahole(ptext)
    diffs, checked = [], 0
    wanted = names or sorted(theirs)
    for name in wanted:
        if name not in theirs:
            diffs.append(f'{name}: pahole did not print it')
            continue
        if name not in ours:
            diffs.append(f'{name}: hitmap did not print it')
            continue
        checked += 1
        diffs += compare(name, ours[name], theirs[name])
    extra = sorted(set(ours) - set(theirs))
    if not names and extra:
        diffs.append(f'hitmap printed types pahole did not: {extra[:10]}')
    if checked == 0:
        diffs.append('no types compared')
    if diffs:
        print(f'not ok {label} ({checked} types, {len(diffs)} differences)')
        for d in diffs[:20]:
            print('    ' + d)
    else:
        print(f'ok {label} ({checked} types equal to pahole)')


if __name__ == '__main__':
    main()
