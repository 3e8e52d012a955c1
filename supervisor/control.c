/*
 * control.c: actord's control socket.  It creates the runtime directory
 * and the socket with safe modes, accepts connections, checks every
 * peer's credentials, reads requests without blocking, hands well-formed
 * ones to the backend (control.h) and writes the answers back, possibly
 * later (deferred replies).  It counts what it refuses and what it evicts.
 *
 * It owns a loop of its own (loop.h: an epoll set for the listener and
 * the clients, a timer per client deadline) and the client table.  It
 * must never block, sleep, trust a length from a client, keep a client
 * that says nothing past its deadline, or spin when the process is out of
 * descriptors.  It knows nothing of the tree: every answer comes from the
 * backend.
 *
 * Abuse: no peer may keep the owner out.  Another uid holds at most
 * max_per_uid connections; when the table is full, the connection that
 * has been idle (or half-sent) longest is closed to make room, after it
 * had its chance to be read; root and actord's own uid may take the place
 * of anyone's, another uid only that of another uid (make_room).
 */
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/control.h"
#include "supervisor/log.h"
#include "supervisor/loop.h"

#define PAUSE_MS	100	/* listener rest when no descriptor is left */
#define ACCEPT_BATCH	16	/* then the clients' own events come first */

enum client_state {
	C_READ,			/* reading a request (or idle between them) */
	C_WAIT,			/* the backend holds a deferred reply */
	C_WRITE			/* writing an answer */
};

struct ctl_reply {
	struct ctl_buf	 buf;
	size_t		 start;		/* of the frame in buf */
	uint16_t	 cmd;
	bool		 failed;	/* an error replaced the body */
	bool		 finished;
	const struct ctl_counters *counters;	/* appended to stats */
	ctl_reply_done_fn done;
	void		*arg;
};

struct client {
	struct ev	 ev;		/* its descriptor in the control's loop */
	struct timer	 timer;		/* its deadline */
	int		 fd;
	struct control	*ctl;		/* for replies finished later */
	enum client_state state;
	bool		 closed;	/* on the dead list until dispatch ends */
	uid_t		 uid;
	pid_t		 pid;
	uint64_t	 since;		/* ms: idle or half-sent since (eviction) */
	uint64_t	 served;	/* requests taken */
	uint8_t		*in;		/* the request being read */
	size_t		 inlen;
	uint32_t	 need;		/* whole frame, once the length is read */
	struct ctl_request req;
	struct ctl_reply *reply;	/* while C_WAIT */
	bool		 in_handler;	/* the backend is running for us */
	struct ctl_buf	 out;
	size_t		 outoff;
	bool		 close_after;	/* the answer is an error: then close */
	TAILQ_ENTRY(client) entry;
};

TAILQ_HEAD(client_list, client);

struct control {
	struct loop	 loop;		/* listener, clients, deadlines */
	int		 listen_fd;
	int		 reserve_fd;	/* spare descriptor for EMFILE */
	struct ev	 listen_ev;
	struct timer	 resume;	/* of a rested listener */
	bool		 listen_paused;
	char		 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool		 has_group;
	gid_t		 gid;
	uid_t		 owner;		/* actord's own uid */
	unsigned	 max_clients;
	unsigned	 max_per_uid;	/* for uids other than root and owner */
	unsigned	 timeout_ms;
	const struct ctl_backend *be;
	void		*ctx;
	struct ctl_counters ctr;
	struct client_list clients;
	struct client_list dead;	/* closed, freed once dispatch ends */
};

/* Which clients a newcomer may take the place of (make_room). */
enum victims {
	V_ANY,			/* root or the owner: anyone's */
	V_OTHERS,		/* another uid: another uid's */
	V_UID			/* a uid at its own limit: its own */
};

static int	 make_dir(const char *, bool, gid_t, char *, size_t);
static int	 make_socket(struct control *, char *, size_t);
static int	 bind_socket(const char *, bool, gid_t, char *, size_t);
static int	 socket_path(char *, size_t, const struct control_config *,
		    char *, size_t);
static int	 group_of(const struct control_config *, bool *, gid_t *,
		    char *, size_t);
static bool	 same_file(const char *, const char *);
static void	 on_listen(void *, uint32_t);
static void	 on_resume(void *);
static void	 on_client(void *, uint32_t);
static void	 on_deadline(void *);
static int	 accept_one(struct control *);
static void	 out_of_descriptors(struct control *);
static void	 admit(struct control *, int, const struct ucred *);
static bool	 privileged(const struct control *, uid_t);
static unsigned	 clients_of(const struct control *, uid_t);
static bool	 make_room(struct control *, uid_t);
static struct client *victim(const struct control *, enum victims, uid_t);
static unsigned	 held_by_pid(const struct control *, const struct client *);
static bool	 still_idle(struct control *, struct client *);
static void	 evict(struct control *, struct client *);
static void	 refuse(int, uint16_t, const char *);
static bool	 peer_allowed(const struct control *, uid_t, gid_t);
static void	 client_events(struct control *, struct client *, uint32_t);
static void	 client_deadline(struct control *, struct client *);
static void	 client_read(struct control *, struct client *);
static void	 client_request(struct control *, struct client *);
static void	 client_write(struct control *, struct client *);
static void	 client_answer_error(struct control *, struct client *,
		    uint16_t, const char *);
static void	 client_close(struct control *, struct client *);
static void	 client_reply_done(struct ctl_reply *, void *);
static void	 client_send(struct client *, struct ctl_reply *, bool);
static void	 free_dead(struct control *);
static void	 count_refusal(struct control *, int);
static int	 unsupported(struct ctl_reply *);

/* --- setting up ---------------------------------------------------------- */

/*
 * The runtime directory: created 0700 (0710 and our group when a control
 * group must reach the socket).  An existing one must be ours (or root's)
 * and is given the same mode, so a directory another user prepared cannot
 * expose the socket.
 */
static int
make_dir(const char *dir, bool group, gid_t gid, char *err, size_t errlen)
{
	struct stat	 st;
	mode_t		 mode = group ? 0710 : 0700;

	if (mkdir(dir, mode) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return -1;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen, "%s: owned by uid %u, not by us", dir,
		    (unsigned)st.st_uid);
		return -1;
	}
	if (group && chown(dir, (uid_t)-1, gid) == -1) {
		snprintf(err, errlen, "chgrp %s: %s", dir, strerror(errno));
		return -1;
	}
	if (chmod(dir, mode) == -1) {
		snprintf(err, errlen, "chmod %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Bind the socket under a umask that leaves it 0600 from the first
 * instant, then chmod/chgrp.  A socket file left by a dead actord is
 * removed; one that still answers belongs to a live actord and is kept.
 */
static int
make_socket(struct control *c, char *err, size_t errlen)
{
	c->listen_fd = bind_socket(c->path, c->has_group, c->gid, err, errlen);
	return c->listen_fd == -1 ? -1 : 0;
}

/* A listening socket at path, 0600 (0660 and gid with a group); or -1. */
static int
bind_socket(const char *path, bool has_group, gid_t gid, char *err,
    size_t errlen)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd, probe, rc;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s: exists, not a socket", path);
			return -1;
		}
		/* Non-blocking: a live actord with a full backlog says EAGAIN. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);
		rc = probe == -1 ? -1 :
		    connect(probe, (struct sockaddr *)&sun, sizeof(sun));
		if (rc == -1 && errno == EAGAIN)
			rc = 0;
		if (probe != -1)
			close(probe);
		if (rc == 0) {
			snprintf(err, errlen, "%s: another actord is listening",
			    path);
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc == -1) {
		snprintf(err, errlen, "bind %s: %s", path, strerror(errno));
		goto bad;
	}
	if (has_group && chown(path, (uid_t)-1, gid) == -1) {
		snprintf(err, errlen, "chgrp %s: %s", path, strerror(errno));
		goto bad;
	}
	if (chmod(path, has_group ? 0660 : 0600) == -1) {
		snprintf(err, errlen, "chmod %s: %s", path, strerror(errno));
		goto bad;
	}
	if (listen(fd, 64) == -1) {
		snprintf(err, errlen, "listen %s: %s", path, strerror(errno));
		goto bad;
	}
	return fd;
bad:
	close(fd);
	unlink(path);
	return -1;
}

struct control *
control_open(const struct control_config *cfg, const struct ctl_backend *be,
    void *ctx, char *err, size_t errlen)
{
	struct control	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "control: %s", strerror(errno));
		return NULL;
	}
	c->loop.epfd = c->loop.tfd = c->listen_fd = c->reserve_fd = -1;
	c->listen_ev.fd = -1;
	timer_init(&c->resume, on_resume, c);
	c->be = be;
	c->ctx = ctx;
	c->owner = geteuid();
	c->max_clients = cfg->max_clients ? cfg->max_clients :
	    CONTROL_MAX_CLIENTS;
	c->max_per_uid = cfg->max_per_uid ? cfg->max_per_uid :
	    CONTROL_MAX_PER_UID;
	c->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : CONTROL_TIMEOUT;
	TAILQ_INIT(&c->clients);
	TAILQ_INIT(&c->dead);
	if (socket_path(c->path, sizeof(c->path), cfg, err, errlen) == -1 ||
	    group_of(cfg, &c->has_group, &c->gid, err, errlen) == -1)
		goto bad;
	if (make_dir(cfg->runtime_dir, c->has_group, c->gid, err, errlen) == -1)
		goto bad;
	if (loop_init(&c->loop) == -1 ||
	    (c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "control: %s", strerror(errno));
		goto bad;
	}
	if (make_socket(c, err, errlen) == -1)
		goto bad;
	if (loop_add(&c->loop, &c->listen_ev, c->listen_fd, EPOLLIN,
	    on_listen, c) == -1) {
		snprintf(err, errlen, "control: epoll: %s", strerror(errno));
		goto bad;
	}
	return c;
bad:
	control_close(c);
	return NULL;
}

/* The same path, or two names of one file. */
static bool
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	return lstat(a, &sa) == 0 && lstat(b, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* cfg's socket path into path; -1 with err if it does not fit. */
static int
socket_path(char *path, size_t len, const struct control_config *cfg,
    char *err, size_t errlen)
{
	int n;

	n = snprintf(path, len, "%s/%s", cfg->runtime_dir,
	    cfg->socket_name ? cfg->socket_name : CONTROL_SOCKET_NAME);
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "%s: socket path too long",
		    cfg->runtime_dir);
		return -1;
	}
	return 0;
}

/* cfg's control group, if any; -1 with err if it does not exist. */
static int
group_of(const struct control_config *cfg, bool *has_group, gid_t *gid,
    char *err, size_t errlen)
{
	struct group *gr;

	*has_group = false;
	*gid = 0;
	if (cfg->group == NULL)
		return 0;
	if ((gr = getgrnam(cfg->group)) == NULL) {
		snprintf(err, errlen, "control_group %s: no such group",
		    cfg->group);
		return -1;
	}
	*has_group = true;
	*gid = gr->gr_gid;
	return 0;
}

/*
 * A reload's control settings (runtime_dir, control_group), in two steps
 * so that the reload is all or nothing: prepared while the old socket
 * still serves (a new runtime_dir gets its directory and a listening
 * socket now; a failure leaves everything as it was), then committed once
 * the tree took the new configuration, or aborted.  Connected clients stay
 * connected through a move.
 */
int
control_move_prepare(struct control *c, const struct control_config *cfg,
    struct control_move *mv, char *err, size_t errlen)
{
	memset(mv, 0, sizeof(*mv));
	mv->fd = -1;
	if (socket_path(mv->path, sizeof(mv->path), cfg, err, errlen) == -1 ||
	    group_of(cfg, &mv->has_group, &mv->gid, err, errlen) == -1)
		return -1;
	if (snprintf(mv->dir, sizeof(mv->dir), "%s", cfg->runtime_dir) >=
	    (int)sizeof(mv->dir)) {
		snprintf(err, errlen, "%s: path too long", cfg->runtime_dir);
		return -1;
	}
	if (same_file(mv->path, c->path))
		return 0;		/* the same socket: commit sets modes */
	if (make_dir(mv->dir, mv->has_group, mv->gid, err, errlen) == -1 ||
	    (mv->fd = bind_socket(mv->path, mv->has_group, mv->gid, err,
	    errlen)) == -1)
		return -1;
	return 0;
}

/* Serve from the prepared socket (or modes), and close the old one. */
void
control_move_commit(struct control *c, struct control_move *mv)
{
	char err[256];

	if (mv->fd == -1) {
		/* Same path, maybe another group: the modes follow. */
		if (make_dir(mv->dir, mv->has_group, mv->gid, err,
		    sizeof(err)) == -1)
			log_warnx("control: %s", err);
		if ((mv->has_group && chown(c->path, (uid_t)-1, mv->gid) ==
		    -1) || chmod(c->path, mv->has_group ? 0660 : 0600) == -1)
			log_warn("control: %s", c->path);
	} else {
		if (!c->listen_paused) {
			loop_del(&c->loop, &c->listen_ev);
			if (loop_add(&c->loop, &c->listen_ev, mv->fd, EPOLLIN,
			    on_listen, c) == -1)
				log_warn("control: epoll");
		}
		close(c->listen_fd);
		(void)unlink(c->path);
		c->listen_fd = mv->fd;
		mv->fd = -1;
		memcpy(c->path, mv->path, sizeof(c->path));
		log_info("control socket %s", c->path);
	}
	c->has_group = mv->has_group;
	c->gid = mv->gid;
}

/* The reload was refused: the prepared socket goes away. */
void
control_move_abort(struct control_move *mv)
{
	if (mv->fd == -1)
		return;
	close(mv->fd);
	(void)unlink(mv->path);
	mv->fd = -1;
}

int
control_fd(const struct control *c)
{
	return c->loop.epfd;
}

const struct ctl_counters *
control_counters(const struct control *c)
{
	return &c->ctr;
}

const char *
control_socket_path(const struct control *c)
{
	return c->path;
}

void
control_close(struct control *c)
{
	struct client *cl;

	if (c == NULL)
		return;
	while ((cl = TAILQ_FIRST(&c->clients)) != NULL)
		client_close(c, cl);
	free_dead(c);
	if (c->listen_fd != -1) {
		close(c->listen_fd);
		unlink(c->path);
	}
	if (c->reserve_fd != -1)
		close(c->reserve_fd);
	loop_close(&c->loop);
	free(c);
}

/* --- the loop ------------------------------------------------------------ */

/*
 * Run what is ready.  A client closed meanwhile waits on the dead list:
 * a later event of the same batch may still name it (the loop skips it,
 * for its descriptor is -1), so it is freed only here, after the batch.
 */
void
control_dispatch(struct control *c)
{
	(void)loop_once(&c->loop, 0);
	free_dead(c);
}

static void
free_dead(struct control *c)
{
	struct client *cl;

	while ((cl = TAILQ_FIRST(&c->dead)) != NULL) {
		TAILQ_REMOVE(&c->dead, cl, entry);
		free(cl);
	}
}

static void
count_refusal(struct control *c, int status)
{
	switch (status) {
	case CTL_E_VERSION:
		c->ctr.bad_version++;
		break;
	case CTL_E_UNKNOWN:
		c->ctr.unknown_command++;
		break;
	case CTL_E_TOOBIG:
		c->ctr.oversized++;
		break;
	default:
		c->ctr.malformed++;
		break;
	}
}

/* A short error, if the socket takes it at once. */
static void
send_error(int fd, uint16_t status, const char *text)
{
	struct ctl_buf	 b;

	ctl_buf_init(&b, 4096);
	if (ctl_error_frame(&b, status, text) == 0)
		(void)!send(fd, b.data, b.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	ctl_buf_free(&b);
}

/* Send a short error to a connection we will not keep, and close it. */
static void
refuse(int fd, uint16_t status, const char *text)
{
	send_error(fd, status, text);
	close(fd);
}

static bool
peer_allowed(const struct control *c, uid_t uid, gid_t gid)
{
	struct passwd	 pw, *res = NULL;
	char		 pwbuf[4096];
	gid_t		 groups[256];
	int		 i, ngroups = 256;

	if (privileged(c, uid))
		return true;
	if (!c->has_group)
		return false;
	if (gid == c->gid)
		return true;
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) != 0 ||
	    res == NULL)
		return false;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &ngroups) == -1)
		return false;
	for (i = 0; i < ngroups; i++)
		if (groups[i] == c->gid)
			return true;
	return false;
}

/* Root and actord's own uid: never locked out by another uid. */
static bool
privileged(const struct control *c, uid_t uid)
{
	return uid == 0 || uid == c->owner;
}

/*
 * A few connections at a time: the clients accepted get their turn to be
 * read before a flood of newer ones could push them out.
 */
static void
on_listen(void *arg, uint32_t events)
{
	struct control *c = arg;
	int i;

	(void)events;
	for (i = 0; i < ACCEPT_BATCH; i++)
		if (accept_one(c) == -1)
			return;
}

/* One connection taken (admitted or refused): 0; nothing more: -1. */
static int
accept_one(struct control *c)
{
	struct ucred	 cred;
	socklen_t	 len;
	int		 fd;

	fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1 && (errno == EMFILE || errno == ENFILE)) {
		out_of_descriptors(c);
		return -1;
	}
	if (fd == -1) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn("control: accept");
		return -1;
	}
	c->ctr.accepted++;
	len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("control: SO_PEERCRED");
		close(fd);
		return 0;
	}
	admit(c, fd, &cred);
	return 0;
}

/*
 * Out of descriptors.  accept fails so before it even looks at the
 * queue, and a pending connection would wake us for ever: give back the
 * reserve, take the connection, refuse it, take the reserve again.  With
 * no reserve left, the listener rests a while.
 */
static void
out_of_descriptors(struct control *c)
{
	int fd;

	if (c->reserve_fd != -1) {
		close(c->reserve_fd);
		fd = accept4(c->listen_fd, NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd != -1) {
			c->ctr.refused_busy++;
			log_warnx("control: out of descriptors, connection "
			    "refused");
			refuse(fd, CTL_E_BUSY,
			    "busy: actord is out of file descriptors");
			return;
		}
		if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
			return;
	}
	if (!c->listen_paused) {
		log_warnx("control: out of descriptors, not accepting for "
		    "%d ms", PAUSE_MS);
		loop_del(&c->loop, &c->listen_ev);
		c->listen_paused = true;
		timer_after(&c->loop, &c->resume, PAUSE_MS);
	}
}

static void
on_resume(void *arg)
{
	struct control *c = arg;

	if (c->reserve_fd == -1)
		c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (loop_add(&c->loop, &c->listen_ev, c->listen_fd, EPOLLIN,
	    on_listen, c) == 0)
		c->listen_paused = false;
	else
		timer_after(&c->loop, &c->resume, PAUSE_MS);
}

/* A connection whose peer is cred: a client, or refused with why. */
static void
admit(struct control *c, int fd, const struct ucred *cred)
{
	struct client	*cl;

	if (!peer_allowed(c, cred->uid, cred->gid)) {
		c->ctr.refused_perm++;
		log_warnx("control: refused uid %u pid %d: permission denied",
		    (unsigned)cred->uid, (int)cred->pid);
		refuse(fd, CTL_E_PERM, "permission denied");
		return;
	}
	if (!make_room(c, cred->uid)) {
		c->ctr.refused_busy++;
		log_warnx("control: refused uid %u pid %d: too many clients "
		    "(%u), none idle", (unsigned)cred->uid, (int)cred->pid,
		    c->max_clients);
		refuse(fd, CTL_E_BUSY, "busy: too many clients");
		return;
	}
	if ((cl = calloc(1, sizeof(*cl))) == NULL) {
		log_warn("control: client");
		refuse(fd, CTL_E_BUSY, "busy: out of memory");
		return;
	}
	cl->ctl = c;
	cl->fd = fd;
	cl->uid = cred->uid;
	cl->pid = cred->pid;
	cl->state = C_READ;
	cl->since = loop_now(&c->loop);
	timer_init(&cl->timer, on_deadline, cl);
	ctl_buf_init(&cl->out, CTL_MAX_RESPONSE);
	if (loop_add(&c->loop, &cl->ev, fd, EPOLLIN, on_client, cl) == -1) {
		log_warn("control: epoll");
		close(fd);
		free(cl);
		return;
	}
	TAILQ_INSERT_TAIL(&c->clients, cl, entry);
	c->ctr.clients++;
	client_deadline(c, cl);
	/* What it sent already is served now, before anything evicts it. */
	client_read(c, cl);
}

static unsigned
clients_of(const struct control *c, uid_t uid)
{
	const struct client *cl;
	unsigned n = 0;

	TAILQ_FOREACH(cl, &c->clients, entry)
		n += cl->uid == uid;
	return n;
}

/*
 * Room for one more client of uid: true, or false when every client it
 * may take the place of is busy.  A uid other than root and the owner
 * at its own limit gives up its own idlest connection; a full table
 * gives up the idlest one that uid may replace.
 */
static bool
make_room(struct control *c, uid_t uid)
{
	struct client	*v;
	enum victims	 who;
	unsigned	 tries;

	for (tries = 0; tries <= c->max_clients; tries++) {
		if (!privileged(c, uid) && clients_of(c, uid) >= c->max_per_uid)
			who = V_UID;
		else if (c->ctr.clients >= c->max_clients)
			who = privileged(c, uid) ? V_ANY : V_OTHERS;
		else
			return true;
		if ((v = victim(c, who, uid)) == NULL)
			return false;
		if (still_idle(c, v))
			evict(c, v);
	}
	return false;
}

/* How many of the table's connections the process of cl holds. */
static unsigned
held_by_pid(const struct control *c, const struct client *cl)
{
	const struct client *o;
	unsigned n = 0;

	TAILQ_FOREACH(o, &c->clients, entry)
		n += o->pid == cl->pid;
	return n;
}

/*
 * Whom to close among those who may be replaced, by rank: an idle (or
 * half-sent) connection before one waiting for or reading an answer;
 * another uid's before root's or the owner's; of the process that holds
 * the most connections (a client such as actorctl holds one, whatever a
 * flood of its own uid does); of those, the one idle longest.  Never one
 * the backend is running for.
 */
static struct client *
victim(const struct control *c, enum victims who, uid_t uid)
{
	struct client	*cl, *best = NULL;
	uint64_t	 rank, best_rank = 0;

	TAILQ_FOREACH(cl, &c->clients, entry) {
		if (cl->in_handler || (who == V_UID && cl->uid != uid) ||
		    (who == V_OTHERS && privileged(c, cl->uid)))
			continue;
		rank = (uint64_t)(cl->state == C_READ) << 40 |
		    (uint64_t)!privileged(c, cl->uid) << 39 |
		    (uint64_t)held_by_pid(c, cl);
		if (best == NULL || rank > best_rank || (rank == best_rank &&
		    cl->since < best->since)) {
			best = cl;
			best_rank = rank;
		}
	}
	return best;
}

/*
 * Is v still idle once what it sent is read?  A request waiting in its
 * socket is served first (then v is no longer the idlest), and a peer
 * that left is closed: either makes room, or moves v out of the way.
 */
static bool
still_idle(struct control *c, struct client *v)
{
	uint64_t served = v->served;

	if (v->state != C_READ)
		return true;
	client_read(c, v);
	return !v->closed && v->state == C_READ && v->served == served;
}

/* Close v to make room; a peer that may be reading is told why. */
static void
evict(struct control *c, struct client *v)
{
	c->ctr.evicted++;
	log_debug("control: uid %u pid %d: closed to make room",
	    (unsigned)v->uid, (int)v->pid);
	if (v->state != C_WRITE)
		send_error(v->fd, CTL_E_BUSY,
		    "busy: closed to make room for another client");
	client_close(c, v);
}

/* --- clients ------------------------------------------------------------- */

static void
on_client(void *arg, uint32_t events)
{
	struct client *cl = arg;

	client_events(cl->ctl, cl, events);
}

static void
client_events(struct control *c, struct client *cl, uint32_t events)
{
	if (cl->state == C_WAIT) {
		/* Hung up while the backend works for it. */
		if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			client_close(c, cl);
	} else if (cl->state == C_WRITE)
		client_write(c, cl);
	else
		client_read(c, cl);
}

/* timeout_ms from now for what it does (a request, an answer, idling). */
static void
client_deadline(struct control *c, struct client *cl)
{
	timer_after(&c->loop, &cl->timer, c->timeout_ms);
}

/* Past its deadline: an idle connection between requests just closes. */
static void
on_deadline(void *arg)
{
	struct client *cl = arg;
	struct control *c = cl->ctl;

	if (cl->state != C_READ || cl->inlen > 0)
		c->ctr.timeouts++;
	log_debug("control: uid %u pid %d: timed out", (unsigned)cl->uid,
	    (int)cl->pid);
	client_close(c, cl);
}

static void
client_read(struct control *c, struct client *cl)
{
	uint8_t	*p;
	size_t	 want;
	ssize_t	 n;
	int	 rc;

	for (;;) {
		want = cl->need ? cl->need - cl->inlen : 4 - cl->inlen;
		if (cl->in == NULL && (cl->in = malloc(4)) == NULL) {
			client_close(c, cl);
			return;
		}
		n = recv(cl->fd, cl->in + cl->inlen, want, 0);
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			client_close(c, cl);
			return;
		}
		if (n == 0) {
			if (cl->inlen > 0) {
				c->ctr.truncated++;
				client_answer_error(c, cl, CTL_E_PROTO,
				    "truncated request");
			} else
				client_close(c, cl);
			return;
		}
		if (cl->inlen == 0 && cl->need == 0)
			/* A request begins: it has timeout_ms to arrive. */
			client_deadline(c, cl);
		cl->inlen += n;
		if (cl->need == 0 && cl->inlen == 4) {
			rc = ctl_frame_length(cl->in, 4, CTL_MAX_REQUEST,
			    &cl->need);
			if (rc == -2) {
				c->ctr.oversized++;
				client_answer_error(c, cl, CTL_E_TOOBIG,
				    "request too large");
				return;
			}
			if (rc != 1) {
				c->ctr.malformed++;
				client_answer_error(c, cl, CTL_E_PROTO,
				    "malformed frame length");
				return;
			}
			if ((p = realloc(cl->in, cl->need)) == NULL) {
				client_close(c, cl);
				return;
			}
			cl->in = p;
		}
		if (cl->need != 0 && cl->inlen == cl->need) {
			client_request(c, cl);
			return;
		}
	}
}

static void
client_request(struct control *c, struct client *cl)
{
	struct ctl_reply *r;
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);
	char		 err[256];
	int		 st;

	st = ctl_request_decode(cl->in, cl->inlen, &cl->req, err, sizeof(err));
	if (st != CTL_OK) {
		count_refusal(c, st);
		log_debug("control: uid %u pid %d: %s", (unsigned)cl->uid,
		    (int)cl->pid, err);
		client_answer_error(c, cl, st, err);
		return;
	}
	/* Credentials are checked again per request, as they are cheap. */
	if (getsockopt(cl->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    !peer_allowed(c, cred.uid, cred.gid)) {
		c->ctr.refused_perm++;
		log_warnx("control: refused uid %u pid %d: permission denied",
		    (unsigned)cl->uid, (int)cl->pid);
		client_answer_error(c, cl, CTL_E_PERM, "permission denied");
		return;
	}
	c->ctr.requests++;
	cl->served++;
	cl->since = loop_now(&c->loop);
	if ((r = ctl_reply_new(cl->req.cmd, client_reply_done, cl)) == NULL) {
		client_answer_error(c, cl, CTL_E_FAILED, "out of memory");
		return;
	}
	if (cl->req.cmd == CTL_CMD_STATS)
		ctl_reply_counters(r, &c->ctr);
	cl->reply = r;
	cl->state = C_WAIT;
	timer_cancel(&c->loop, &cl->timer);	/* the backend's own apply */
	(void)loop_mod(&c->loop, &cl->ev, EPOLLRDHUP);
	cl->in_handler = true;
	st = ctl_backend_call(c->be, c->ctx, &cl->req, r);
	if (st == CTL_REPLY_NOW && !r->finished)
		ctl_reply_finish(r);
	cl->in_handler = false;
	if (r->finished)
		client_send(cl, r, true);
}

/* A reply is finished: send it now, unless the handler is still running. */
static void
client_reply_done(struct ctl_reply *r, void *arg)
{
	struct client *cl = arg;

	if (cl->in_handler)
		return;		/* client_request sends it */
	/*
	 * Finished from outside this client's event (a timer, another
	 * client's command): only ask for EPOLLOUT, so that a failed write
	 * cannot free a client that a pending event still names.
	 */
	client_send(cl, r, false);
}

/* Move the finished frame to the output and start writing it. */
static void
client_send(struct client *cl, struct ctl_reply *r, bool write_now)
{
	struct control *c = cl->ctl;

	cl->reply = NULL;
	ctl_buf_free(&cl->out);
	cl->out = r->buf;		/* take the bytes */
	ctl_buf_init(&r->buf, 0);
	cl->outoff = 0;
	ctl_reply_free(r);
	free(cl->in);
	cl->in = NULL;
	cl->inlen = cl->need = 0;
	cl->state = C_WRITE;
	cl->since = loop_now(&c->loop);
	client_deadline(c, cl);
	cl->close_after = false;
	if (write_now)
		client_write(c, cl);
	else
		(void)loop_mod(&c->loop, &cl->ev, EPOLLOUT);
}

/* Answer a refused request with an error, then close the connection. */
static void
client_answer_error(struct control *c, struct client *cl, uint16_t status,
    const char *text)
{
	ctl_buf_reset(&cl->out);
	ctl_error_frame(&cl->out, status, text);
	cl->outoff = 0;
	free(cl->in);
	cl->in = NULL;
	cl->inlen = cl->need = 0;
	cl->state = C_WRITE;
	cl->close_after = true;
	client_deadline(c, cl);
	client_write(c, cl);
}

static void
client_write(struct control *c, struct client *cl)
{
	ssize_t n;

	while (cl->outoff < cl->out.len) {
		n = send(cl->fd, cl->out.data + cl->outoff,
		    cl->out.len - cl->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				(void)loop_mod(&c->loop, &cl->ev, EPOLLOUT);
				return;
			}
			client_close(c, cl);
			return;
		}
		cl->outoff += n;
	}
	if (cl->close_after) {
		client_close(c, cl);
		return;
	}
	/* Done: idle until the next request, which has timeout_ms. */
	ctl_buf_free(&cl->out);
	cl->outoff = 0;
	cl->state = C_READ;
	cl->since = loop_now(&c->loop);
	client_deadline(c, cl);
	(void)loop_mod(&c->loop, &cl->ev, EPOLLIN);
}

/* Closed now, freed after the batch of events (free_dead). */
static void
client_close(struct control *c, struct client *cl)
{
	if (cl->closed)
		return;
	if (cl->reply != NULL) {
		/* The backend holds it: tell it to forget the reply. */
		if (c->be->cancel != NULL)
			c->be->cancel(c->ctx, cl->reply);
		ctl_reply_free(cl->reply);
		cl->reply = NULL;
	}
	loop_del(&c->loop, &cl->ev);
	timer_cancel(&c->loop, &cl->timer);
	close(cl->fd);
	cl->fd = -1;
	free(cl->in);
	cl->in = NULL;
	ctl_buf_free(&cl->out);
	TAILQ_REMOVE(&c->clients, cl, entry);
	TAILQ_INSERT_TAIL(&c->dead, cl, entry);
	cl->closed = true;
	c->ctr.clients--;
}

/* --- replies ------------------------------------------------------------- */

struct ctl_reply *
ctl_reply_new(uint16_t cmd, ctl_reply_done_fn done, void *arg)
{
	struct ctl_reply *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->cmd = cmd;
	r->done = done;
	r->arg = arg;
	ctl_buf_init(&r->buf, CTL_MAX_RESPONSE);
	r->start = ctl_frame_begin(&r->buf, CTL_OK);
	return r;
}

void
ctl_reply_free(struct ctl_reply *r)
{
	if (r == NULL)
		return;
	ctl_buf_free(&r->buf);
	free(r);
}

/* Append these counters to the answer when it is finished. */
void
ctl_reply_counters(struct ctl_reply *r, const struct ctl_counters *ctr)
{
	r->counters = ctr;
}

const struct ctl_buf *
ctl_reply_frame(const struct ctl_reply *r)
{
	return &r->buf;
}

uint16_t
ctl_reply_command(const struct ctl_reply *r)
{
	return r->cmd;
}

/* An error replaces whatever the reply held; the first error wins. */
void
ctl_reply_error(struct ctl_reply *r, int status, const char *fmt, ...)
{
	char	 text[CTL_ERROR_MAX];
	va_list	 ap;

	if (r->failed || r->finished)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ctl_buf_reset(&r->buf);
	r->start = ctl_frame_begin(&r->buf, status == CTL_OK ? CTL_E_FAILED :
	    status);
	ctl_put_str(&r->buf, CTL_F_ERROR, text);
	r->failed = true;
}

void
ctl_reply_message(struct ctl_reply *r, const char *fmt, ...)
{
	char	 text[CTL_ERROR_MAX];
	va_list	 ap;

	if (r->failed || r->finished)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ctl_put_str(&r->buf, CTL_F_MESSAGE, text);
}

#define REPLY_ADD(r, call) do {					\
	if (!(r)->failed && !(r)->finished)			\
		call;						\
} while (0)

void
ctl_reply_node(struct ctl_reply *r, const struct ctl_node *n)
{
	REPLY_ADD(r, ctl_put_node(&r->buf, n));
}

void
ctl_reply_actor(struct ctl_reply *r, const struct ctl_actor_stats *a)
{
	REPLY_ADD(r, ctl_put_actor(&r->buf, a));
}

void
ctl_reply_shards(struct ctl_reply *r, const struct ctl_shard_group *g)
{
	REPLY_ADD(r, ctl_put_shards(&r->buf, g));
}

void
ctl_reply_deadletter(struct ctl_reply *r, const struct ctl_deadletter *d)
{
	REPLY_ADD(r, ctl_put_deadletter(&r->buf, d));
}

void
ctl_reply_data(struct ctl_reply *r, const void *p, size_t n)
{
	REPLY_ADD(r, ctl_put_bytes(&r->buf, CTL_F_DATA, p, n));
}

void
ctl_reply_cursor(struct ctl_reply *r, uint64_t cursor)
{
	REPLY_ADD(r, ctl_put_u64(&r->buf, CTL_F_CURSOR, cursor));
}

/* An ask's answer: the tag its actor answered with. */
void
ctl_reply_tag(struct ctl_reply *r, uint32_t tag)
{
	REPLY_ADD(r, ctl_put_u32(&r->buf, CTL_F_TAG, tag));
}

/*
 * Beside an error (after ctl_reply_error): libactor's code of a failed
 * ask or send, and for an answer of the application's own (ACTOR_EREPLY)
 * the application's code (appcode, NULL: none), and an error answer's
 * own text (NULL: none), so that a client library returns what an actor
 * in the tree would get.
 */
void
ctl_reply_code(struct ctl_reply *r, int32_t code, const int32_t *appcode,
    const char *text)
{
	if (r->finished)
		return;
	ctl_put_u32(&r->buf, CTL_F_CODE, (uint32_t)code);
	if (appcode != NULL)
		ctl_put_u32(&r->buf, CTL_F_APPCODE, (uint32_t)*appcode);
	if (text != NULL)
		ctl_put_str(&r->buf, CTL_F_TEXT, text);
}

/*
 * Close the frame and hand it to its owner.  An answer that outgrew
 * CTL_MAX_RESPONSE (or memory) becomes an error, never a cut frame.
 */
void
ctl_reply_finish(struct ctl_reply *r)
{
	int	 err;

	if (r->finished)
		return;
	if (r->buf.err) {
		err = r->buf.err;
		ctl_buf_reset(&r->buf);
		r->start = ctl_frame_begin(&r->buf, CTL_E_TOOBIG);
		ctl_put_str(&r->buf, CTL_F_ERROR, err == E2BIG ?
		    "answer too large" : "out of memory");
	}
	else if (r->counters != NULL && !r->failed)
		ctl_put_counters(&r->buf, r->counters);
	ctl_frame_end(&r->buf, r->start);
	r->finished = true;
	if (r->done != NULL)
		r->done(r, r->arg);
}

/* Hand a decoded request to the backend function for its command. */
int
ctl_backend_call(const struct ctl_backend *be, void *ctx,
    const struct ctl_request *q, struct ctl_reply *r)
{
	const char	*path = CTL_HAS(q, CTL_F_PATH) ? q->path : NULL;
	uint64_t	 cursor = CTL_HAS(q, CTL_F_CURSOR) ? q->cursor : UINT64_MAX;

#define CALL(fn, ...)	(be->fn == NULL ? unsupported(r) : be->fn(ctx, __VA_ARGS__))
	switch (q->cmd) {
	case CTL_CMD_STATUS:	return CALL(status, path, r);
	case CTL_CMD_START:	return CALL(start, path, r);
	case CTL_CMD_STOP:	return CALL(stop, path, r);
	case CTL_CMD_RESTART:	return CALL(restart, path, r);
	case CTL_CMD_KILL:	return CALL(kill, path, CTL_HAS(q, CTL_F_SIGNAL) ?
				    (int)q->signo : SIGTERM, q->tree, r);
	case CTL_CMD_ADD:	return CALL(add, path, r);
	case CTL_CMD_REMOVE:	return CALL(remove, path, r);
	case CTL_CMD_RELOAD:	return CALL(reload, r);
	case CTL_CMD_SEND:	return CALL(send, path, q->tag, q->data,
				    q->datalen, r);
	case CTL_CMD_ASK:	return CALL(ask, path, q->tag, q->data,
				    q->datalen, q->timeout_ms, r);
	case CTL_CMD_DEADLETTERS: return CALL(deadletters, cursor, q->wait, r);
	case CTL_CMD_STATS:	return CALL(stats, path, r);
	case CTL_CMD_LOG:	return CALL(log, path, cursor, q->wait, r);
	case CTL_CMD_SHUTDOWN:	return CALL(shutdown, r);
	case CTL_CMD_NODES:	return CALL(nodes, r);
	}
#undef CALL
	ctl_reply_error(r, CTL_E_UNKNOWN, "unknown command %u", q->cmd);
	return CTL_REPLY_NOW;
}

static int
unsupported(struct ctl_reply *r)
{
	ctl_reply_error(r, CTL_E_UNSUPPORTED, "%s: not supported by this actord",
	    ctl_cmd_name(r->cmd));
	return CTL_REPLY_NOW;
}
