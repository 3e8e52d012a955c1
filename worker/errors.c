/*
 * errors.c: the names of libactor's error codes.  Owns no state; must never
 * return NULL.  shm's codes (-1 .. -14) are named by shm_strerror().
 */
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
	"no committed state"				/* ACTOR_ENOSTATE */
};

const char *
actor_strerror(int err)
{
	if (err <= ACTOR_EDOWN && err >= ACTOR_ENOSTATE)
		return errs[ACTOR_EDOWN - err];
	return shm_strerror(err);
}
