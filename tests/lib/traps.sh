# Sourced by tests/lib/tap.sh and tests/run.sh.
# Debug-register traps: some machines accept hardware watchpoints and never deliver their
# traps (a hypervisor that does not pass them on: `perf stat -e mem:ADDR/8:w` counts 0 of
# a workload's stores, and gdb's hardware watchpoints never stop). The checks that need a
# real trap cannot run there; they say so with a "skip NAME: why" line, which
# tests/run.sh counts apart. Whether traps fire is asked of perf, not of hitmap (whose
# own self-test once misjudged it): tests/run.sh probes once and exports HM_TRAPS
# (yes/no) and HM_TRAPS_WHY; a script run alone probes here.
hm_traps_probe() {
	local d src addr n
	d=$(mktemp -d)
	src="$d/w.c"
	printf '%s\n' '#include <stdio.h>' 'volatile long hm_watched;' \
		'int main(void) { for (int i = 0; i < 16; i++) hm_watched = i;' \
		'printf("%p\n", (void *)&hm_watched); return 0; }' >"$src"
	if ! gcc -O0 -no-pie -o "$d/w" "$src" 2>/dev/null || ! addr=$("$d/w") ||
	   ! command -v perf >/dev/null; then
		rm -rf "$d"
		HM_TRAPS=yes	# cannot ask: the checks run and say what they find
		return
	fi
	n=$(perf stat -x, -e "mem:$addr/8:w" "$d/w" 2>&1 >/dev/null | awk -F, '/mem:/ {print $1}')
	rm -rf "$d"
	if [ "$n" = 0 ]; then
		HM_TRAPS=no
		HM_TRAPS_WHY="this machine delivers no debug-register traps (perf stat -e mem:ADDR/8:w counted 0 of 16 stores): a check that needs a real watchpoint trap cannot run here"
	else
		HM_TRAPS=yes	# 16, or perf killed by a stray trap: traps are delivered
	fi
}
[ -n "${HM_TRAPS:-}" ] || hm_traps_probe
export HM_TRAPS HM_TRAPS_WHY

traps() { [ "$HM_TRAPS" = yes ]; }
# skip NAME: the check NAME needs real traps, which this machine does not deliver.
skip() { echo "skip $1: ${HM_TRAPS_WHY:-needs real watchpoint traps}"; }
