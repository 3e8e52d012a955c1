/*
 * tworker.c: an exec'able worker for the supervisor tests.
 *
 *   tworker MODE [ARG]
 *	run		sleep until killed
 *	exit N		exit with status N at once
 *	crash MS	run MS milliseconds, then exit 1
 *	fd MS		after MS ms, a newline on ACTORD_NOTIFY_FD
 *	sd_notify MS	after MS ms, READY=1 on NOTIFY_SOCKET
 *	mute		never say it is ready
 *	ignterm		ignore SIGTERM
 *	spam N		print N lines, then sleep
 *
 * Before anything else it writes its pid to $TW_DIR/NAME.pid (NAME: the
 * last part of ACTORD_PATH) when TW_DIR is set, and prints one line
 * "tworker MODE up" on stdout for the output-capture tests.
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1)
		;
}

static void
write_pid(void)
{
	const char *dir = getenv("TW_DIR"), *path = getenv("ACTORD_PATH");
	const char *name;
	char file[512];
	FILE *f;

	if (dir == NULL || path == NULL)
		return;
	name = strrchr(path, '/');
	name = name != NULL ? name + 1 : path;
	snprintf(file, sizeof(file), "%s/%s.pid.tmp", dir, name);
	if ((f = fopen(file, "w")) == NULL)
		return;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	{
		char final[512];

		snprintf(final, sizeof(final), "%s/%s.pid", dir, name);
		rename(file, final);
	}
}

static void
sd_ready(void)
{
	const char *p = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	size_t len;
	int fd;

	if (p == NULL || (len = strlen(p)) >= sizeof(sun.sun_path))
		return;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, p, len);
	if (p[0] == '@')
		sun.sun_path[0] = '\0';
	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
		return;
	(void)sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sun,
	    offsetof(struct sockaddr_un, sun_path) + len);
	close(fd);
}

int
main(int argc, char *argv[])
{
	const char *mode = argc > 1 ? argv[1] : "run";
	long arg = argc > 2 ? atol(argv[2]) : 0;
	const char *nfd;

	write_pid();
	printf("tworker %s up\n", mode);
	fflush(stdout);
	if (strcmp(mode, "exit") == 0)
		return (int)arg;
	if (strcmp(mode, "spam") == 0) {
		long i;

		for (i = 0; i < arg; i++)
			printf("spam line %ld\n", i);
		fflush(stdout);
	}
	if (strcmp(mode, "crash") == 0) {
		sleep_ms(arg);
		return 1;
	}
	if (strcmp(mode, "fd") == 0) {
		sleep_ms(arg);
		if ((nfd = getenv("ACTORD_NOTIFY_FD")) != NULL)
			(void)!write(atoi(nfd), "\n", 1);
	} else if (strcmp(mode, "sd_notify") == 0) {
		sleep_ms(arg);
		sd_ready();
	} else if (strcmp(mode, "ignterm") == 0)
		signal(SIGTERM, SIG_IGN);
	for (;;)
		pause();
}
