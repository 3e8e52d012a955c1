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
#include <getopt.h>
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

static void	usage(int) __attribute__((noreturn));
static void	on_hup(struct actord *, void *);
static int	write_pidfile(const char *);
static size_t	kill_children(void);
static void	kill_orphans(void);

/* -h: on stdout, exit 0; a usage error: on stderr, exit 1. */
static void
usage(int status)
{
	FILE *f = status == 0 ? stdout : stderr;

	fprintf(f, "usage: actord [-hnv] [-c file] [-p pidfile]\n");
	if (status == 0)
		fprintf(f, "the supervision tree of actord.conf(5), in the "
		    "foreground\n"
		    "options:\n"
		    "  -c file      the configuration (default %s)\n"
		    "  -n           check the configuration and every exec "
		    "program, then exit\n"
		    "  -p pidfile   write actord's pid there\n"
		    "  -v           log debug messages too\n"
		    "  -h, --help   this help\n", DEFAULT_CONFIG);
	exit(status);
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
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, check = 0, verbose = 0, status, bad;

	memset(&ms, 0, sizeof(ms));
	ms.config = DEFAULT_CONFIG;
	opterr = 0;	/* our messages name the program "actord" */
	while ((ch = getopt_long(argc, argv, ":c:hnp:v", lo, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(0);
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
		case ':':
			fprintf(stderr, "actord: %s needs a value\n",
			    argv[optind - 1]);
			usage(ACTORD_EXIT_CONFIG);
		default:
			fprintf(stderr, "actord: unknown option %s\n",
			    argv[optind - 1]);
			usage(ACTORD_EXIT_CONFIG);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "actord: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(ACTORD_EXIT_CONFIG);
	}
	log_init("actord", verbose > 0 ? 2 : 0);	/* -v: debug too */

	if ((spec = config_load(ms.config, err, sizeof(err))) == NULL) {
		fprintf(stderr, "actord: %s\n", err);
		return ACTORD_EXIT_CONFIG;
	}
	if (check) {
		/* Every program must be there, and runnable by its user. */
		if ((bad = exec_check(spec, stderr)) > 0) {
			fprintf(stderr, "actord: %s: %d program%s cannot run\n",
			    ms.config, bad, bad == 1 ? "" : "s");
			spec_free(spec);
			return ACTORD_EXIT_CONFIG;
		}
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
	/* The cause was logged where it happened: the status says what. */
	log_info("exiting with status %d: %s", status,
	    status == ACTORD_EXIT_OK ? "stopped" :
	    status == ACTORD_EXIT_START ? "a child failed to start" :
	    status == ACTORD_EXIT_GAVEUP ? "the root supervisor gave up" :
	    ad->message);
	backend_drain(tc, 200);		/* shutdown's answer goes out */
	ms.tc = NULL;
	backend_close(tc);
	if (ms.pidfile != NULL)
		(void)unlink(ms.pidfile);
	actord_free(ad);
	kill_orphans();
	return status;
}
