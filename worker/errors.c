/*
 * errors.c: the names of libactor's error codes, and the parts of an
 * error answer (code and text).  Owns no state; must never return NULL.
 * shm's codes (-1 .. -16) are named by shm_strerror().
 */
#include <string.h>

#include "shm/shm.h"
#include "worker/actor.h"

static const char *const errs[] = {
	"the actor is down",				/* ACTOR_EDOWN */
	"stale reference: that incarnation is gone",	/* ACTOR_ESTALE */
	"poison: the message crashed the actor",	/* ACTOR_EPOISON */
	"the actor died with the ask queued",		/* ACTOR_EFAILED */
	"the handler answered with an error",		/* ACTOR_EREPLY */
	"this handle has no mailbox",			/* ACTOR_ENOMAILBOX */
	"the message in hand is not an ask",		/* ACTOR_ENOTASK */
	"stopped",					/* ACTOR_ESTOPPED */
	"no committed state",				/* ACTOR_ENOSTATE */
	"the actor died before it answered",		/* ACTOR_EDIED */
	"malformed answer from the peer",		/* ACTOR_EPROTO */
	"node down",					/* ACTOR_ENODEDOWN */
	"stale node: it restarted since"		/* ACTOR_ESTALENODE */
};

const char *
actor_strerror(int err)
{
	if (err <= ACTOR_EDOWN && err >= ACTOR_ELAST)
		return errs[ACTOR_EDOWN - err];
	return shm_strerror(err);
}

/* The code an error answer carries; 0 for an answer that is no error. */
int32_t
actor_error_code(const struct actor_msg *m)
{
	int32_t code;

	if (m == NULL || (m->flags & ACTOR_MSG_ERROR) == 0 || m->data == NULL ||
	    m->len < sizeof(code))
		return 0;
	memcpy(&code, m->data, sizeof(code));
	return code;
}

/*
 * Its text: "" if none.  The answers libactor hands out have a NUL at
 * data[len] at the latest, so a text cut by a small reply cell still ends.
 */
const char *
actor_error_text(const struct actor_msg *m)
{
	if (m == NULL || (m->flags & ACTOR_MSG_ERROR) == 0 || m->data == NULL ||
	    m->len <= sizeof(int32_t))
		return "";
	return (const char *)m->data + sizeof(int32_t);
}
