# tests/sh/lib.sh: what the shell tests (tests/sh/check_*) share: a
# scratch directory, an actord started in the background and stopped by
# its pid, waiting for a condition under a generous deadline (never a
# sleep-and-hope), and the summary line that tests/run counts.
#
# A test sources it, calls t_ok / t_fail per check and t_done at the end.
# Every process it starts is killed by pid on exit, whatever happens.

: "${BUILD:=build}"
T_CHECKS=0
T_FAILS=0
T_ACTORD_PID=
T_NAME=$(basename "$0")
T_DEADLINE=${T_DEADLINE:-120}	# seconds for any one condition

T_TMP=$(mktemp -d "$BUILD/tests/$T_NAME.XXXXXX") || exit 1
T_TMP=$(cd "$T_TMP" && pwd)

t_cleanup() {
	if [ -n "$T_ACTORD_PID" ] && kill -0 "$T_ACTORD_PID" 2>/dev/null; then
		kill -TERM "$T_ACTORD_PID" 2>/dev/null
		t_wait_gone "$T_ACTORD_PID" 30 || kill -KILL "$T_ACTORD_PID"
	fi
	rm -rf "$T_TMP"
}
trap t_cleanup EXIT
trap 'exit 1' INT TERM HUP

t_ok() {
	T_CHECKS=$((T_CHECKS + 1))
	echo "ok: $1"
}

t_fail() {
	T_CHECKS=$((T_CHECKS + 1))
	T_FAILS=$((T_FAILS + 1))
	echo "$T_NAME: FAIL: $1"
}

# t_check DESCRIPTION COMMAND...: one check, passed when COMMAND succeeds.
t_check() {
	d=$1
	shift
	if "$@"; then t_ok "$d"; else t_fail "$d"; fi
}

# A line as Check prints it, which tests/run reads for its totals.
t_done() {
	pct=100
	[ "$T_CHECKS" -eq 0 ] || pct=$(( (T_CHECKS - T_FAILS) * 100 / T_CHECKS ))
	echo "$pct%: Checks: $T_CHECKS, Failures: $T_FAILS, Errors: 0"
	[ "$T_FAILS" -eq 0 ]
}

# t_skip REASON: the whole test cannot run here; say why, count nothing.
t_skip() {
	echo "$T_NAME: SKIPPED: $1"
	echo "100%: Checks: 0, Failures: 0, Errors: 0"
	exit 0
}

# t_wait_gone PID SECONDS: 0 once PID is gone, 1 at the deadline.
t_wait_gone() {
	n=0
	while kill -0 "$1" 2>/dev/null; do
		[ "$n" -lt $(($2 * 10)) ] || return 1
		n=$((n + 1))
		sleep 0.1
	done
	return 0
}

# t_until SECONDS COMMAND...: 0 once COMMAND succeeds, 1 at the deadline.
t_until() {
	lim=$(($1 * 10))
	shift
	n=0
	until "$@" >/dev/null 2>&1; do
		[ "$n" -lt "$lim" ] || return 1
		n=$((n + 1))
		sleep 0.1
	done
	return 0
}

# t_actord_start ACTORD CONF ACTORCTL SOCKET: actord in the background
# (its log in $T_TMP/actord.log), returning once its control socket
# answers.
t_actord_start() {
	"$1" -c "$2" >"$T_TMP/actord.log" 2>&1 &
	T_ACTORD_PID=$!
	t_until "$T_DEADLINE" t_actord_answers "$3" "$4"
	if ! kill -0 "$T_ACTORD_PID" 2>/dev/null ||
	    ! "$3" -S "$4" status >/dev/null 2>&1; then
		echo "$T_NAME: actord did not answer on $4; its log:"
		cat "$T_TMP/actord.log"
		return 1
	fi
}

# t_actord_answers ACTORCTL SOCKET: 0 when actord answers, or is gone (no
# use waiting for it then).
t_actord_answers() {
	kill -0 "$T_ACTORD_PID" 2>/dev/null || return 0
	"$1" -S "$2" status
}

# t_actord_stop ACTORCTL SOCKET: shut the tree down and wait for actord.
t_actord_stop() {
	"$1" -S "$2" shutdown >/dev/null 2>&1 || kill -TERM "$T_ACTORD_PID"
	if ! t_wait_gone "$T_ACTORD_PID" "$T_DEADLINE"; then
		kill -KILL "$T_ACTORD_PID"
		return 1
	fi
	wait "$T_ACTORD_PID" 2>/dev/null
	T_ACTORD_PID=
}

# t_readme_block START: the fenced block of README.md whose first line
# contains START, without its fences.
t_readme_block() {
	awk -v start="$1" '
	    /^```/ { if (inb) { if (want) exit; inb = 0; next }
		     inb = 1; first = 1; next }
	    inb && first { first = 0; if (index($0, start)) want = 1 }
	    inb && want { print }' README.md
}
