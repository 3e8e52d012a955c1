/*
 * actord_main.c: the actord program: options, configuration, pid file,
 * then the supervision core (libactord) until the tree is done.  It runs
 * in the foreground, as systemd, s6 and runit expect.
 *
 * Exit status (actord(8)): 0 clean shutdown, 1 usage or configuration
 * error, 2 a child failed to start, 3 the root supervisor gave up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/log.h"

#define DEFAULT_CONFIG	"/etc/actord.conf"

struct main_state {
	const char	*config;
	const char	*pidfile;
	struct tree_ctl	*tc;		/* the control socket, for reloads */
};

static void	usage(void) __attribute__((noreturn));
static void	on_hup(struct actord *, void *);
static int	write_pidfile(const char *);
static size_t	kill_children(void);
static void	kill_orphans(void);

static void
usage(void)
{
	fprintf(stderr, "usage: actord [-nv] [-c file] [-p pidfile]\n");
	exit(ACTORD_EXIT_CONFIG);
}

/* SIGHUP: read the file again; a bad one is refused, the tree stays. */
static void
on_hup(struct actord *ad, void *arg)
{
	struct main_state *ms = arg;
	char err[1024];

	log_info("SIGHUP: reloading %s", ms->config);
	if ((ms->tc != NULL ? backend_reload(ms->tc, err, sizeof(err)) :
	    actord_reload_file(ad, ms->config, err, sizeof(err))) != 0)
		log_warnx("reload refused: %s", err);
}

static int
write_pidfile(const char *path)
{
	char buf[32];
	int fd, n;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * SIGKILL every child this process still has, from the children lists of
 * its threads; reap them.  Returns how many there were.
 */
static size_t
kill_children(void)
{
	char path[320];
	pid_t pids[256];
	size_t n = 0, i;
	struct dirent *de;
	DIR *dir;
	FILE *f;
	long v;

	if ((dir = opendir("/proc/self/task")) == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL && n < 256) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children",
		    de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (n < 256 && fscanf(f, "%ld", &v) == 1)
			pids[n++] = (pid_t)v;
		fclose(f);
	}
	closedir(dir);
	for (i = 0; i < n; i++) {
		log_warnx("orphan pid %d left by the tree: SIGKILL",
		    (int)pids[i]);
		(void)kill(pids[i], SIGKILL);
	}
	for (i = 0; i < n; i++)
		(void)waitpid(pids[i], NULL, 0);
	return n;
}

/*
 * The tree is freed and its process groups are gone, but a descendant
 * that left its worker's process group (setsid, a daemon's double fork)
 * came back to us, the subreaper: here every child of actord is of the
 * tree, so none may outlive it.  Each round may orphan grandchildren to
 * us again; the rounds are bounded.
 */
static void
kill_orphans(void)
{
	int round;

	for (round = 0; round < 64 && kill_children() > 0; round++)
		continue;
}

int
main(int argc, char *argv[])
{
	struct main_state ms;
	struct actord_spec *spec;
	struct actord *ad;
	struct tree_ctl *tc;
	char err[1024];
	int ch, check = 0, verbose = 0, status;

	memset(&ms, 0, sizeof(ms));
	ms.config = DEFAULT_CONFIG;
	while ((ch = getopt(argc, argv, "c:np:v")) != -1) {
		switch (ch) {
		case 'c':
			ms.config = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'p':
			ms.pidfile = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	log_init("actord", verbose > 0 ? 2 : 0);	/* -v: debug too */

	if ((spec = config_load(ms.config, err, sizeof(err))) == NULL) {
		fprintf(stderr, "actord: %s\n", err);
		return ACTORD_EXIT_CONFIG;
	}
	if (check) {
		fprintf(stderr, "actord: %s: configuration OK\n", ms.config);
		spec_free(spec);
		return ACTORD_EXIT_OK;
	}
	if (spec->log.path != NULL && log_open_file(spec->log.path) == -1) {
		fprintf(stderr, "actord: log %s: %s\n", spec->log.path,
		    strerror(errno));
		spec_free(spec);
		return ACTORD_EXIT_CONFIG;
	}
	log_set_rotation(spec->log.max_size, spec->log.keep);
	if (ms.pidfile == NULL)
		ms.pidfile = spec->pidfile;
	/* A write to a closed pipe is an error return, never a death. */
	signal(SIGPIPE, SIG_IGN);

	if ((ad = actord_new(spec, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		spec_free(spec);
		return ACTORD_EXIT_CONFIG;
	}
	ad->free_spec = spec_free;
	ad->on_hup = on_hup;
	ad->hup_arg = &ms;
	if (ms.pidfile != NULL && write_pidfile(ms.pidfile) == -1)
		log_warn("pid file %s", ms.pidfile);
	/* The control socket (and metrics) in spec->runtime_dir. */
	if ((tc = backend_open(ad, ms.config, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		if (ms.pidfile != NULL)
			(void)unlink(ms.pidfile);
		actord_free(ad);
		return ACTORD_EXIT_CONFIG;
	}
	ms.tc = tc;

	status = actord_run(ad);
	log_info("exiting with status %d: %s", status, ad->message);
	backend_drain(tc, 200);		/* shutdown's answer goes out */
	ms.tc = NULL;
	backend_close(tc);
	if (ms.pidfile != NULL)
		(void)unlink(ms.pidfile);
	actord_free(ad);
	kill_orphans();
	return status;
}
