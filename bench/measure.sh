# Sourced by bench/report.sh and bench/lab.sh. measure CMD...: over $RUNS runs, the least
# CPU seconds (user + sys, all threads), the largest peak RSS in KB and the least wall
# seconds, as "SECONDS KB WALL"; needs $T (a scratch folder) and GNU time. CPU and wall
# are each the best of their runs: with two threads they are different questions (work
# done, time waited), and another job on the machine only ever adds to either.
measure() {
	local best="" kb=0 wall=""
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%U %S %M %e" -o "$T/t" "$@" >/dev/null 2>/dev/null
		read -r u s m e <"$T/t"
		local c
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
		if [ -z "$best" ] || awk -v a="$c" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$c
		fi
		if [ -z "$wall" ] || awk -v a="$e" -v b="$wall" 'BEGIN { exit !(a < b) }'; then
			wall=$e
		fi
		[ "$m" -gt "$kb" ] && kb=$m
	done
	echo "$best $kb $wall"
}
