# Sourced by bench/report.sh and bench/lab.sh. measure CMD...: the best CPU seconds
# (user + sys) of $RUNS runs, that run's peak RSS in KB and its wall seconds, as
# "SECONDS KB WALL"; needs $T (a scratch folder) and GNU time.
measure() {
	local best="" kb="" wall=""
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%U %S %M %e" -o "$T/t" "$@" >/dev/null 2>/dev/null
		read -r u s m e <"$T/t"
		local c
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
		if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$c kb=$m wall=$e
		fi
	done
	echo "$best $kb $wall"
}
