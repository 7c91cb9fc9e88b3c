#!/usr/bin/env bash
# A C++ program (built here with g++ -O2 -g): code sites are demangled functions, as
# c++filt prints them. A live timer recording; the assertions hold for any sample count.
# Prints "ok NAME" / "not ok NAME".
. "$(dirname "$0")/../lib/tap.sh"

cat >"$T/c.cpp" <<'CPP'
#include <thread>
namespace srv {
struct Stats { long hits; long misses; };
Stats g;
void bump(Stats *s, int n, long iters)
{
	for (long i = 0; i < iters; i++) {
		if (n)
			((volatile Stats *)s)->misses++;
		else
			((volatile Stats *)s)->hits++;
	}
}
}
int main()
{
	std::thread a(srv::bump, &srv::g, 0, 20000000L), b(srv::bump, &srv::g, 1, 20000000L);
	a.join();
	b.join();
}
CPP
if ! g++ -O2 -g -pthread -o "$T/c" "$T/c.cpp" 2>"$T/cc.err"; then
	echo "not ok cxx: g++ builds the example"; sed 's/^/    /' "$T/cc.err"; exit 0
fi
"$H" record -c timer -o "$T/c.data" -- "$T/c" >/dev/null 2>&1
"$H" report -i "$T/c.data" --json >"$T/c.json" 2>/dev/null
want=$(nm "$T/c" | awk '/ T _ZN3srv4bump/ {print $3}' | c++filt)
/usr/bin/python3 - "$T/c.json" "$want" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
funcs = {s['func'] for l in d['lines'] for f in l['fields'] for s in f['sites'] if s.get('func')}
mangled = sorted(f for f in funcs if f.startswith('_Z'))
print(("ok" if not mangled else "not ok") + " cxx: no code site is a mangled name")
for f in mangled[:3]:
    print("    " + f)
want = sys.argv[2]
bad = sorted(f for f in funcs if f.startswith('srv::bump') and f != want)
print(("ok" if want and not bad else "not ok") + " cxx: srv::bump reads as c++filt prints it (%s)" % want)
for f in bad[:3]:
    print("    " + f)
PY
