/*
 * check_sup_plan.c: a supervisor's plan lists (supervisor/plan.c) against
 * a plain model, at a size where their holes, compaction and the places
 * children keep (node->plan_at) all come into play: thousands of random
 * adds, removals (at the head, in the middle, by place), sorts and
 * clears over the 300 children of one supervisor.  After each step the
 * list must name exactly the model's children in the model's order, know
 * each one's membership, count them, and keep no child before its head.
 * The core's use of the lists in order (sup.c) is checked by
 * check_sup_sim and check_sup_tree; this is the data structure alone.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "tests/lib/tcheck.h"

#define KIDS	300
#define STEPS	20000

struct model {
	struct node	*v[KIDS];
	size_t		 n;
	bool		 in[KIDS];
};

static struct node	 sup;
static struct node	 kids[KIDS];
static struct node	*kidp[KIDS];

static void
setup(void)
{
	size_t i;

	memset(&sup, 0, sizeof(sup));
	memset(kids, 0, sizeof(kids));
	for (i = 0; i < KIDS; i++) {
		kids[i].parent = &sup;
		kids[i].id = 1000 + i;
		kids[i].at = i;
		kidp[i] = &kids[i];
	}
	sup.kids = kidp;
	sup.nkids = KIDS;
}

static void
teardown(void)
{
	plan_free(&sup.plan);
}

static bool
model_has(const struct model *m, const struct node *k)
{
	return m->in[k - kids];
}

static void
model_add(struct model *m, struct node *k)
{
	if (!model_has(m, k)) {
		m->v[m->n++] = k;
		m->in[k - kids] = true;
	}
}

static void
model_del(struct model *m, const struct node *k)
{
	size_t i;

	m->in[k - kids] = false;
	for (i = 0; i < m->n; i++)
		if (m->v[i] == k) {
			memmove(&m->v[i], &m->v[i + 1],
			    (m->n - i - 1) * sizeof(m->v[0]));
			m->n--;
			return;
		}
}

static int
model_cmp(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a;
	const struct node *y = *(struct node *const *)b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * The list against the model.  Plain tests, not ck_assert: in a forked
 * test each ck_assert is a message to the runner, and there are millions.
 */
static void
same(const struct plan_list *l, const struct model *m, int step)
{
	size_t i, k = 0;

	for (i = 0; i < l->first && i < l->n; i++)
		if (l->v[i].n != NULL)
			ck_abort_msg("step %d: a child before the head", step);
	for (i = plan_next(l, l->first); i < l->n; i = plan_next(l, i + 1)) {
		if (k >= m->n)
			ck_abort_msg("step %d: more children than %zu", step,
			    m->n);
		if (l->v[i].n != m->v[k])
			ck_abort_msg("step %d: place %zu names %s, not %s",
			    step, k, l->v[i].n->name, m->v[k]->name);
		if (!plan_ref_live(&l->v[i]))
			ck_abort_msg("step %d: place %zu is stale", step, k);
		k++;
	}
	if (k != m->n || plan_count(l) != m->n)
		ck_abort_msg("step %d: %zu children, counted %zu, not %zu",
		    step, k, plan_count(l), m->n);
	for (i = 0; i < KIDS; i++)
		if (plan_has(l, &kids[i]) != model_has(m, &kids[i]))
			ck_abort_msg("step %d: membership of child %zu", step,
			    i);
}

START_TEST(lists_follow_the_model)
{
	struct plan_list *ls[2] = { &sup.plan.stop, &sup.plan.start };
	struct model ms[2];
	struct plan_list *l;
	struct model *m;
	struct node *k;
	int step, w;
	size_t i;

	memset(ms, 0, sizeof(ms));
	srandom(7);
	for (i = 0; i < KIDS; i++)
		snprintf(kids[i].name, sizeof(kids[i].name), "k%zu", i);
	for (step = 0; step < STEPS; step++) {
		w = (int)(random() % 2);
		l = ls[w];
		m = &ms[w];
		k = &kids[random() % KIDS];
		switch (random() % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			plan_add(l, k);
			model_add(m, k);
			break;
		case 6: case 7: case 8:		/* the head, as a step does */
			if (m->n > 0) {
				k = m->v[0];
				plan_del_at(l, plan_next(l, l->first));
				model_del(m, k);
			}
			break;
		case 9: case 10: case 11:
			if (plan_del(l, k) != model_has(m, k))
				ck_abort_msg("step %d: plan_del", step);
			model_del(m, k);
			break;
		case 12:
			plan_tidy(l);
			break;
		case 13:
			plan_sort(l, w == 0);
			qsort(m->v, m->n, sizeof(m->v[0]), model_cmp);
			if (w == 0)
				for (i = 0; i < m->n / 2; i++) {
					k = m->v[i];
					m->v[i] = m->v[m->n - 1 - i];
					m->v[m->n - 1 - i] = k;
				}
			break;
		case 14:
			if (random() % 8 == 0) {
				plan_list_clear(l);
				memset(m, 0, sizeof(*m));
			}
			break;
		default:
			/* Fill up, so that removals leave many holes. */
			for (i = 0; i < KIDS; i += 3) {
				plan_add(l, &kids[i]);
				model_add(m, &kids[i]);
			}
			break;
		}
		same(ls[0], &ms[0], step);
		same(ls[1], &ms[1], step);
	}
}
END_TEST

/* A child in one list is not in the other: each list has its own place. */
START_TEST(stop_and_start_places_are_apart)
{
	plan_add(&sup.plan.stop, &kids[3]);
	plan_add(&sup.plan.start, &kids[5]);
	plan_add(&sup.plan.start, &kids[3]);
	ck_assert(plan_has(&sup.plan.stop, &kids[3]));
	ck_assert(!plan_has(&sup.plan.stop, &kids[5]));
	ck_assert(plan_has(&sup.plan.start, &kids[3]));
	ck_assert(plan_del(&sup.plan.stop, &kids[3]));
	ck_assert(!plan_has(&sup.plan.stop, &kids[3]));
	ck_assert(plan_has(&sup.plan.start, &kids[3]));
	ck_assert_uint_eq(plan_count(&sup.plan.start), 2);
	/* A node born again under the same address is another child. */
	kids[5].id++;
	ck_assert(!plan_has(&sup.plan.start, &kids[5]));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("sup_plan");
	TCase *tc = tcase_create("lists");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lists_follow_the_model);
	tcase_add_test(tc, stop_and_start_places_are_apart);
	suite_add_tcase(s, tc);
	return tcheck_run(s);
}
