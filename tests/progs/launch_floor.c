/*
 * launch_floor.c: the physical floor of a tree's start, for
 * tools/bench/bench_scale.  Exec'd as actord is, it starts N programs as
 * actord starts its workers, all at once, and says so once each of them
 * has reached its main: the two execs (this program, then each worker)
 * and nothing else of actord's.
 *
 *   launch_floor N PROG [ARG...]
 *
 * Each child is PROG with its stdout on /dev/null and, on descriptor 3
 * (ACTORD_NOTIFY_FD=3 in its environment, nothing else), the write end
 * of one pipe shared by all: tworker's "fd 0" mode writes a newline there
 * from its main.  Once N newlines came, one newline goes to our stdout,
 * and we wait to be killed with our process group (each child is in it).
 * Exits 1 if the children are all gone before that, 2 on a usage error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pid_t	spawn(char **, int, int);

/* argv[0] with stdout on devnull and notify on 3: system calls only. */
static pid_t
spawn(char **argv, int devnull, int notify)
{
	static char *envp[] = { (char *)"ACTORD_NOTIFY_FD=3", NULL };
	pid_t pid;

	if ((pid = vfork()) == 0) {
		if (dup2(devnull, 1) == -1 || dup2(notify, 3) == -1)
			_exit(127);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	return pid;
}

int
main(int argc, char *argv[])
{
	char buf[4096];
	long n, i, seen = 0;
	ssize_t k;
	int p[2], devnull;

	if (argc < 3 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: launch_floor N PROG [ARG...]\n");
		return 2;
	}
	if (pipe2(p, O_CLOEXEC) == -1 ||
	    (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		return 1;
	for (i = 0; i < n; i++)
		if (spawn(argv + 2, devnull, p[1]) == -1)
			return 1;
	close(p[1]);
	while (seen < n && (k = read(p[0], buf, sizeof(buf))) > 0)
		seen += k;
	if (seen < n)
		return 1;
	if (write(1, "\n", 1) != 1)
		return 1;
	for (;;)
		pause();
}
