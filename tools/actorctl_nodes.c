/*
 * actorctl_nodes.c: `actorctl nodes`, a node's peers as its gateway sees
 * them.  actord hands over the text the gateway committed
 * (gateway/status.c, supervisor/nodestatus.h); it is parsed
 * (nodestatus.c) and printed as a table or as one JSON document.
 *
 * Owns: the nodes table and document.  Must never print a line it could
 * not parse as a peer: such a line is skipped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/nodestatus.h"
#include "tools/actorctl.h"
#include "tools/json.h"

static void	 print_json(const struct nodestatus_self *, const struct nodestatus_peer *,
		    size_t);
static void	 print_table(const struct nodestatus_self *,
		    const struct nodestatus_peer *, size_t);

static void
print_json(const struct nodestatus_self *s, const struct nodestatus_peer *p, size_t n)
{
	struct ctl_buf b;
	struct json_w w;
	size_t i;

	ctl_buf_init(&b, CTL_MAX_RESPONSE * 2);
	jw_init(&w, &b);
	jw_obj_begin(&w, NULL);
	jw_str(&w, "node", s->name);
	jw_str(&w, "epoch", s->epoch);
	jw_uint(&w, "keys_refused", s->keys_refused);
	jw_uint(&w, "frames_refused", s->frames_refused);
	jw_uint(&w, "stale", s->stale);
	jw_arr_begin(&w, "peers");
	for (i = 0; i < n; i++) {
		jw_obj_begin(&w, NULL);
		jw_str(&w, "name", p[i].name);
		jw_str(&w, "state", p[i].state);
		jw_str(&w, "epoch", p[i].epoch);
		jw_str(&w, "address", p[i].address);
		jw_int(&w, "rtt_us", p[i].rtt_us);
		jw_uint(&w, "msgs_out", p[i].msgs_out);
		jw_uint(&w, "msgs_in", p[i].msgs_in);
		jw_uint(&w, "bytes_out", p[i].bytes_out);
		jw_uint(&w, "bytes_in", p[i].bytes_in);
		jw_uint(&w, "queued", p[i].queued);
		jw_uint(&w, "dropped", p[i].dropped);
		jw_uint(&w, "refused", p[i].refused);
		jw_uint(&w, "downs", p[i].downs);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	ctl_buf_add(&b, "\n", 1);
	fwrite(b.data, 1, b.len, stdout);
	ctl_buf_free(&b);
}

static void
print_table(const struct nodestatus_self *s, const struct nodestatus_peer *p,
    size_t n)
{
	char rtt[32], msgs[48], bytes[48];
	size_t i;

	printf("node %s, epoch %s: %llu unknown keys refused, %llu bad frames "
	    "refused, %llu messages for a past epoch\n", s->name, s->epoch,
	    s->keys_refused, s->frames_refused, s->stale);
	printf("%-8s %-10s %-16s %-22s %7s %15s %19s %6s %7s %7s\n", "PEER",
	    "STATE", "EPOCH", "ADDRESS", "RTT", "MSGS OUT/IN", "BYTES OUT/IN",
	    "QUEUED", "DROPPED", "REFUSED");
	for (i = 0; i < n; i++) {
		if (p[i].rtt_us > 0)
			actorctl_fmt_us(rtt, sizeof(rtt),
			    (uint64_t)p[i].rtt_us);
		else
			snprintf(rtt, sizeof(rtt), "-");
		snprintf(msgs, sizeof(msgs), "%llu/%llu", p[i].msgs_out,
		    p[i].msgs_in);
		snprintf(bytes, sizeof(bytes), "%llu/%llu", p[i].bytes_out,
		    p[i].bytes_in);
		printf("%-8s %-10s %-16s %-22s %7s %15s %19s %6u %7llu %7llu\n",
		    p[i].name, p[i].state, p[i].epoch, p[i].address, rtt, msgs,
		    bytes, p[i].queued, p[i].dropped, p[i].refused);
	}
}

int
actorctl_nodes(struct actorctl *a, int argc, char **argv)
{
	struct ctl_request q;
	struct ctl_response r;
	struct nodestatus_self self;
	struct nodestatus_peer *peers = NULL;
	char *oa[1] = { NULL };
	size_t n = 0;
	int i, rc;

	if ((i = actorctl_parse_opts(a, argc, argv, "", NULL, NULL, oa)) < 0)
		return i == -2 ? ACTORCTL_EXIT_OK : ACTORCTL_EXIT_USAGE;
	if (argc - i != 0) {
		fprintf(stderr, "usage: actorctl nodes [--json]\n");
		return ACTORCTL_EXIT_USAGE;
	}
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_NODES;
	if ((rc = actorctl_call(a, &q, &r, ACTORCTL_TIMEOUT)) != 0)
		return rc;
	rc = nodestatus_parse(r.data, r.datalen, &self, &peers, &n);
	ctl_response_free(&r);
	if (rc == -1) {
		fprintf(stderr, "actorctl: nodes: out of memory\n");
		return ACTORCTL_EXIT_FAILED;
	}
	if (a->json)
		print_json(&self, peers, n);
	else
		print_table(&self, peers, n);
	free(peers);
	return ACTORCTL_EXIT_OK;
}
