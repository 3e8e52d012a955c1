/*
 * execpath.c: the program a worker's exec names, on this machine.
 *
 * A name without a slash ("sleep") is looked up, once, when the
 * configuration is read, in a fixed search path (EXEC_SEARCH_PATH, as
 * systemd does for ExecStart=): never in actord's own PATH, which depends
 * on how actord was started.  `actord -n` then checks that every
 * program exists and that the user the worker runs as may execute it,
 * so that "configuration OK" means the tree can start.
 *
 * It owns no state.  It must never run a program, and never change a
 * credential of actord itself: the check as another user runs in a child
 * process.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/config.h"

static int	 check_sup(const struct actord_spec *, const struct sup_spec *,
		    const char *, FILE *);
static int	 check_child(const struct actord_spec *,
		    const struct child_spec *, const char *, FILE *);
static int	 access_as(const char *, uid_t, gid_t, const char *);

/*
 * The program called name (no slash) in EXEC_SEARCH_PATH, into out: 0, or
 * -1 when no directory of it holds an executable file of that name.
 */
int
exec_search(const char *name, char *out, size_t outlen)
{
	const char	*dir = EXEC_SEARCH_PATH, *end;
	struct stat	 st;
	int		 n;

	while (*dir != '\0') {
		end = strchrnul(dir, ':');
		n = snprintf(out, outlen, "%.*s/%s", (int)(end - dir), dir,
		    name);
		if (n > 0 && (size_t)n < outlen && stat(out, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		dir = *end == ':' ? end + 1 : end;
	}
	return -1;
}

/*
 * 0 when uid (with gid and user's groups) may execute path, else an errno
 * value.  Run in a child, which takes those credentials and asks
 * access(2); without the privilege to take them, as actord itself.
 */
static int
access_as(const char *path, uid_t uid, gid_t gid, const char *user)
{
	pid_t	 pid;
	int	 st;

	if (geteuid() != 0 || uid == geteuid())
		return access(path, X_OK) == 0 ? 0 : errno;
	if ((pid = fork()) == -1)
		return errno;
	if (pid == 0) {
		if ((user != NULL ? initgroups(user, gid) :
		    setgroups(0, NULL)) == -1 || setgid(gid) == -1 ||
		    setuid(uid) == -1)
			_exit(255);
		_exit(access(path, X_OK) == 0 ? 0 : errno & 0xff);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return EPERM;
	return WEXITSTATUS(st);
}

static int
check_child(const struct actord_spec *spec, const struct child_spec *c,
    const char *path, FILE *out)
{
	struct passwd	*pw = NULL;
	struct group	*gr;
	struct stat	 st;
	char		 prog[PATH_MAX], who[128];
	uid_t		 uid = geteuid();
	gid_t		 gid = getegid();
	int		 e;

	if (c->argv == NULL || c->argv[0] == NULL)
		return 0;
	/* A relative path is from the worker's cwd, or actord's. */
	if (c->argv[0][0] != '/' && c->cwd != NULL)
		snprintf(prog, sizeof(prog), "%s/%s", c->cwd, c->argv[0]);
	else
		snprintf(prog, sizeof(prog), "%s", c->argv[0]);
	snprintf(who, sizeof(who), "%s", "actord's user");
	if (c->user != NULL) {
		if ((pw = getpwnam(c->user)) == NULL) {
			fprintf(out, "actord: %s:%u: %s: no such user \"%s\"\n",
			    spec->file, c->line, path, c->user);
			return 1;
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
		snprintf(who, sizeof(who), "user %s", c->user);
	}
	if (c->group != NULL) {
		if ((gr = getgrnam(c->group)) == NULL) {
			fprintf(out, "actord: %s:%u: %s: no such group \"%s\"\n",
			    spec->file, c->line, path, c->group);
			return 1;
		}
		gid = gr->gr_gid;
	}
	if (stat(prog, &st) == -1) {
		fprintf(out, "actord: %s:%u: %s: exec %s: %s\n", spec->file, c->line,
		    path, prog, strerror(errno));
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(out, "actord: %s:%u: %s: exec %s: not a regular file\n",
		    spec->file, c->line, path, prog);
		return 1;
	}
	if ((e = access_as(prog, uid, gid, pw != NULL ? c->user : NULL)) != 0) {
		fprintf(out, "actord: %s:%u: %s: exec %s: %s as %s\n", spec->file,
		    c->line, path, prog, strerror(e), who);
		return 1;
	}
	return 0;
}

static int
check_sup(const struct actord_spec *spec, const struct sup_spec *s,
    const char *prefix, FILE *out)
{
	char	 path[PATH_MAX];
	size_t	 i;
	int	 bad = 0;

	for (i = 0; i < s->nchildren; i++) {
		snprintf(path, sizeof(path), "%s/%s", prefix,
		    s->children[i].name);
		if (s->children[i].kind == CHILD_SUPERVISOR)
			bad += check_sup(spec, s->children[i].sup, path, out);
		else
			bad += check_child(spec, &s->children[i], path, out);
	}
	return bad;
}

/*
 * actord -n: every worker's program exists, is a file, and its user may
 * execute it.  Prints one line per problem on out ("FILE:LINE: PATH:
 * exec PROGRAM: why"); returns how many there were.
 */
int
exec_check(const struct actord_spec *spec, FILE *out)
{
	return check_sup(spec, &spec->root, "", out);
}
