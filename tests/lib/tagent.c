/*
 * tagent.c: what the tests that let forked agents loose on a real actord
 * share; see tagent.h.  Tests only.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/ctltest.h"
#include "tests/lib/tagent.h"

void
tagent_conf_install(const struct ts_daemon *d, const char *text)
{
	char tmp[160];
	size_t n = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", d->conf, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1)
		return;
	if (write(fd, text, n) != (ssize_t)n) {
		close(fd);
		unlink(tmp);
		return;
	}
	close(fd);
	(void)rename(tmp, d->conf);
}

const char *
tagent_log_tail(const struct ts_daemon *d)
{
	static char buf[16384];
	ssize_t r;
	off_t end;
	int fd;

	buf[0] = '\0';
	if ((fd = open(d->log, O_RDONLY | O_CLOEXEC)) == -1)
		return buf;
	end = lseek(fd, 0, SEEK_END);
	r = pread(fd, buf, sizeof(buf) - 1, end > (off_t)sizeof(buf) - 1 ?
	    end - (off_t)sizeof(buf) + 1 : 0);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return buf;
}

const char *
tagent_stat_fields(pid_t pid, int n, char *buf, size_t len)
{
	char path[64], *p;
	int field;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	p = fgets(buf, (int)len, f) != NULL ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* Field 3 follows ") ". */
	for (field = 3, p = p != NULL ? p + 2 : NULL; field < n && p != NULL;
	    field++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	return p;
}

unsigned long long
tagent_proc_start(pid_t pid)
{
	char buf[1024];
	const char *p = tagent_stat_fields(pid, 22, buf, sizeof(buf));

	return p != NULL ? strtoull(p, NULL, 10) : 0;
}

bool
tagent_is_worker(const struct ctl_node *n)
{
	return strcmp(n->kind, "worker") == 0;
}

const struct ctl_node *
tagent_find(const struct ctl_response *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->nnodes; i++)
		if (strcmp(t->nodes[i].path, path) == 0)
			return &t->nodes[i];
	return NULL;
}

/*
 * Stop, or remove once stopped, what status shows of group's instances
 * from keep on: how many it showed, or -1.
 */
static int
trim_pass(const char *sock, const char *group, unsigned keep)
{
	struct ctl_request q;
	struct ctl_response t, r;
	size_t i, glen = strlen(group);
	const char *p;
	char *end;
	unsigned long idx;
	int left = 0;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	if (ctltest_request(sock, &q, &t) != 0)
		return -1;
	for (i = 0; i < t.nnodes; i++) {
		p = t.nodes[i].path;
		if (strncmp(p, group, glen) != 0 || p[glen] != '/' ||
		    p[glen + 1] < '0' || p[glen + 1] > '9')
			continue;
		idx = strtoul(p + glen + 1, &end, 10);
		if (*end != '\0' || idx < keep)
			continue;
		left++;
		memset(&q, 0, sizeof(q));
		/* As OTP's delete_child: stopped first, then removed. */
		q.cmd = strcmp(t.nodes[i].state, "stopped") == 0 ||
		    strcmp(t.nodes[i].state, "failed") == 0 ?
		    CTL_CMD_REMOVE : CTL_CMD_STOP;
		snprintf(q.path, sizeof(q.path), "%s", p);
		q.present = 1u << CTL_F_PATH;
		if (ctltest_request(sock, &q, &r) == 0)
			ctl_response_free(&r);
	}
	ctl_response_free(&t);
	return left;
}

bool
tagent_trim_group(const char *sock, const char *group, unsigned keep, int ms)
{
	int waited;

	for (waited = 0; waited < ms; waited += 50) {
		if (trim_pass(sock, group, keep) == 0)
			return true;
		ts_sleep_ms(50);
	}
	return false;
}

const struct ctl_node *
tagent_pick(const struct ctl_response *t, bool worker, unsigned *rnd)
{
	const struct ctl_node *n;
	size_t i, tries;

	if (t == NULL || t->nnodes == 0)
		return NULL;
	for (tries = 0; tries < 4 * t->nnodes; tries++) {
		n = &t->nodes[(size_t)rand_r(rnd) % t->nnodes];
		if ((!worker || (tagent_is_worker(n) && n->pid > 0)) &&
		    strcmp(n->path, "/") != 0)
			return n;
	}
	for (i = 0; i < t->nnodes; i++)
		if (tagent_is_worker(&t->nodes[i]) && t->nodes[i].pid > 0)
			return &t->nodes[i];
	return NULL;
}

void
tagent_nap(unsigned *rnd, int max_ms)
{
	ts_sleep_ms(rand_r(rnd) % (max_ms + 1));
}

bool
tagent_end(pid_t pid, int ms)
{
	int st, waited;

	for (waited = 0; waited < ms; waited += 10) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0;
		ts_sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return false;
}

void
tagent_remember(struct tagent_seen *s, pid_t pid)
{
	unsigned long long start = tagent_proc_start(pid);
	unsigned i, n = atomic_load(&s->n);

	if (start == 0)
		return;
	for (i = 0; i < n && i < TAGENT_MAX_SEEN; i++)
		if (s->p[i].pid == pid && s->p[i].start == start)
			return;
	if ((i = atomic_fetch_add(&s->n, 1)) >= TAGENT_MAX_SEEN)
		return;
	s->p[i].start = start;
	s->p[i].pid = pid;
}

bool
tagent_outlived(const struct tagent_proc *p)
{
	if (p->start == 0 || tagent_proc_start(p->pid) != p->start)
		return false;
	fprintf(stderr, "pid %d outlived actord\n", (int)p->pid);
	kill(p->pid, SIGKILL);	/* clean up, then fail */
	return true;
}

unsigned
tagent_seen_left(struct tagent_seen *s, unsigned *n)
{
	unsigned i, left = 0;

	*n = atomic_load(&s->n);
	if (*n > TAGENT_MAX_SEEN)
		*n = TAGENT_MAX_SEEN;
	for (i = 0; i < *n; i++)
		left += tagent_outlived(&s->p[i]);
	return left;
}

pid_t
tagent_fork(void (*run)(int), int arg)
{
	pid_t pid = fork();

	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		run(arg);
		_exit(0);
	}
	return pid;
}
