/*
 * snapshot.c: committed state.  An actor's state region holds two slots;
 * a commit writes the slot that is not the latest, then its header: length,
 * the delivery id of the message in hand, CRC32C (Castagnoli) over
 * generation, delivery id, length and data, and last the generation.  The
 * latest snapshot is the valid slot (CRC matches) with the highest
 * generation, so a crash at any instruction of a commit leaves the previous
 * snapshot the latest.  The delivery id lets actord know that the message
 * in hand when the worker died was already handled (reaped.c): committed
 * state and "handled" move together.
 *
 * Owns: the two slots and their headers.  Must never write the latest slot.
 *
 * The read-once rule (shm/shm.h): actord validates a dead actor's
 * snapshots (reaped.c); a slot header's length, delivery id and CRC are
 * read once each, and the checked copies are what the CRC runs over.
 */
#include <string.h>

#include "worker/actor_impl.h"

static bool	 slot_valid(struct ar_hdr *, const struct ar_caps *, int,
		    uint64_t *, uint64_t *);
static uint32_t	 slot_crc(uint64_t, uint64_t, uint32_t, const void *);
static int	 read_slot(struct ar_hdr *, const struct ar_caps *, void *,
		    size_t, size_t *);

static const uint32_t crc_table[256] = {
	0x00000000U, 0xf26b8303U, 0xe13b70f7U, 0x1350f3f4U,
	0xc79a971fU, 0x35f1141cU, 0x26a1e7e8U, 0xd4ca64ebU,
	0x8ad958cfU, 0x78b2dbccU, 0x6be22838U, 0x9989ab3bU,
	0x4d43cfd0U, 0xbf284cd3U, 0xac78bf27U, 0x5e133c24U,
	0x105ec76fU, 0xe235446cU, 0xf165b798U, 0x030e349bU,
	0xd7c45070U, 0x25afd373U, 0x36ff2087U, 0xc494a384U,
	0x9a879fa0U, 0x68ec1ca3U, 0x7bbcef57U, 0x89d76c54U,
	0x5d1d08bfU, 0xaf768bbcU, 0xbc267848U, 0x4e4dfb4bU,
	0x20bd8edeU, 0xd2d60dddU, 0xc186fe29U, 0x33ed7d2aU,
	0xe72719c1U, 0x154c9ac2U, 0x061c6936U, 0xf477ea35U,
	0xaa64d611U, 0x580f5512U, 0x4b5fa6e6U, 0xb93425e5U,
	0x6dfe410eU, 0x9f95c20dU, 0x8cc531f9U, 0x7eaeb2faU,
	0x30e349b1U, 0xc288cab2U, 0xd1d83946U, 0x23b3ba45U,
	0xf779deaeU, 0x05125dadU, 0x1642ae59U, 0xe4292d5aU,
	0xba3a117eU, 0x4851927dU, 0x5b016189U, 0xa96ae28aU,
	0x7da08661U, 0x8fcb0562U, 0x9c9bf696U, 0x6ef07595U,
	0x417b1dbcU, 0xb3109ebfU, 0xa0406d4bU, 0x522bee48U,
	0x86e18aa3U, 0x748a09a0U, 0x67dafa54U, 0x95b17957U,
	0xcba24573U, 0x39c9c670U, 0x2a993584U, 0xd8f2b687U,
	0x0c38d26cU, 0xfe53516fU, 0xed03a29bU, 0x1f682198U,
	0x5125dad3U, 0xa34e59d0U, 0xb01eaa24U, 0x42752927U,
	0x96bf4dccU, 0x64d4cecfU, 0x77843d3bU, 0x85efbe38U,
	0xdbfc821cU, 0x2997011fU, 0x3ac7f2ebU, 0xc8ac71e8U,
	0x1c661503U, 0xee0d9600U, 0xfd5d65f4U, 0x0f36e6f7U,
	0x61c69362U, 0x93ad1061U, 0x80fde395U, 0x72966096U,
	0xa65c047dU, 0x5437877eU, 0x4767748aU, 0xb50cf789U,
	0xeb1fcbadU, 0x197448aeU, 0x0a24bb5aU, 0xf84f3859U,
	0x2c855cb2U, 0xdeeedfb1U, 0xcdbe2c45U, 0x3fd5af46U,
	0x7198540dU, 0x83f3d70eU, 0x90a324faU, 0x62c8a7f9U,
	0xb602c312U, 0x44694011U, 0x5739b3e5U, 0xa55230e6U,
	0xfb410cc2U, 0x092a8fc1U, 0x1a7a7c35U, 0xe811ff36U,
	0x3cdb9bddU, 0xceb018deU, 0xdde0eb2aU, 0x2f8b6829U,
	0x82f63b78U, 0x709db87bU, 0x63cd4b8fU, 0x91a6c88cU,
	0x456cac67U, 0xb7072f64U, 0xa457dc90U, 0x563c5f93U,
	0x082f63b7U, 0xfa44e0b4U, 0xe9141340U, 0x1b7f9043U,
	0xcfb5f4a8U, 0x3dde77abU, 0x2e8e845fU, 0xdce5075cU,
	0x92a8fc17U, 0x60c37f14U, 0x73938ce0U, 0x81f80fe3U,
	0x55326b08U, 0xa759e80bU, 0xb4091bffU, 0x466298fcU,
	0x1871a4d8U, 0xea1a27dbU, 0xf94ad42fU, 0x0b21572cU,
	0xdfeb33c7U, 0x2d80b0c4U, 0x3ed04330U, 0xccbbc033U,
	0xa24bb5a6U, 0x502036a5U, 0x4370c551U, 0xb11b4652U,
	0x65d122b9U, 0x97baa1baU, 0x84ea524eU, 0x7681d14dU,
	0x2892ed69U, 0xdaf96e6aU, 0xc9a99d9eU, 0x3bc21e9dU,
	0xef087a76U, 0x1d63f975U, 0x0e330a81U, 0xfc588982U,
	0xb21572c9U, 0x407ef1caU, 0x532e023eU, 0xa145813dU,
	0x758fe5d6U, 0x87e466d5U, 0x94b49521U, 0x66df1622U,
	0x38cc2a06U, 0xcaa7a905U, 0xd9f75af1U, 0x2b9cd9f2U,
	0xff56bd19U, 0x0d3d3e1aU, 0x1e6dcdeeU, 0xec064eedU,
	0xc38d26c4U, 0x31e6a5c7U, 0x22b65633U, 0xd0ddd530U,
	0x0417b1dbU, 0xf67c32d8U, 0xe52cc12cU, 0x1747422fU,
	0x49547e0bU, 0xbb3ffd08U, 0xa86f0efcU, 0x5a048dffU,
	0x8ecee914U, 0x7ca56a17U, 0x6ff599e3U, 0x9d9e1ae0U,
	0xd3d3e1abU, 0x21b862a8U, 0x32e8915cU, 0xc083125fU,
	0x144976b4U, 0xe622f5b7U, 0xf5720643U, 0x07198540U,
	0x590ab964U, 0xab613a67U, 0xb831c993U, 0x4a5a4a90U,
	0x9e902e7bU, 0x6cfbad78U, 0x7fab5e8cU, 0x8dc0dd8fU,
	0xe330a81aU, 0x115b2b19U, 0x020bd8edU, 0xf0605beeU,
	0x24aa3f05U, 0xd6c1bc06U, 0xc5914ff2U, 0x37faccf1U,
	0x69e9f0d5U, 0x9b8273d6U, 0x88d28022U, 0x7ab90321U,
	0xae7367caU, 0x5c18e4c9U, 0x4f48173dU, 0xbd23943eU,
	0xf36e6f75U, 0x0105ec76U, 0x12551f82U, 0xe03e9c81U,
	0x34f4f86aU, 0xc69f7b69U, 0xd5cf889dU, 0x27a40b9eU,
	0x79b737baU, 0x8bdcb4b9U, 0x988c474dU, 0x6ae7c44eU,
	0xbe2da0a5U, 0x4c4623a6U, 0x5f16d052U, 0xad7d5351U,
};

uint32_t
actor_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	crc = ~crc;
	while (len-- > 0)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t
slot_crc(uint64_t gen, uint64_t handled, uint32_t len, const void *data)
{
	unsigned char h[20];
	uint32_t crc;
	int i;

	for (i = 0; i < 8; i++) {
		h[i] = (unsigned char)(gen >> (8 * i));
		h[8 + i] = (unsigned char)(handled >> (8 * i));
	}
	for (i = 0; i < 4; i++)
		h[16 + i] = (unsigned char)(len >> (8 * i));
	crc = actor_crc32c(0, h, sizeof(h));
	return actor_crc32c(crc, data, len);
}

/*
 * Slot s holds a whole commit: its generation and delivery id in *gen and
 * *handled, each read once with the length and CRC they were checked with.
 */
static bool
slot_valid(struct ar_hdr *h, const struct ar_caps *c, int s, uint64_t *gen,
    uint64_t *handled)
{
	struct ar_snap *sn = &h->snap[s];
	uint32_t len, crc;

	*gen = atomic_load_explicit(&sn->gen, memory_order_acquire);
	*handled = SHM_ONCE(sn->handled);
	len = SHM_ONCE(sn->len);
	crc = SHM_ONCE(sn->crc);
	return *gen != 0 && len <= c->snap_cap &&
	    slot_crc(*gen, *handled, len, ar_snapdata(h, c, s)) == crc;
}

/* The latest valid slot (and the delivery it committed), or -1. */
int
snap_latest(struct ar_hdr *h, const struct ar_caps *c, uint64_t *handled)
{
	int s, best = -1;
	uint64_t g, bg = 0, hd, bh = 0;

	for (s = 0; s < 2; s++) {
		if (!slot_valid(h, c, s, &g, &hd))
			continue;
		if (best < 0 || g > bg) {
			best = s;
			bg = g;
			bh = hd;
		}
	}
	if (best >= 0 && handled != NULL)
		*handled = bh;
	return best;
}

size_t
actor_snapshot_max(const struct actor *a)
{
	return a->hdr != NULL ? a->caps.snap_cap : 0;
}

void
actor_set_commit_hook(struct actor *a, void (*fn)(void *), void *arg)
{
	a->commit_hook = fn;
	a->commit_arg = arg;
}

int
actor_commit(struct actor *a, const void *data, size_t len)
{
	struct ar_hdr *h = a->hdr;
	struct ar_snap *sn;
	uint64_t gen, handled;
	int s;

	if (h == NULL)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (len > a->caps.snap_cap)
		return a->caps.snap_cap == 0 ? ACTOR_ENOSTATE : ACTOR_EOVERSIZE;
	if (data == NULL && len > 0)
		return ACTOR_EINVAL;
	if (a->snap_latest == -2)
		a->snap_latest = snap_latest(h, &a->caps, NULL);
	s = a->snap_latest == 0 ? 1 : 0;
	gen = a->snap_latest >= 0 ?
	    atomic_load(&h->snap[a->snap_latest].gen) + 1 : 1;
	handled = a->holding ? atomic_load(&h->inhand_id) : 0;
	sn = &h->snap[s];
	/* The slot goes invalid first, so a torn header can never pass. */
	atomic_store(&sn->gen, 0);
	if (len > 0)
		memcpy(a->snapdata[s], data, len);
	if (a->commit_hook != NULL)
		a->commit_hook(a->commit_arg);
	sn->handled = handled;
	sn->len = (uint32_t)len;
	sn->crc = slot_crc(gen, handled, (uint32_t)len, a->snapdata[s]);
	atomic_store_explicit(&sn->gen, gen, memory_order_release);
	a->snap_latest = s;
	atomic_fetch_add(&h->commits, 1);
	return 0;
}

static int
read_slot(struct ar_hdr *h, const struct ar_caps *cp, void *buf,
    size_t buflen, size_t *len)
{
	int s, tries;
	uint64_t gen;
	uint32_t n, crc;
	size_t c;

	for (tries = 0; tries < 100; tries++) {
		if ((s = snap_latest(h, cp, NULL)) < 0)
			return ACTOR_ENOSTATE;
		gen = atomic_load(&h->snap[s].gen);
		n = SHM_ONCE(h->snap[s].len);
		crc = SHM_ONCE(h->snap[s].crc);
		if (n > cp->snap_cap)
			continue;	/* rewritten since it was checked */
		if (len != NULL)
			*len = n;
		c = n < buflen ? n : buflen;
		if (c > 0)
			memcpy(buf, ar_snapdata(h, cp, s), c);
		/* A commit may have started on this slot meanwhile. */
		if (atomic_load(&h->snap[s].gen) == gen && (c < n ||
		    slot_crc(gen, SHM_ONCE(h->snap[s].handled), n, buf) ==
		    crc))
			return s;
	}
	return ACTOR_EAGAIN;
}

int
actor_load(struct actor *a, void *buf, size_t buflen, size_t *len)
{
	int s;

	if (a->hdr == NULL)
		return ACTOR_ENOMAILBOX;
	if ((s = read_slot(a->hdr, &a->caps, buf, buflen, len)) < 0)
		return s;
	a->snap_latest = s;
	return 0;
}

int
actor_snapshot_read(struct shm_arena *arena, uint32_t idx, void *buf,
    size_t buflen, size_t *len)
{
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(arena, idx, &c);
	int s;

	if (h == NULL)
		return ACTOR_EBADINDEX;
	s = read_slot(h, &c, buf, buflen, len);
	return s < 0 ? s : 0;
}
