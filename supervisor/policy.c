/*
 * policy.c: the supervision rules that are pure functions: the backoff
 * delay, the clean-exit rule, the restart-type rule, the intensity window,
 * and how a death is described.
 *
 * It owns no state and makes no system call, so every rule here is unit
 * tested with fixed inputs (a fixed random source for the jitter).  It must
 * never read the clock: callers pass the time in.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "supervisor/actord.h"

/*
 * The delay before a restart, in ms.  attempt counts the restarts since the
 * child last stayed up min_uptime: the base delay is min doubled attempt
 * times, capped at max; the delay is drawn in [base, 1.5 base], capped at
 * max, so it never goes past max and never below min.  At the cap, the
 * range becomes [0.75 max, max] so restarts still spread out in time.
 */
uint32_t
backoff_delay(uint32_t min, uint32_t max, unsigned attempt, uint32_t random)
{
	uint64_t base, lo, hi;

	if (max < min)
		max = min;
	if (min == 0)
		return 0;
	base = min;
	while (attempt-- > 0 && base < max)
		base *= 2;
	if (base > max)
		base = max;
	lo = base;
	hi = base + base / 2;
	if (hi > max)
		hi = max;
	if (hi == lo) {
		lo = hi - hi / 4;
		if (lo < min)
			lo = min;
	}
	return (uint32_t)(lo + random % (hi - lo + 1));
}

/*
 * A clean exit: status 0 or one listed in success_exit, or death by
 * SIGTERM, SIGINT, SIGHUP or SIGPIPE that actord did not send (systemd's
 * convention; OTP's "shutdown").  Anything else is abnormal.
 */
bool
exit_is_clean(int wstatus, bool we_signalled, const int *success,
    size_t nsuccess)
{
	size_t i;
	int sig;

	if (WIFEXITED(wstatus)) {
		if (WEXITSTATUS(wstatus) == 0)
			return true;
		for (i = 0; i < nsuccess; i++)
			if (success[i] == WEXITSTATUS(wstatus))
				return true;
		return false;
	}
	if (WIFSIGNALED(wstatus)) {
		sig = WTERMSIG(wstatus);
		if (we_signalled)
			return false;
		return sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
		    sig == SIGPIPE;
	}
	return false;
}

/* "exited 3", "killed by signal 9 (Killed)". */
void
exit_describe(int wstatus, char *buf, size_t len)
{
	if (WIFEXITED(wstatus))
		snprintf(buf, len, "exited %d", WEXITSTATUS(wstatus));
	else if (WIFSIGNALED(wstatus))
		snprintf(buf, len, "killed by signal %d (%s)%s",
		    WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)),
		    WCOREDUMP(wstatus) ? ", core dumped" : "");
	else
		snprintf(buf, len, "wait status %#x", (unsigned)wstatus);
}

/*
 * Keep the decisions inside the window: a decision at time t is inside
 * while t >= now - period.  times is in increasing order; returns how many
 * remain (moved to the front).
 */
size_t
window_prune(uint64_t *times, size_t n, uint64_t now, uint64_t period_ms)
{
	size_t i, j;
	uint64_t edge;

	edge = now >= period_ms ? now - period_ms : 0;
	for (i = 0; i < n && times[i] < edge; i++)
		;
	for (j = 0; i < n; i++, j++)
		times[j] = times[i];
	return j;
}

/* The restart-type rule, for a worker that exited on its own. */
bool
restart_wanted(enum restart_type type, bool clean)
{
	switch (type) {
	case RESTART_PERMANENT:
		return true;
	case RESTART_TRANSIENT:
		return !clean;
	case RESTART_TEMPORARY:
	default:
		return false;
	}
}

/* xorshift64*: the jitter needs spread, not secrecy. */
uint32_t
rng_next(uint64_t *state)
{
	uint64_t x = *state;

	if (x == 0)
		x = 0x9e3779b97f4a7c15ULL;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dULL) >> 32);
}
