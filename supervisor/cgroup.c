/*
 * cgroup.c: every worker in a cgroup v2 group of its own, under the
 * directory the `cgroup` key names, in the shape of the tree: /web/front
 * runs in BASE/web/front.  A descendant that leaves its worker's process
 * group (setsid(2), a daemon's double fork) does not leave its cgroup, so
 * a signal to the worker reaches it too, and once the worker's main
 * process is gone the rest of its cgroup is killed with cgroup.kill: at
 * every stop and restart, not only when actord exits.
 *
 * At start, whatever still runs under the base (left by an earlier actord
 * that was killed) is killed first, and the log says where.
 *
 * Owns: the directories under the base, made at a worker's first start and
 * removed with its node or at exit.  Must never kill in the base itself,
 * only in the leaves it made: actord may run inside the base.
 */
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

#define CG_RMDIR_WAIT_MS	200	/* for killed processes to leave */

static int	 node_dir(const struct node *, char *, size_t);
static int	 make_dirs(const char *, size_t, char *, size_t);
static int	 write_file(const char *, const char *, const char *);
static bool	 populated(const char *);
static void	 kill_leaf(const char *);
static int	 own_cgroup(const char *, char *, size_t);
static bool	 holds(const char *, const char *);
static size_t	 count_procs(const char *);
static void	 sweep(const char *, const char *, int);

/* Check the base named by the configuration; off without one. */
int
cgroup_setup(struct actord *ad, char *err, size_t errlen)
{
	const char *base = ad->spec->cgroup;
	struct statfs sf;
	char kill_file[PATH_MAX + 32];

	ad->cgroup = NULL;
	if (base == NULL)
		return 0;
	if (mkdir(base, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "cgroup %s: %s", base, strerror(errno));
		return -1;
	}
	if (statfs(base, &sf) == -1 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen, "cgroup %s: not a cgroup v2 directory",
		    base);
		return -1;
	}
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", base);
	if (access(kill_file, F_OK) == -1) {
		snprintf(err, errlen, "cgroup %s: no cgroup.kill (Linux 5.14 "
		    "or later is needed)", base);
		return -1;
	}
	if ((ad->cgroup = strdup(base)) == NULL) {
		snprintf(err, errlen, "cgroup: %s", strerror(errno));
		return -1;
	}
	log_info("workers run in cgroups under %s", base);
	cgroup_sweep(base);
	return 0;
}

/*
 * Our own cgroup as a path under the cgroup v2 mount that holds base:
 * the mount is the highest cgroup v2 directory above base, and
 * /proc/self/cgroup's "0::" line is relative to it.  -1 if unknown.
 */
static int
own_cgroup(const char *base, char *buf, size_t len)
{
	char root[PATH_MAX], up[PATH_MAX], line[PATH_MAX + 8], *slash;
	struct statfs sf;
	FILE *f;
	int found = -1;

	if (realpath(base, root) == NULL)
		return -1;
	for (;;) {
		memcpy(up, root, sizeof(up));
		if ((slash = strrchr(up, '/')) == NULL || slash == up)
			break;
		*slash = '\0';
		if (statfs(up, &sf) == -1 || sf.f_type != CGROUP2_SUPER_MAGIC)
			break;
		memcpy(root, up, sizeof(root));
	}
	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (found == -1 && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			if (snprintf(buf, len, "%s%s", root,
			    strcmp(line + 3, "/") == 0 ? "" : line + 3) <
			    (int)len)
				found = 0;
		}
	fclose(f);
	return found;
}

/* Is own (our cgroup) dir itself or below it? */
static bool
holds(const char *dir, const char *own)
{
	size_t k = strlen(dir);

	return strncmp(own, dir, k) == 0 && (own[k] == '\0' || own[k] == '/');
}

static size_t
count_procs(const char *dir)
{
	char path[PATH_MAX + 32];
	size_t n = 0;
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		n++;
	fclose(f);
	return n;
}

/*
 * Every group below dir that still holds processes, and does not hold
 * actord, is killed whole (cgroup.kill reaches its descendants); one that
 * holds actord is looked into instead.
 */
static void
sweep(const char *dir, const char *own, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (depth > 64 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(sub))
			continue;
		if (holds(sub, own)) {
			sweep(sub, own, depth + 1);
			continue;
		}
		if (!populated(sub))
			continue;
		log_warnx("cgroup: %s: killing what an earlier actord left "
		    "there (%zu processes, and any below)", sub,
		    count_procs(sub));
		kill_leaf(sub);
	}
	closedir(d);
}

/*
 * At start, before any worker: an earlier actord killed with SIGKILL
 * leaves in its cgroups what escaped its workers' process groups; none of
 * it may run beside the new tree.
 */
void
cgroup_sweep(const char *base)
{
	char own[PATH_MAX], real[PATH_MAX];

	if (realpath(base, real) == NULL)
		return;
	if (own_cgroup(base, own, sizeof(own)) == -1) {
		log_warnx("cgroup: cannot tell actord's own cgroup: what an "
		    "earlier actord left under %s is not looked for", base);
		return;
	}
	sweep(real, own, 0);
}

void
cgroup_close(struct actord *ad)
{
	free(ad->cgroup);
	ad->cgroup = NULL;
}

/* BASE + the node's path: 0, or -1 if it does not fit (or no base). */
static int
node_dir(const struct node *n, char *buf, size_t len)
{
	int k;

	if (n->ad->cgroup == NULL || strcmp(n->path, "/") == 0)
		return -1;
	k = snprintf(buf, len, "%s%s", n->ad->cgroup, n->path);
	return k < 0 || (size_t)k >= len ? -1 : 0;
}

/* mkdir -p of dir's components below its first `keep` bytes (the base). */
static int
make_dirs(const char *dir, size_t keep, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	size_t i, len = strlen(dir);

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, dir, len + 1);
	for (i = keep + 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "cgroup: mkdir %s: %s", buf,
			    strerror(errno));
			return -1;
		}
		buf[i] = dir[i];
	}
	return 0;
}

/* Write s to dir/file; 0 or -1 with errno. */
static int
write_file(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX + 32];
	ssize_t w;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	w = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)strlen(s) ? 0 : -1;
}

/* Does the cgroup at dir hold a process, here or below? */
static bool
populated(const char *dir)
{
	char path[PATH_MAX + 32], buf[256];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return strstr(buf, "populated 1") != NULL;
}

static void
kill_leaf(const char *dir)
{
	if (write_file(dir, "cgroup.kill", "1") == -1 && errno != ENOENT)
		log_warn("cgroup: %s/cgroup.kill", dir);
}

/*
 * Before a worker's fork: its cgroup made, emptied of what an earlier
 * incarnation or an earlier actord left, and *fd open on its cgroup.procs
 * for the child to join before it runs anything (-1: no cgroups).
 */
int
cgroup_prepare(struct node *n, int *fd, char *err, size_t errlen)
{
	char dir[PATH_MAX], procs[PATH_MAX + 32];

	*fd = -1;
	if (n->ad->cgroup == NULL)
		return 0;
	if (node_dir(n, dir, sizeof(dir)) == -1) {
		snprintf(err, errlen, "cgroup: path too long");
		return -1;
	}
	if (make_dirs(dir, strlen(n->ad->cgroup), err, errlen) == -1)
		return -1;
	if (populated(dir))
		kill_leaf(dir);		/* nothing of the past runs on */
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if ((*fd = open(procs, O_WRONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "cgroup: %s: %s", procs, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A signal to the worker, for what left its process group (the group
 * itself had it from killpg): SIGKILL kills the whole cgroup at once, the
 * others go to each process outside the group.
 */
void
cgroup_signal(struct node *n, int sig)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	FILE *f;
	long pid;

	if (node_dir(n, dir, sizeof(dir)) == -1)
		return;
	if (sig == SIGKILL) {
		kill_leaf(dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && (n->pid <= 0 || getpgid((pid_t)pid) != n->pid))
			(void)kill((pid_t)pid, sig);
	fclose(f);
}

/*
 * The node goes away: what runs in its cgroup is killed, and the
 * directory removed once the killed have left (a short bounded wait; a
 * directory still busy is left, and emptied by the next start there).
 */
void
cgroup_remove(struct node *n)
{
	struct timespec ts = { 0, 2000000 };
	char dir[PATH_MAX];
	int waited;

	if (node_dir(n, dir, sizeof(dir)) == -1)
		return;
	if (n->kind == NODE_WORKER)
		kill_leaf(dir);
	for (waited = 0; rmdir(dir) == -1; waited += 2) {
		if (errno != EBUSY || waited >= CG_RMDIR_WAIT_MS) {
			if (errno != ENOENT)
				log_debug("cgroup: rmdir %s: %s", dir,
				    strerror(errno));
			return;
		}
		nanosleep(&ts, NULL);
	}
}
