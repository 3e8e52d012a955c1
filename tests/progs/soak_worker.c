/*
 * soak_worker.c: a plain worker for tests/check_adv_soak.c, the kind an
 * operator's tree holds that makes supervision hard:
 *
 *	soak_worker forker	forks a child that stays in its process group
 *				and sleeps for ever, then, every 200 ms, a
 *				daemon (a double fork and setsid, out of the
 *				group) that lives up to 300 ms and exits: the
 *				first must die with the worker, the second is
 *				an orphan actord (the subreaper) must reap;
 *				exits 0 on SIGTERM
 *	soak_worker stubborn	ignores SIGTERM and sleeps: only the
 *				shutdown's SIGKILL ends it
 *
 * Each process it makes (itself, its child, every daemon) appends one line
 * "PID START" (START: field 22 of /proc/PID/stat, so that a reused pid is
 * never mistaken for it) to $TW_DIR/soak.pids, with O_APPEND: the test
 * checks that none of them is alive once actord is gone.
 *
 * It owns nothing but what it forks.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1)
		;
}

/* This process's start time, field 22 of /proc/self/stat; 0 if unknown. */
static unsigned long long
self_start(void)
{
	char buf[1024], *p;
	int fd, field;
	ssize_t r;

	if ((fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (field = 3, p += 2; field < 22 && p != NULL; field++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	return p != NULL ? strtoull(p, NULL, 10) : 0;
}

/* "PID START" appended to $TW_DIR/soak.pids, whole or not at all. */
static void
note_self(void)
{
	const char *dir = getenv("TW_DIR");
	char path[512], line[64];
	int fd, n;

	if (dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/soak.pids", dir);
	n = snprintf(line, sizeof(line), "%d %llu\n", (int)getpid(),
	    self_start());
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0644)) == -1)
		return;
	(void)!write(fd, line, (size_t)n);
	close(fd);
}

/* A child in our process group: it sleeps until killed. */
static void
group_child(void)
{
	pid_t pid = fork();

	if (pid != 0)
		return;
	signal(SIGTERM, SIG_DFL);
	note_self();
	for (;;)
		pause();
}

/* A daemon out of our group, that actord adopts and must reap. */
static void
daemon_child(unsigned *rnd)
{
	int ms = rand_r(rnd) % 300;
	pid_t pid = fork();

	if (pid == -1)
		return;
	if (pid > 0) {
		(void)waitpid(pid, NULL, 0);
		return;
	}
	if (setsid() == -1 || fork() != 0)
		_exit(0);
	signal(SIGTERM, SIG_DFL);
	note_self();
	sleep_ms(ms);
	_exit(0);
}

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	unsigned rnd = (unsigned)getpid();

	if (argc < 2)
		return 2;
	note_self();
	if (strcmp(argv[1], "stubborn") == 0) {
		signal(SIGTERM, SIG_IGN);
		for (;;)
			pause();
	}
	if (strcmp(argv[1], "forker") != 0)
		return 2;
	signal(SIGTERM, on_term);
	group_child();
	while (!stop) {
		daemon_child(&rnd);
		sleep_ms(200);
	}
	return 0;
}
