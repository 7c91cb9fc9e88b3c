#!/usr/bin/env bash
# hitmap report --html rendered in a real browser: headless Chromium (Debian's
# `chromium`, installed by `make deps`) loads the page of a committed recording
# (tests/data/rec, binaries found by build-id) and dumps the DOM after the page's script
# ran; the assertions read that rendered DOM, against what `report --json` says of the
# same recording: the shared line's verdict, its replayed fix, its hot fields as boxes
# and rows, and the threads that write each field. Then the script's work, through its
# click handlers (the page clicks what the URL's fragment names: #sort=records&dir=asc
# clicks the header twice, descending then ascending; #scale=lin clicks the button). And
# the page source: balanced tags, SVG that parses as XML, nothing fetched from the
# network.
#
# Chromium missing is a failure, not a skip: make deps installs it. It runs as root
# (--no-sandbox), with a throwaway profile and a timeout; under the ASan suite hitmap is
# the instrumented binary and Chromium is not.
. "$(dirname "$0")/../lib/tap.sh"
REC=tests/data/rec

CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
	nok "chromium is installed" "no chromium on PATH: run make deps (Debian package chromium)"
	exit 1
fi

# dom PAGE [#FRAGMENT] > FILE: the DOM after load, in a profile that goes with $T.
dom() {
	HOME=$T timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/profile" --dump-dom "file://$(realpath "$1")${2:-}" 2>"$T/chrome.err"
}

page() {	# NAME: the page and the JSON of the committed recording NAME.data
	"$H" report -i $REC/$1.data --buildid-dir $REC --html "$T/$1.html" 2>"$T/$1.herr" &&
		"$H" report -i $REC/$1.data --buildid-dir $REC --json >"$T/$1.json" 2>>"$T/$1.herr" ||
		echo "    report of $1 failed: $(cat "$T/$1.herr")"
}

page false_sharing
page objects_heap
dom "$T/false_sharing.html" >"$T/fs.dom" || nok "chromium renders the page" "$(tail -3 "$T/chrome.err")"
dom "$T/objects_heap.html" "#sort=records&dir=asc&scale=lin" >"$T/oh.dom" ||
	nok "chromium renders the page with a #sort" "$(tail -3 "$T/chrome.err")"

# check NAME PYTHON: runs the assertions with dom(f) (a parsed DOM tree), j (the JSON).
check() {
	local name=$1
	shift
	/usr/bin/python3 - "$T" "$@" <<'PY' && ok "$name" || nok "$name" "$(head -c 600 "$T/why")"
import json, sys
from html.parser import HTMLParser

T = sys.argv[1]
VOID = {'meta', 'br', 'img', 'input', 'link', 'hr', 'col', 'area', 'base', 'wbr', 'source'}

class Node:
    def __init__(s, tag, attrs, parent):
        s.tag, s.attrs, s.parent, s.kids, s.text = tag, dict(attrs), parent, [], ''
    def all(s, tag=None, cls=None, **kw):
        for k in s.kids:
            c = k.attrs.get('class', '').split()
            if (tag is None or k.tag == tag) and (cls is None or cls in c) and \
               all(k.attrs.get(a.replace('_', '-')) == v for a, v in kw.items()):
                yield k
            yield from k.all(tag, cls, **kw)
    def find(s, *a, **kw):
        return next(s.all(*a, **kw), None)
    def alltext(s):
        return s.text + ''.join(k.alltext() for k in s.kids)

class Tree(HTMLParser):
    def __init__(s):
        super().__init__()
        s.root = s.cur = Node('#root', {}, None)
    def handle_starttag(s, tag, attrs):
        n = Node(tag, attrs, s.cur)
        s.cur.kids.append(n)
        if tag not in VOID:
            s.cur = n
    def handle_startendtag(s, tag, attrs):
        s.cur.kids.append(Node(tag, attrs, s.cur))
    def handle_endtag(s, tag):
        n = s.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            s.cur = n.parent
    def handle_data(s, d):
        s.cur.text += d

def dom(f):
    t = Tree()
    t.feed(open(f'{T}/{f}', encoding='utf-8').read())
    return t.root

def j(name):
    return json.load(open(f'{T}/{name}.json'))

why = []
def need(cond, msg):
    if not cond:
        why.append(msg)
    return cond

try:
    exec(sys.argv[2])
except Exception as e:
    why.append(f"{type(e).__name__}: {e}")
open(f'{T}/why', 'w').write('; '.join(why))
sys.exit(1 if why else 0)
PY
}

# The recording's known answer (tests/data/rec/README.md): false sharing on worker_stats,
# with a fix whose replay removes it. Asserted from the JSON first, so that the page's
# assertions below compare against a known-good answer rather than against themselves.
check "false_sharing.data: JSON has false sharing with a replayed fix" '
l = j("false_sharing")["lines"][0]
need(l["verdict"] == "false_sharing", "verdict " + l["verdict"])
need(l["fix_check"] == "replayed" and l["fix"], "fix_check " + str(l["fix_check"]))
'

check "rendered DOM: the script ran" '
d = dom("fs.dom")
need(d.find("body").attrs.get("data-js") == "ready", "body has no data-js=ready")
need(d.find("body").attrs.get("data-scale") == "log", "default scale is not log")
'

check "rendered DOM: line 1 shows the verdict and the replayed fix" '
l = j("false_sharing")["lines"][0]
s = dom("fs.dom").find("section", id="line-1")
need(s is not None, "no section#line-1")
v = s.find("span", cls="verdict")
need(v is not None and v.attrs.get("data-verdict") == l["verdict"] and
     v.alltext().strip() == l["verdict"].replace("_", " "), "verdict badge")
fx = s.find("p", cls="fix")
need(fx is not None and l["fix"] in " ".join(fx.alltext().split()), "fix text")
need("replayed" in (fx.alltext() if fx else ""), "fix not marked replayed")
'

check "rendered DOM: every field of the shared line is a box and a row" '
l = j("false_sharing")["lines"][0]
s = dom("fs.dom").find("section", id="line-1")
boxes = {g.attrs.get("data-field") for g in s.all("g", cls="fld")}
rows = {td.alltext().strip() for td in s.all("td", cls="fname")}
want = {f["field"] for f in l["fields"]}
need(want and want <= boxes, f"boxes {sorted(boxes)} want {sorted(want)}")
need(want <= rows, f"rows {sorted(rows)} want {sorted(want)}")
need({"worker_stats.ops", "worker_stats.bytes"} <= want, f"hot fields {sorted(want)}")
'

check "rendered DOM: each field names its writer threads, as the JSON does" '
l = j("false_sharing")["lines"][0]
s = dom("fs.dom").find("section", id="line-1")
key = {t.attrs.get("data-tid") for t in dom("fs.dom").find("div", id="threads").all("span", cls="tk")} - {None}
writers = set()
for f in l["fields"]:
    w = {str(t["tid"]) for t in f["threads"] if t["stores"] + t["locked"] > 0}
    writers |= w
    row = next((td.parent for td in s.all("td", cls="fname") if td.alltext().strip() == f["field"]), None)
    got = {td.attrs.get("data-tid") for td in row.all("td", cls="w")} if row else set()
    fn = f["field"]
    need(got == w, f"{fn}: writers in the table {sorted(got)}, JSON {sorted(w)}")
    g = next((g for g in s.all("g", cls="fld") if g.attrs.get("data-field") == f["field"]), None)
    stripes = {r.attrs.get("data-tid") for r in g.all("rect", cls="w")} if g else set()
    need(stripes == w, f"{fn}: writer stripes {sorted(stripes)}, JSON {sorted(w)}")
need(len(writers) == 2, f"two writer threads, got {sorted(writers)}")
need(writers <= key, f"thread key {sorted(key)} lacks writers {sorted(writers)}")
'

check "rendered DOM: the title names the file, the samples and the command" '
d = dom("fs.dom")
t = d.find("title").alltext()
n = j("false_sharing")["samples"]
n = n["total"] if isinstance(n, dict) else n
need("false_sharing.data" in t and f"{n} samples" in t, "title: " + t)
need("false_sharing" in t.split(" of ")[-1], "no command in the title: " + t)
need(d.find("p", id="source") is not None, "no source line")
'

check "rendered DOM: #sort=records&dir=asc sorts the lines table, #scale=lin recolours" '
d = dom("oh.dom")
tab = d.find("table", id="lines")
heads = [th.attrs.get("data-key") for th in tab.all("th")]
col = heads.index("records")
body = tab.find("tbody")
recs = [int(list(tr.all("td"))[col].attrs["data-v"]) for tr in body.all("tr")]
need(len(recs) > 2 and recs == sorted(recs) and recs != sorted(recs, reverse=True),
     f"records column {recs}")
th = list(tab.all("th"))[col]
need(th.attrs.get("aria-sort") == "ascending", "records header not marked ascending")
need(d.find("body").attrs.get("data-scale") == "lin", "scale not lin")
boxes = list(d.all("rect", cls="f"))
need(boxes and all(r.attrs.get("fill") == r.attrs.get("data-lin") for r in boxes),
     "boxes not recoloured linear")
need(any(r.attrs.get("data-lin") != r.attrs.get("data-log") for r in boxes),
     "linear and log colours never differ")
'

check "page source: balanced tags, well-formed SVG, no network; objects at their own offsets" '
import re
for name in ("false_sharing", "objects_heap"):
    src = open(f"{T}/{name}.html", encoding="utf-8").read()
    need(src.startswith("<!DOCTYPE html>"), name + ": no doctype")
    need(not re.search(r"(src|href)=\"(https?:)?//|@import|url\((https?:)?//|<link", src),
         name + ": refers to the network")
    stack = []
    for m in re.finditer(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>", src):
        close, tag, selfclose = m.group(1), m.group(2).lower(), m.group(3)
        if tag in VOID or selfclose:
            continue
        if not close:
            stack.append(tag)
        elif not stack or stack.pop() != tag:
            need(False, f"{name}: </{tag}> at {m.start()} closes nothing open")
            break
    need(not stack, f"{name}: unclosed {stack[-3:]}")
    import xml.dom.minidom
    for k, m in enumerate(re.finditer(r"<svg.*?</svg>", src, re.S)):
        try:
            xml.dom.minidom.parseString(m.group(0))
        except Exception as e:
            need(False, f"{name}: svg {k} is not well-formed XML: {e}")
# objects_heap: four struct order objects of 16 bytes share each line: four instances,
# each bracket at its own offset, not one folded type at offset 0.
s = dom("oh.dom").find("section", id="line-1")
objs = [t.alltext() for t in s.all("g", cls="objb")]
need(len(objs) == 4 and sum("at +" in o for o in objs) == 3, f"objects {objs}")
'
