# Sourced by the e2e scripts: their common start and the "ok NAME" / "not ok NAME" lines
# tests/run.sh counts. After sourcing: the repository root is the working directory, H is
# the hitmap under test, R the committed recordings (tests/data/rec), T a scratch folder
# removed on exit.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
H=${HITMAP:-./hitmap}
R=tests/data/rec
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

ok() { echo "ok $1"; }
# nok NAME [LINE...]: the failure, then each LINE indented under it.
nok() { echo "not ok $1"; shift; for l in "$@"; do echo "    $l"; done; }
# check NAME CMD...: ok when CMD succeeds, else not ok with its first 10 lines of output.
check() {
	local name=$1
	shift
	if "$@" >"$T/why" 2>&1; then
		echo "ok $name"
	else
		echo "not ok $name"
		sed 's/^/    /' "$T/why" | head -10
	fi
}

. tests/lib/traps.sh	# the working directory is the root (above)
