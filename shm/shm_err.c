/*
 * shm_err.c: names of error codes, dead-letter reasons and lanes, as static
 * tables.  Owns no state; must never return NULL.
 */
#include "shm/shm.h"

static const char *const errs[] = {
	"success",					/* SHM_OK */
	"mailbox full",					/* SHM_EFULL */
	"mailbox empty",				/* SHM_EEMPTY */
	"timed out",					/* SHM_ETIMEDOUT */
	"payload larger than the mailbox's max_message",	/* SHM_EOVERSIZE */
	"garbled cell refused",				/* SHM_EGARBLED */
	"arena is foreign, truncated or corrupt",	/* SHM_ECORRUPT */
	"no such mailbox, lane or slot",		/* SHM_EBADINDEX */
	"system error",					/* SHM_ESYS */
	"ambiguous claim: try again later",		/* SHM_EAGAIN */
	"no free producer slot",			/* SHM_ENOSLOT */
	"invalid argument",				/* SHM_EINVAL */
	"message dropped (drop_newest)",		/* SHM_EDROPPED */
	"no actor has that path",			/* SHM_ENOENT */
	"claim released before publish",		/* SHM_ELOST */
	"mailbox not prepared: no actor owns it yet",	/* SHM_ENOTREADY */
	"the handle belongs to the parent process (fork)"	/* SHM_EFORKED */
};

static const char *const reasons[SHM_DL_NREASONS] = {
	"no such actor",
	"stale reference",
	"mailbox full",
	"dropped as oldest",
	"dropped as newest",
	"poison",
	"sender died mid-send",
	"system shutting down",
	"oversize",
	"node unreachable",
	"garbled",
	"ask failed: actor down",
	"actor down",
	"stale node",
	"refused by peer",
	"owed list full"
};

static const char *const lanes[SHM_NLANES] = { "main", "system", "reply" };

const char *
shm_strerror(int err)
{
	unsigned i = err <= 0 ? (unsigned)-err : ~0u;

	if (i < sizeof(errs) / sizeof(errs[0]))
		return errs[i];
	return "unknown shm error";
}

const char *
shm_reason_name(enum shm_dl_reason r)
{
	if ((unsigned)r < SHM_DL_NREASONS)
		return reasons[r];
	return "unknown reason";
}

const char *
shm_lane_name(enum shm_lane l)
{
	if ((unsigned)l < SHM_NLANES)
		return lanes[l];
	return "unknown lane";
}
