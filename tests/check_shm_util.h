/*
 * check_shm_util.h: helpers shared by the shm tests (check_shm*.c) and the
 * libactor tests that run without actord: small arenas, arenas of actors
 * up, sender processes, waiting for children.  Static, so each test
 * binary has its own copy; never used outside tests.
 */
#ifndef ACTORD_CHECK_SHM_UTIL_H
#define ACTORD_CHECK_SHM_UTIL_H

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm_impl.h"
#include "worker/actor.h"

#define UNUSED	__attribute__((unused))

/* Sanitizers are slower: run fewer iterations under SAN=1. */
static UNUSED unsigned
shm_test_scale(void)
{
	const char *s = getenv("SAN");

	return s != NULL && strcmp(s, "1") == 0 ? 10 : 1;
}

static UNUSED struct shm_mailbox_layout
shm_test_mbox(uint32_t cap, uint32_t cell, enum shm_overflow pol)
{
	struct shm_mailbox_layout m = {
		.capacity = cap, .cell = cell, .sys_capacity = 8,
		.reply_capacity = 8, .overflow = pol,
		.block_timeout_ms = 1000, .state_size = 1000
	};

	return m;
}

static UNUSED struct shm_arena *
shm_test_arena(uint32_t n, uint32_t cap, uint32_t cell, enum shm_overflow pol)
{
	struct shm_mailbox_layout m[8];
	struct shm_layout l = { n, m, 16, 16 };
	struct shm_arena *a;
	char	 err[SHM_ERRBUF];
	uint32_t i;

	ck_assert_uint_le(n, 8);
	for (i = 0; i < n; i++)
		m[i] = shm_test_mbox(cap, cell, pol);
	ck_assert_msg(shm_create(&l, "check-shm", &a, err, sizeof(err)) == 0,
	    "shm_create: %s", err);
	return a;
}

/* The mailboxes of shm_test_actors_up, all alike. */
struct shm_test_actors {
	uint32_t	 n;		/* actors, at most 32 */
	uint32_t	 cap;		/* main lane's cells (of 128 bytes) */
	uint32_t	 rcap;		/* reply lane's cells */
	enum shm_overflow ov;		/* main lane's policy */
	uint32_t	 block_ms;	/* block_timeout_ms */
	uint32_t	 watchers;	/* room in each region for so many */
	uint32_t	 cell;		/* bytes of a cell (0: 128) */
	uint32_t	 max_message;	/* largest payload (0: a cell's) */
};

/*
 * n actors up, as actord makes them without actord: each with a path
 * ("/a0", "/a1", ...), configured, prepared and UP.
 */
static UNUSED struct shm_arena *
shm_test_actors_up(const struct shm_test_actors *t)
{
	struct shm_mailbox_layout mb[32];
	struct shm_layout l;
	struct shm_arena *a;
	char	 err[SHM_ERRBUF], path[16];
	uint32_t i;

	ck_assert_uint_le(t->n, 32);
	memset(mb, 0, sizeof(mb));
	for (i = 0; i < t->n; i++) {
		mb[i].capacity = t->cap;
		mb[i].cell = t->cell > 0 ? t->cell : 128;
		mb[i].max_message = t->max_message;
		mb[i].sys_capacity = 16;
		mb[i].reply_capacity = t->rcap;
		mb[i].overflow = t->ov;
		mb[i].block_timeout_ms = t->block_ms;
		mb[i].state_size = (uint32_t)actor_region_size(t->watchers,
		    256, t->rcap);
	}
	memset(&l, 0, sizeof(l));
	l.nmailboxes = t->n;
	l.mailboxes = mb;
	l.nproducers = 8;
	l.dl_capacity = 64;
	ck_assert_msg(shm_create(&l, "actors", &a, err, sizeof(err)) == 0,
	    "shm_create: %s", err);
	for (i = 0; i < t->n; i++) {
		snprintf(path, sizeof(path), "/a%u", i);
		ck_assert_int_eq(shm_actor_set_path(a, i, path), 0);
		ck_assert_int_eq(actor_configure(a, i, NULL), 0);
		ck_assert_uint_eq(actor_prepare_start(a, i), 1);
		shm_actor_set_state(a, i, SHM_ACTOR_UP);
	}
	return a;
}

/* A handle on actor idx (-1: a client), or the test fails. */
static UNUSED struct actor *
shm_test_open(struct shm_arena *ar, int32_t idx)
{
	struct actor *a;
	char	 err[ACTOR_ERRBUF];

	ck_assert_msg(actor_open(ar, idx, &a, err, sizeof(err)) == 0, "%s",
	    err);
	return a;
}

/* Exit status of a child (128 + signal if killed), -1 on error. */
static UNUSED int
shm_test_wait_exit(pid_t pid)
{
	int	 st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Whether child pid has exited, without reaping it. */
static UNUSED bool
shm_test_exited(pid_t pid)
{
	siginfo_t	 si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    0 && si.si_pid == pid;
}

/*
 * A child that sends M messages {id, i} (tag 7, sender.index id) to
 * mailbox idx, each waiting up to timeout_ns when the lane is full
 * (SHM_NO_TIMEOUT: as long as it takes).  Exits 0 when all went in, 1
 * when one timed out full, 11 on any other failure.
 */
static UNUSED pid_t
shm_test_spawn_sender_to(struct shm_arena *a, uint32_t idx, uint32_t id,
    unsigned M, int64_t timeout_ns)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	uint32_t	 body[2];
	unsigned	 i;
	pid_t		 pid;
	int		 rc;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	if (shm_producer_open(a, &p) != 0)
		_exit(10);
	memset(&m, 0, sizeof(m));
	m.tag = 7;
	m.len = sizeof(body);
	m.sender.index = id;
	for (i = 0; i < M; i++) {
		body[0] = id;
		body[1] = i;
		rc = shm_send(p, idx, SHM_LANE_MAIN, &m, body, timeout_ns);
		if (rc != 0)
			_exit(rc == SHM_EFULL ? 1 : 11);
	}
	shm_producer_close(p);
	_exit(0);
}

/* The same, waiting as long as it takes. */
static UNUSED pid_t
shm_test_spawn_sender(struct shm_arena *a, uint32_t idx, uint32_t id,
    unsigned M)
{
	return shm_test_spawn_sender_to(a, idx, id, M, SHM_NO_TIMEOUT);
}

/* The dead letters of reason r in the ring. */
static UNUSED unsigned
shm_test_count_dl(struct shm_arena *a, enum shm_dl_reason r)
{
	struct shm_dead_letter d;
	uint64_t cur = 0;
	unsigned n = 0;

	while (shm_dl_read(a, &cur, &d) == 1)
		if (d.reason == (uint32_t)r)
			n++;
	return n;
}

/* Senders of mailbox idx queued for a turn not yet granted (turns.c). */
static UNUSED uint32_t
shm_test_queued(struct shm_arena *a, uint32_t idx)
{
	struct shm_mbox *m = shm_mb(a, idx)->m;

	return atomic_load(&m->turn_next) - atomic_load(&m->turn_grant);
}

/*
 * Wait until at least n senders wait on mailbox idx being full (1), or
 * not (0): queued for their turn (block, coalesce) or counted as waiting
 * for a head cell (drop_oldest).
 */
static UNUSED int
shm_test_waiting_senders(struct shm_arena *a, uint32_t idx, uint32_t n,
    unsigned ms)
{
	struct timespec ts = { 0, 1000000 };
	unsigned i;

	for (i = 0; i < ms; i++) {
		if (shm_test_queued(a, idx) + atomic_load(&shm_mb(a,
		    idx)->m->space_waiters) >= n)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Wait until a sender sleeps on mailbox idx being full (1), or not (0). */
static UNUSED int
shm_test_sleeping_senders(struct shm_arena *a, uint32_t idx, unsigned ms)
{
	return shm_test_waiting_senders(a, idx, 1, ms);
}

/* Seals for shm_test_copy: as actord seals the data, and the layout. */
#define SHM_TEST_SEALS		(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define SHM_TEST_SEALS_RO	(SHM_TEST_SEALS | F_SEAL_FUTURE_WRITE)

/* A memfd of newsize bytes holding a copy of base, with seals (0: none). */
static UNUSED int
shm_test_copy(const void *base, size_t size, size_t newsize, int seals)
{
	int	 fd = memfd_create("check-copy", MFD_CLOEXEC |
		    MFD_ALLOW_SEALING);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)newsize), 0);
	ck_assert_int_eq(pwrite(fd, base, size < newsize ? size : newsize, 0),
	    (ssize_t)(size < newsize ? size : newsize));
	if (seals != 0)
		ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}


/*
 * From now on every call of system call nr by this process, and by what
 * it forks, raises SIGSYS, handled by on_trap (SA_SIGINFO); the call
 * itself returns what the handler leaves in its return register.  -1 if
 * the handler or the seccomp filter could not be set.
 */
static UNUSED int
shm_test_trap_syscall(int nr, void (*on_trap)(int, siginfo_t *, void *))
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) == -1 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		return -1;
	return 0;
}

#endif /* ACTORD_CHECK_SHM_UTIL_H */
