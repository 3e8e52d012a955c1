/*
 * check_config.c: unit tests of config.c (actord.conf into a spec) and
 * spec.c (defaults, copy, equality, free).
 *
 * Bad configurations are a table with the exact message each must give,
 * compared as strings: the messages are part of the interface (the man
 * page's DIAGNOSTICS and the tests of actord -n depend on them).  Good
 * configurations are checked field by field.  No process is started here
 * except to read the runtime directory default as another user.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/config.h"
#include "supervisor/spec.h"
#include "tests/lib/tcheck.h"

#define ERRLEN	1024

/* A worker w under the root, with body on line 4 of the text. */
#define CHILD(body)							\
	"supervisor = {\n"						\
	"\tchildren = (\n"						\
	"\t\t{ name = \"w\"; exec = [\"/bin/true\"];\n"			\
	"\t\t  " body " }\n"						\
	"\t);\n"							\
	"};\n"

/* The root supervisor, with body on line 2. */
#define SUP(body)	"supervisor = {\n\t" body "\n};\n"

struct bad {
	const char	*text;
	const char	*want;
};

static const char long_name[] =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

#define NAME64 \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct bad bad_configs[] = {
	/* The example of issue 3. */
	{ "supervisor = {\n"
	  "\tchildren = (\n"
	  "\t\t{ name = \"db\"; exec = [\"/bin/true\"]; },\n"
	  "\t\t{ name = \"web\"; exec = [\"/bin/true\"];\n"
	  "\t\t  restart = \"permanant\"; }\n"
	  "\t);\n"
	  "};\n",
	  "t.conf:5: supervisor.children[1].restart: expected permanent, "
	  "transient or temporary, got \"permanant\"" },

	/* Unknown keys, with and without a suggestion. */
	{ CHILD("restrat = \"permanent\";"),
	  "t.conf:4: supervisor.children[0].restrat: unknown key \"restrat\" "
	  "(did you mean \"restart\"?)" },
	{ "colour = \"blue\";\n",
	  "t.conf:1: colour: unknown key \"colour\"" },
	{ "\nshutdown_timout = 5;\n",
	  "t.conf:2: shutdown_timout: unknown key \"shutdown_timout\" "
	  "(did you mean \"shutdown_timeout\"?)" },
	{ SUP("strategy = \"one_for_all\"; intensty = 3;"),
	  "t.conf:2: supervisor.intensty: unknown key \"intensty\" "
	  "(did you mean \"intensity\"?)" },
	{ CHILD("limits = { nofiles = 10; };"),
	  "t.conf:4: supervisor.children[0].limits.nofiles: unknown key "
	  "\"nofiles\" (did you mean \"nofile\"?)" },
	{ CHILD("mailbox = { capacty = 16; };"),
	  "t.conf:4: supervisor.children[0].mailbox.capacty: unknown key "
	  "\"capacty\" (did you mean \"capacity\"?)" },
	{ "log = { path = \"/tmp/x.log\"; kept = 3; };\n",
	  "t.conf:1: log.kept: unknown key \"kept\" (did you mean \"keep\"?)" },

	/* Required keys, names. */
	{ "supervisor = {\n\tchildren = (\n\t\t{ exec = [\"/bin/true\"]; }\n"
	  "\t);\n};\n",
	  "t.conf:3: supervisor.children[0]: missing required key \"name\"" },
	{ "supervisor = {\n\tchildren = (\n\t\t{ name = \"db\"; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0]: missing required key \"exec\" "
	  "(or \"supervisor\")" },
	{ "supervisor = {\n"
	  "\tchildren = (\n"
	  "\t\t{ name = \"db\"; exec = [\"/bin/true\"]; },\n"
	  "\t\t{ name = \"web\"; exec = [\"/bin/true\"]; },\n"
	  "\t\t{ exec = [\"/bin/true\"];\n"
	  "\t\t  name = \"db\"; }\n"
	  "\t);\n"
	  "};\n",
	  "t.conf:6: supervisor.children[2].name: duplicate name \"db\" "
	  "(first at line 3)" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"a/b\"; exec = [\"/bin/true\"]; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].name: expected a name of letters, "
	  "digits, \"_\", \".\" and \"-\" (at most 64), got \"a/b\"" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"\"; exec = [\"/bin/true\"]; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].name: expected a name of letters, "
	  "digits, \"_\", \".\" and \"-\" (at most 64), got \"\"" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"..\"; exec = [\"/bin/true\"]; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].name: expected a name of letters, "
	  "digits, \"_\", \".\" and \"-\" (at most 64), got \"..\"" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"" NAME64 "b\"; exec = [\"/bin/true\"]; }\n"
	  "\t);\n};\n",
	  "t.conf:3: supervisor.children[0].name: expected a name of letters, "
	  "digits, \"_\", \".\" and \"-\" (at most 64), got \""
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = 5; exec = [\"/bin/true\"]; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].name: expected a name of letters, "
	  "digits, \"_\", \".\" and \"-\" (at most 64), got 5" },
	/* Four levels of 64-character names: a path of 260 characters. */
	{ "supervisor = { children = ( { name = \"" NAME64 "\";\n"
	  " supervisor = { children = ( { name = \"" NAME64 "\";\n"
	  " supervisor = { children = ( { name = \"" NAME64 "\";\n"
	  " supervisor = { children = ( { name = \"" NAME64 "\";\n"
	  " exec = [\"/bin/true\"]; } ); }; } ); }; } ); }; } ); };\n",
	  "t.conf:4: supervisor.children[0].supervisor.children[0].supervisor."
	  "children[0].supervisor.children[0].name: expected a node path of at "
	  "most 255 characters, got \"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaa...\" (260 characters)" },

	/* Supervisor settings. */
	{ SUP("backoff_min = 500; backoff_max = 100;"),
	  "t.conf:2: supervisor.backoff_max: expected an integer >= "
	  "backoff_min (500), got 100" },
	{ SUP("backoff_min = 5000;"),
	  "t.conf:2: supervisor.backoff_min: expected an integer <= "
	  "backoff_max (1000), got 5000" },
	{ SUP("intensity = -1;"),
	  "t.conf:2: supervisor.intensity: expected an integer from 0 to "
	  "10000, got -1" },
	{ SUP("start = \"sideways\";"),
	  "t.conf:2: supervisor.start: expected parallel or ordered, got "
	  "\"sideways\"" },
	{ SUP("period = 0;"),
	  "t.conf:2: supervisor.period: expected an integer from 1 to 86400, "
	  "got 0" },
	{ SUP("period = true;"),
	  "t.conf:2: supervisor.period: expected an integer from 1 to 86400, "
	  "got true" },
	{ SUP("strategy = \"one_for_some\";"),
	  "t.conf:2: supervisor.strategy: expected one_for_one, one_for_all "
	  "or rest_for_one, got \"one_for_some\"" },
	{ SUP("children = { name = \"x\"; };"),
	  "t.conf:2: supervisor.children: expected a list of children such "
	  "as ( { name = ...; }, ... ), got a group" },
	{ SUP("children = ( \"db\" );"),
	  "t.conf:2: supervisor.children[0]: expected a group such as "
	  "{ name = ...; exec = [...]; }, got \"db\"" },
	{ "supervisor = ( );\n",
	  "t.conf:1: supervisor: expected a group, got an empty list" },

	/* Supervisor nodes. */
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"web\"; exec = [\"/bin/true\"];\n"
	  "\t\t  supervisor = { }; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].exec: not allowed beside "
	  "\"supervisor\" (a supervisor node takes only name, restart and "
	  "supervisor)" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"web\"; supervisor = { };\n"
	  "\t\t  shutdown = 100; }\n\t);\n};\n",
	  "t.conf:4: supervisor.children[0].shutdown: not allowed beside "
	  "\"supervisor\" (a supervisor node takes only name, restart and "
	  "supervisor)" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"web\"; supervisor = \"one_for_all\"; }\n"
	  "\t);\n};\n",
	  "t.conf:3: supervisor.children[0].supervisor: expected a group, "
	  "got \"one_for_all\"" },
	{ "supervisor = {\n"
	  "\tchildren = (\n"
	  "\t\t{ name = \"db\"; exec = [\"/bin/true\"]; },\n"
	  "\t\t{ name = \"web\"; supervisor = {\n"
	  "\t\t\tchildren = (\n"
	  "\t\t\t\t{ name = \"front\"; exec = [\"/bin/true\"];\n"
	  "\t\t\t\t  restart = \"sometimes\"; }\n"
	  "\t\t\t);\n"
	  "\t\t}; }\n"
	  "\t);\n"
	  "};\n",
	  "t.conf:7: supervisor.children[1].supervisor.children[0].restart: "
	  "expected permanent, transient or temporary, got \"sometimes\"" },

	/* exec */
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"w\"; exec = []; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].exec: expected a non-empty array "
	  "of strings such as [\"/usr/bin/db\", \"--port\", \"5000\"], got an "
	  "empty array" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"w\"; exec = \"/bin/true -x\"; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].exec: expected a non-empty array "
	  "of strings such as [\"/usr/bin/db\", \"--port\", \"5000\"], got "
	  "\"/bin/true -x\"" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"w\"; exec = [1, 2]; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].exec[0]: expected a string, "
	  "got 1" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"w\"; exec = (\"/bin/echo\", 5); }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].exec[1]: expected a string, "
	  "got 5" },
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"w\"; exec = [\"\"]; }\n\t);\n};\n",
	  "t.conf:3: supervisor.children[0].exec[0]: expected a program to "
	  "run, got \"\"" },

	/* Worker keys. */
	{ CHILD("cwd = 5;"),
	  "t.conf:4: supervisor.children[0].cwd: expected an absolute path of "
	  "at most 4095 bytes, got 5" },
	{ CHILD("cwd = \"srv/db\";"),
	  "t.conf:4: supervisor.children[0].cwd: expected an absolute path of "
	  "at most 4095 bytes, got \"srv/db\"" },
	{ CHILD("user = 0;"),
	  "t.conf:4: supervisor.children[0].user: expected a non-empty string, "
	  "got 0" },
	{ CHILD("shutdown = \"forever\";"),
	  "t.conf:4: supervisor.children[0].shutdown: expected milliseconds "
	  "from 0 to 86400000, \"brutal_kill\" or \"infinity\", got "
	  "\"forever\"" },
	{ CHILD("shutdown = -5;"),
	  "t.conf:4: supervisor.children[0].shutdown: expected milliseconds "
	  "from 0 to 86400000, \"brutal_kill\" or \"infinity\", got -5" },
	{ CHILD("shutdown = 1.5;"),
	  "t.conf:4: supervisor.children[0].shutdown: expected milliseconds "
	  "from 0 to 86400000, \"brutal_kill\" or \"infinity\", got 1.5" },
	{ CHILD("start_timeout = 0;"),
	  "t.conf:4: supervisor.children[0].start_timeout: expected an "
	  "integer from 1 to 86400000, got 0" },
	{ CHILD("ready = \"socket\";"),
	  "t.conf:4: supervisor.children[0].ready: expected exec, fd, "
	  "sd_notify or actor, got \"socket\"" },
	{ CHILD("start = \"sideways\";"),
	  "t.conf:4: supervisor.children[0].start: expected parallel or "
	  "ordered, got \"sideways\"" },
	{ CHILD("umask = 27;"),
	  "t.conf:4: supervisor.children[0].umask: expected a string of octal "
	  "digits from \"0\" to \"0777\" such as \"027\", got 27" },
	{ CHILD("umask = \"089\";"),
	  "t.conf:4: supervisor.children[0].umask: expected a string of octal "
	  "digits from \"0\" to \"0777\" such as \"027\", got \"089\"" },
	{ CHILD("limits = { nofile = -1; };"),
	  "t.conf:4: supervisor.children[0].limits.nofile: expected an "
	  "integer >= 0 or \"infinity\", got -1" },
	{ CHILD("limits = { core = \"unlimited\"; };"),
	  "t.conf:4: supervisor.children[0].limits.core: expected an "
	  "integer >= 0 or \"infinity\", got \"unlimited\"" },
	{ CHILD("env = { PORT = 5000; };"),
	  "t.conf:4: supervisor.children[0].env.PORT: expected a string, "
	  "got 5000" },
	{ CHILD("env = { ACTORD_ARENA_FD = \"3\"; };"),
	  "t.conf:4: supervisor.children[0].env.ACTORD_ARENA_FD: reserved "
	  "variable \"ACTORD_ARENA_FD\" (actord sets ACTORD_* and "
	  "NOTIFY_SOCKET)" },
	{ CHILD("env = { LC_ALL = \"C\"; my-var = \"x\"; };"),
	  "t.conf:4: supervisor.children[0].env.my-var: expected a variable "
	  "name of letters, digits and \"_\", got \"my-var\"" },
	{ CHILD("env = [\"PATH=/bin\"];"),
	  "t.conf:4: supervisor.children[0].env: expected a group such as "
	  "{ PATH = \"/usr/bin:/bin\"; }, got an array" },
	{ CHILD("instances = 0;"),
	  "t.conf:4: supervisor.children[0].instances: expected an integer "
	  "from 1 to 1024, got 0" },
	{ CHILD("instances = 1025;"),
	  "t.conf:4: supervisor.children[0].instances: expected an integer "
	  "from 1 to 1024, got 1025" },
	{ CHILD("success_exit = [0, 256];"),
	  "t.conf:4: supervisor.children[0].success_exit[1]: expected an "
	  "integer from 0 to 255, got 256" },
	{ CHILD("success_exit = 3;"),
	  "t.conf:4: supervisor.children[0].success_exit: expected an array "
	  "of exit statuses such as [0, 3], got 3" },

	/* Mailboxes. */
	{ CHILD("mailbox = 5;"),
	  "t.conf:4: supervisor.children[0].mailbox: expected a group such as "
	  "{ capacity = 1024; cell = 256; }, got 5" },
	{ CHILD("mailbox = { capacity = 1000; };"),
	  "t.conf:4: supervisor.children[0].mailbox.capacity: expected a "
	  "power of two from 2 to 1048576, got 1000" },
	{ CHILD("mailbox = { capacity = 1; };"),
	  "t.conf:4: supervisor.children[0].mailbox.capacity: expected a "
	  "power of two from 2 to 1048576, got 1" },
	{ CHILD("mailbox = { cell = 100; };"),
	  "t.conf:4: supervisor.children[0].mailbox.cell: expected a multiple "
	  "of 8 from 64 to 65536, got 100" },
	{ CHILD("mailbox = { cell = 56; };"),
	  "t.conf:4: supervisor.children[0].mailbox.cell: expected a multiple "
	  "of 8 from 64 to 65536, got 56" },
	{ CHILD("mailbox = { cell = 65544; };"),
	  "t.conf:4: supervisor.children[0].mailbox.cell: expected a multiple "
	  "of 8 from 64 to 65536, got 65544" },
	{ CHILD("mailbox = { overflow = \"drop\"; };"),
	  "t.conf:4: supervisor.children[0].mailbox.overflow: expected block, "
	  "reject, drop_oldest, drop_newest or coalesce, got \"drop\"" },
	{ CHILD("mailbox = { on_down = \"retry\"; };"),
	  "t.conf:4: supervisor.children[0].mailbox.on_down: expected keep or "
	  "fail, got \"retry\"" },
	{ CHILD("mailbox = { while_down = \"drop\"; };"),
	  "t.conf:4: supervisor.children[0].mailbox.while_down: expected "
	  "queue or reject, got \"drop\"" },
	{ CHILD("mailbox = { max_attempts = 0; };"),
	  "t.conf:4: supervisor.children[0].mailbox.max_attempts: expected an "
	  "integer >= 1, got 0" },
	{ CHILD("mailbox = { state = 2147483648; };"),
	  "t.conf:4: supervisor.children[0].mailbox.state: expected an "
	  "integer from 0 to 1073741824, got 2147483648" },
	{ CHILD("mailbox = { max_message = 16777217; };"),
	  "t.conf:4: supervisor.children[0].mailbox.max_message: expected an "
	  "integer from 0 to 16777216, got 16777217" },
	{ CHILD("mailbox = { max_message = \"64k\"; };"),
	  "t.conf:4: supervisor.children[0].mailbox.max_message: expected an "
	  "integer from 0 to 16777216, got \"64k\"" },
	{ CHILD("mailbox = { asks = 0; };"),
	  "t.conf:4: supervisor.children[0].mailbox.asks: expected an "
	  "integer from 1 to 65536, got 0" },
	{ CHILD("mailbox = { watchers = 0; };"),
	  "t.conf:4: supervisor.children[0].mailbox.watchers: expected an "
	  "integer from 1 to 65536, got 0" },
	{ CHILD("mailbox = { watchers = 65537; };"),
	  "t.conf:4: supervisor.children[0].mailbox.watchers: expected an "
	  "integer from 1 to 65536, got 65537" },

	/* Top level and logs. */
	{ "log = { keep = 3; };\n",
	  "t.conf:1: log: missing required key \"path\"" },
	{ "log = { path = \"/tmp/a.log\"; keep = 5000; };\n",
	  "t.conf:1: log.keep: expected an integer from 0 to 1000, got 5000" },
	{ "log = { path = \"/tmp/a.log\"; max_size = -1; };\n",
	  "t.conf:1: log.max_size: expected an integer >= 0, got -1" },
	{ CHILD("log = { path = \"a.log\"; };"),
	  "t.conf:4: supervisor.children[0].log.path: expected an absolute "
	  "path of at most 4095 bytes, got \"a.log\"" },
	{ "runtime_dir = \"run\";\n",
	  "t.conf:1: runtime_dir: expected an absolute path of at most 80 "
	  "bytes, got \"run\"" },
	{ "runtime_dir = \"/" NAME64 "/aaaaaaaaaaaaaaa\";\n",
	  "t.conf:1: runtime_dir: expected an absolute path of at most 80 "
	  "bytes, got \"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaa...\"" },
	{ "pidfile = \"actord.pid\";\n",
	  "t.conf:1: pidfile: expected an absolute path of at most 4095 bytes, "
	  "got \"actord.pid\"" },
	{ "cgroup = \"workers\";\n",
	  "t.conf:1: cgroup: expected an absolute path of at most 4095 bytes, "
	  "got \"workers\"" },
	{ "control_group = \"\";\n",
	  "t.conf:1: control_group: expected a non-empty string, got \"\"" },
	{ "spare_mailboxes = 5000;\n",
	  "t.conf:1: spare_mailboxes: expected an integer from 0 to 4096, "
	  "got 5000" },
	{ "spare_mailboxes = -1;\n",
	  "t.conf:1: spare_mailboxes: expected an integer from 0 to 4096, "
	  "got -1" },
	{ "shutdown_timeout = \"10s\";\n",
	  "t.conf:1: shutdown_timeout: expected an integer from 0 to 86400000, "
	  "got \"10s\"" },
	/* libconfig 1.5 would read this as 705032704 without our help. */
	{ "shutdown_timeout = 5000000000;\n",
	  "t.conf:1: shutdown_timeout: expected an integer from 0 to 86400000, "
	  "got 5000000000" },
	{ "shutdown_timeout = \"a \\\"quoted\\\"\\n value\";\n",
	  "t.conf:1: shutdown_timeout: expected an integer from 0 to 86400000, "
	  "got \"a \\\"quoted\\\"\\n value\"" },

	/* Syntax. */
	{ "supervisor = {\n\tstrategy = \"one_for_one\";\n\tintensity = = 5;\n};\n",
	  "t.conf:3: syntax error" },
	{ "supervisor = {\n\tchildren = (\n\t\t{ name = \"w\"; }\n\t;\n};\n",
	  "t.conf:4: syntax error" },
	{ "log = { path = \"/tmp/a\"; };\nlog = { path = \"/tmp/b\"; };\n",
	  "t.conf:2: syntax error: duplicate setting name" },
	/* libconfig leaks the string it was reading here; see config.c. */
	{ "log = { path = \"/tmp/x\" \"",
	  "t.conf:1: syntax error" },
	{ "\"\"", "t.conf:1: syntax error" },
	{ "# settings\n@include \"other.conf\"\n",
	  "t.conf:2: syntax error: @include is not supported" },
	{ "shutdown_timeout = 5;\n@other\n",
	  "t.conf:2: syntax error" },
	{ "\n\nshutdown_timeout = 99999999999999999999;\n",
	  "t.conf:3: syntax error: integer 99999999999999999999 is too large" },
	{ "supervisor = { children = ( { name = \"w\"; exec = [\"a\", 1]; } ); };\n",
	  "t.conf:1: syntax error: mismatched element type in array" },

	/* The first error in the file wins. */
	{ "supervisor = {\n\tchildren = (\n"
	  "\t\t{ name = \"w\";\n\t\t  restart = \"x\";\n"
	  "\t\t  exec = 5; }\n\t);\n};\n",
	  "t.conf:4: supervisor.children[0].restart: expected permanent, "
	  "transient or temporary, got \"x\"" },
};

static struct actord_spec *
parse_ok(const char *text)
{
	struct actord_spec	*spec;
	char			 err[ERRLEN];

	spec = config_parse_string(text, "t.conf", err, sizeof(err));
	ck_assert_msg(spec != NULL, "config refused: %s", err);
	return spec;
}

static const struct limit_spec *
find_limit(const struct child_spec *c, int resource)
{
	size_t i;

	for (i = 0; i < c->nlimits; i++)
		if (c->limits[i].resource == resource)
			return &c->limits[i];
	return NULL;
}

START_TEST(bad_config)
{
	const struct bad	*b = &bad_configs[_i];
	struct actord_spec	*spec;
	char			 err[ERRLEN];

	spec = config_parse_string(b->text, "t.conf", err, sizeof(err));
	ck_assert_msg(spec == NULL, "bad config #%d accepted:\n%s", _i,
	    b->text);
	ck_assert_msg(strcmp(err, b->want) == 0,
	    "bad config #%d:\n got: %s\nwant: %s", _i, err, b->want);
	ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(bad_config_count)
{
	/* The brief asks for at least 25; keep the table honest. */
	ck_assert_uint_ge(sizeof(bad_configs) / sizeof(bad_configs[0]), 25);
	ck_assert_uint_eq(strlen(long_name), SPEC_NAME_MAX);
}
END_TEST

START_TEST(defaults)
{
	struct actord_spec *spec = parse_ok("# nothing but a comment\n");

	ck_assert_str_eq(spec->runtime_dir, spec_default_runtime_dir());
	ck_assert_ptr_null(spec->file);
	ck_assert_ptr_null(spec->pidfile);
	ck_assert_ptr_null(spec->control_group);
	ck_assert_ptr_null(spec->metrics_listen);
	ck_assert_ptr_null(spec->cgroup);
	ck_assert_uint_eq(spec->shutdown_timeout, DEFAULT_SHUTDOWN_TIMEOUT);
	spec_free(spec);
	spec = parse_ok("cgroup = \"/sys/fs/cgroup/actord\";\n");
	ck_assert_str_eq(spec->cgroup, "/sys/fs/cgroup/actord");
	ck_assert_uint_eq(spec->spare_mailboxes, DEFAULT_SPARE_MAILBOXES);
	ck_assert_uint_eq(spec->spare_mailboxes, 16);
	ck_assert_ptr_null(spec->log.path);
	ck_assert_uint_eq(spec->log.max_size, DEFAULT_LOG_MAX_SIZE);
	ck_assert_uint_eq(spec->log.keep, DEFAULT_LOG_KEEP);
	ck_assert_int_eq(spec->root.strategy, DEFAULT_STRATEGY);
	ck_assert_uint_eq(spec->root.intensity, DEFAULT_INTENSITY);
	ck_assert_uint_eq(spec->root.period, DEFAULT_PERIOD);
	ck_assert_uint_eq(spec->root.backoff_min, DEFAULT_BACKOFF_MIN);
	ck_assert_uint_eq(spec->root.backoff_max, DEFAULT_BACKOFF_MAX);
	ck_assert_uint_eq(spec->root.min_uptime, DEFAULT_MIN_UPTIME);
	ck_assert_int_eq(spec->root.start, START_ORDERED);
	ck_assert_uint_eq(spec->root.nchildren, 0);
	ck_assert_ptr_null(spec->root.children);
	spec_free(spec);
}
END_TEST

/* A supervisor's start: ordered unless it says parallel, nested too. */
START_TEST(supervisor_start)
{
	struct actord_spec *spec;

	spec = parse_ok("supervisor = { start = \"parallel\"; children = (\n"
	    "{ name = \"s\"; supervisor = { children = (\n"
	    "{ name = \"w\"; exec = [\"/bin/true\"]; } ); }; },\n"
	    "{ name = \"t\"; supervisor = { start = \"ordered\"; "
	    "children = (); }; } ); };\n");
	ck_assert_int_eq(spec->root.start, START_PARALLEL);
	ck_assert_int_eq(spec->root.children[0].sup->start, START_ORDERED);
	ck_assert_int_eq(spec->root.children[1].sup->start, START_ORDERED);
	spec_free(spec);
}
END_TEST

START_TEST(worker_defaults)
{
	struct actord_spec	*spec;
	struct child_spec	*c;

	spec = parse_ok("supervisor = { children = (\n"
	    "{ name = \"w\"; exec = [\"/bin/true\"]; } ); };\n");
	ck_assert_uint_eq(spec->root.nchildren, 1);
	c = &spec->root.children[0];
	ck_assert_str_eq(c->name, "w");
	ck_assert_uint_eq(c->line, 2);
	ck_assert_int_eq(c->kind, CHILD_WORKER);
	ck_assert_str_eq(c->argv[0], "/bin/true");
	ck_assert_ptr_null(c->argv[1]);
	ck_assert_ptr_null(c->fn);
	ck_assert_int_eq(c->restart, DEFAULT_RESTART);
	ck_assert_int_eq(c->shutdown, DEFAULT_SHUTDOWN);
	ck_assert_uint_eq(c->start_timeout, DEFAULT_START_TIMEOUT);
	ck_assert_int_eq(c->ready, DEFAULT_READY);
	ck_assert_uint_eq(c->nenv, 0);
	ck_assert_ptr_null(c->cwd);
	ck_assert_ptr_null(c->user);
	ck_assert_ptr_null(c->group);
	ck_assert_int_eq(c->umask, -1);
	ck_assert_uint_eq(c->nlimits, 0);
	ck_assert_uint_eq(c->nsuccess_exit, 0);
	ck_assert(!c->has_mailbox);
	ck_assert_ptr_null(c->log.path);
	ck_assert_uint_eq(c->instances, 0);
	ck_assert_int_eq(c->start, START_PARALLEL);
	ck_assert_ptr_null(c->sup);
	spec_free(spec);
	spec = parse_ok("supervisor = { children = (\n"
	    "{ name = \"w\"; exec = [\"/bin/true\"]; instances = 3; "
	    "start = \"ordered\"; } ); };\n");
	ck_assert_int_eq(spec->root.children[0].start, START_ORDERED);
	spec_free(spec);
}
END_TEST

/* The example of issue 3, section 1, completed. */
static const char full_example[] =
    "runtime_dir = \"/run/actord-test\";\n"			/* 1 */
    "shutdown_timeout = 10000;\n"
    "log = { path = \"/var/log/actord/actord.log\"; max_size = 10485760; "
    "keep = 5; };\n"
    "pidfile = \"/run/actord-test/actord.pid\";\n"
    "control_group = \"wheel\";\n"				/* 5 */
    "metrics_listen = \"127.0.0.1:9100\";\n"
    "supervisor = {\n"
    "  strategy = \"rest_for_one\";\n"
    "  intensity = 5;\n"
    "  period = 10;\n"						/* 10 */
    "  backoff_min = 50;\n"
    "  backoff_max = 1000;\n"
    "  min_uptime = 5000;\n"
    "  children = (\n"
    "    { name = \"db\";\n"					/* 15 */
    "      exec = [\"/usr/bin/db\", \"--port\", \"5000\"];\n"
    "      restart = \"transient\";\n"
    "      shutdown = 5000;\n"
    "      start_timeout = 7000;\n"
    "      ready = \"sd_notify\";\n"				/* 20 */
    "      env = { PATH = \"/usr/bin:/bin\"; LANG = \"C\"; };\n"
    "      cwd = \"/srv/db\"; user = \"db\"; group = \"dbgroup\"; "
    "umask = \"027\";\n"
    "      limits = { nofile = 4096; core = 0; };\n"
    "      mailbox = { capacity = 1024; cell = 256; overflow = \"block\"; };\n"
    "      log = { path = \"/var/log/actord/db.log\"; max_size = 1048576; "
    "keep = 3; };\n"						/* 25 */
    "      success_exit = [0, 3];\n"
    "    },\n"
    "    { name = \"web\";\n"
    "      restart = \"transient\";\n"
    "      supervisor = { strategy = \"one_for_all\"; children = (\n" /* 30 */
    "        { name = \"frontend\"; exec = [\"/usr/bin/front\"]; },\n"
    "        { name = \"backend\"; exec = [\"/usr/bin/back\"]; "
    "ready = \"fd\"; }\n"
    "      ); };\n"
    "    },\n"
    "    { name = \"counter\"; exec = [\"./counter\"]; instances = 16; }\n"
    "  );\n"
    "};\n";

START_TEST(full_example_fields)
{
	struct actord_spec	*spec = parse_ok(full_example);
	struct child_spec	*db, *web, *counter;
	const struct limit_spec	*l;

	ck_assert_str_eq(spec->runtime_dir, "/run/actord-test");
	ck_assert_uint_eq(spec->shutdown_timeout, 10000);
	ck_assert_str_eq(spec->log.path, "/var/log/actord/actord.log");
	ck_assert_uint_eq(spec->log.max_size, 10485760);
	ck_assert_uint_eq(spec->log.keep, 5);
	ck_assert_str_eq(spec->pidfile, "/run/actord-test/actord.pid");
	ck_assert_str_eq(spec->control_group, "wheel");
	ck_assert_str_eq(spec->metrics_listen, "127.0.0.1:9100");
	ck_assert_int_eq(spec->root.strategy, STRATEGY_REST_FOR_ONE);
	ck_assert_uint_eq(spec->root.intensity, 5);
	ck_assert_uint_eq(spec->root.period, 10);
	ck_assert_uint_eq(spec->root.backoff_min, 50);
	ck_assert_uint_eq(spec->root.backoff_max, 1000);
	ck_assert_uint_eq(spec->root.min_uptime, 5000);
	ck_assert_uint_eq(spec->root.nchildren, 3);

	db = &spec->root.children[0];
	ck_assert_str_eq(db->name, "db");
	ck_assert_uint_eq(db->line, 15);
	ck_assert_int_eq(db->kind, CHILD_WORKER);
	ck_assert_str_eq(db->argv[0], "/usr/bin/db");
	ck_assert_str_eq(db->argv[1], "--port");
	ck_assert_str_eq(db->argv[2], "5000");
	ck_assert_ptr_null(db->argv[3]);
	ck_assert_int_eq(db->restart, RESTART_TRANSIENT);
	ck_assert_int_eq(db->shutdown, 5000);
	ck_assert_uint_eq(db->start_timeout, 7000);
	ck_assert_int_eq(db->ready, READY_SD_NOTIFY);
	ck_assert_uint_eq(db->nenv, 2);
	ck_assert_str_eq(db->env[0].name, "PATH");
	ck_assert_str_eq(db->env[0].value, "/usr/bin:/bin");
	ck_assert_str_eq(db->env[1].name, "LANG");
	ck_assert_str_eq(db->env[1].value, "C");
	ck_assert_str_eq(db->cwd, "/srv/db");
	ck_assert_str_eq(db->user, "db");
	ck_assert_str_eq(db->group, "dbgroup");
	ck_assert_int_eq(db->umask, 027);
	ck_assert_uint_eq(db->nlimits, 2);
	ck_assert_ptr_nonnull(l = find_limit(db, RLIMIT_NOFILE));
	ck_assert_uint_eq(l->value, 4096);
	ck_assert_ptr_nonnull(l = find_limit(db, RLIMIT_CORE));
	ck_assert_uint_eq(l->value, 0);
	ck_assert(db->has_mailbox);
	ck_assert_uint_eq(db->mailbox.capacity, 1024);
	ck_assert_uint_eq(db->mailbox.cell, 256);
	ck_assert_int_eq(db->mailbox.overflow, OVERFLOW_BLOCK);
	ck_assert_uint_eq(db->mailbox.block_timeout, DEFAULT_BLOCK_TIMEOUT);
	ck_assert_uint_eq(db->mailbox.max_attempts, DEFAULT_MAX_ATTEMPTS);
	ck_assert_int_eq(db->mailbox.on_down, DEFAULT_ON_DOWN);
	ck_assert_int_eq(db->mailbox.while_down, DEFAULT_WHILE_DOWN);
	ck_assert_uint_eq(db->mailbox.state, DEFAULT_MAILBOX_STATE);
	ck_assert_str_eq(db->log.path, "/var/log/actord/db.log");
	ck_assert_uint_eq(db->log.max_size, 1048576);
	ck_assert_uint_eq(db->log.keep, 3);
	ck_assert_uint_eq(db->nsuccess_exit, 2);
	ck_assert_int_eq(db->success_exit[0], 0);
	ck_assert_int_eq(db->success_exit[1], 3);
	ck_assert_uint_eq(db->instances, 0);

	web = &spec->root.children[1];
	ck_assert_str_eq(web->name, "web");
	ck_assert_uint_eq(web->line, 28);
	ck_assert_int_eq(web->kind, CHILD_SUPERVISOR);
	ck_assert_int_eq(web->restart, RESTART_TRANSIENT);
	ck_assert_ptr_null(web->argv);
	ck_assert_ptr_nonnull(web->sup);
	ck_assert_int_eq(web->sup->strategy, STRATEGY_ONE_FOR_ALL);
	ck_assert_uint_eq(web->sup->intensity, DEFAULT_INTENSITY);
	ck_assert_uint_eq(web->sup->period, DEFAULT_PERIOD);
	ck_assert_uint_eq(web->sup->backoff_min, DEFAULT_BACKOFF_MIN);
	ck_assert_uint_eq(web->sup->nchildren, 2);
	ck_assert_str_eq(web->sup->children[0].name, "frontend");
	ck_assert_uint_eq(web->sup->children[0].line, 31);
	ck_assert_str_eq(web->sup->children[0].argv[0], "/usr/bin/front");
	ck_assert_str_eq(web->sup->children[1].name, "backend");
	ck_assert_int_eq(web->sup->children[1].ready, READY_FD);
	ck_assert(!web->sup->children[1].has_mailbox);

	counter = &spec->root.children[2];
	ck_assert_str_eq(counter->name, "counter");
	ck_assert_int_eq(counter->kind, CHILD_WORKER);
	ck_assert_str_eq(counter->argv[0], "./counter");
	ck_assert_uint_eq(counter->instances, 16);
	spec_free(spec);
}
END_TEST

START_TEST(shutdown_limits_and_big_numbers)
{
	static const char	 conf[] =
	    "log = { path = \"/tmp/big.log\"; max_size = 5000000000; };\n"
	    "supervisor = { children = (\n"
	    "  { name = \"a\"; exec = [\"/bin/true\"]; shutdown = \"brutal_kill\";\n"
	    "    limits = { as = 5000000000; nofile = \"infinity\"; cpu = 0x10;\n"
	    "               fsize = 0xFFFFFFFF; stack = 8388608L; }; },\n"
	    "  { name = \"b\"; exec = [\"/bin/true\"]; shutdown = \"infinity\"; },\n"
	    "  { name = \"c\"; exec = [\"/bin/true\"]; shutdown = 0;\n"
	    "    limits = { nproc = 10; memlock = 65536; data = 1; core = 0; }; }\n"
	    ");\n};\n";
	struct actord_spec	*spec;
	struct child_spec	*c;
	const struct limit_spec	*l;

	spec = parse_ok(conf);
	ck_assert_uint_eq(spec->log.max_size, 5000000000ULL);
	ck_assert_uint_eq(spec->spare_mailboxes, DEFAULT_SPARE_MAILBOXES);
	spec_free(spec);
	spec = parse_ok("spare_mailboxes = 0;\n");
	ck_assert_uint_eq(spec->spare_mailboxes, 0);
	spec_free(spec);
	spec = parse_ok("spare_mailboxes = 4096;\n");
	ck_assert_uint_eq(spec->spare_mailboxes, 4096);
	spec_free(spec);
	spec = parse_ok(conf);
	c = &spec->root.children[0];
	ck_assert_int_eq(c->shutdown, SHUTDOWN_BRUTAL_KILL);
	ck_assert_uint_eq(c->nlimits, 5);
	ck_assert_ptr_nonnull(l = find_limit(c, RLIMIT_AS));
	ck_assert_uint_eq(l->value, 5000000000ULL);
	ck_assert_ptr_nonnull(l = find_limit(c, RLIMIT_NOFILE));
	ck_assert(l->value == RLIM_INFINITY);
	ck_assert_ptr_nonnull(l = find_limit(c, RLIMIT_CPU));
	ck_assert_uint_eq(l->value, 16);
	ck_assert_ptr_nonnull(l = find_limit(c, RLIMIT_FSIZE));
	ck_assert_uint_eq(l->value, 0xFFFFFFFFULL);
	ck_assert_ptr_nonnull(l = find_limit(c, RLIMIT_STACK));
	ck_assert_uint_eq(l->value, 8388608);
	ck_assert_int_eq(spec->root.children[1].shutdown, SHUTDOWN_INFINITY);
	c = &spec->root.children[2];
	ck_assert_int_eq(c->shutdown, 0);
	ck_assert_uint_eq(c->nlimits, 4);
	ck_assert_ptr_nonnull(find_limit(c, RLIMIT_NPROC));
	ck_assert_ptr_nonnull(find_limit(c, RLIMIT_MEMLOCK));
	ck_assert_ptr_nonnull(find_limit(c, RLIMIT_DATA));
	ck_assert_ptr_nonnull(l = find_limit(c, RLIMIT_CORE));
	ck_assert_uint_eq(l->value, 0);
	spec_free(spec);
}
END_TEST

START_TEST(mailbox_keys)
{
	struct actord_spec	*spec;
	struct child_spec	*c;

	spec = parse_ok("supervisor = { children = (\n"
	    "  { name = \"m\"; exec = [\"/bin/true\"];\n"
	    "    mailbox = { capacity = 2; cell = 65536;\n"
	    "      overflow = \"drop_oldest\"; block_timeout = 0;\n"
	    "      max_attempts = 7; on_down = \"fail\";\n"
	    "      while_down = \"reject\"; state = 65536;\n"
	    "      watchers = 1000; asks = 300; max_message = 1048576; }; },\n"
	    "  { name = \"n\"; exec = [\"/bin/true\"];\n"
	    "    mailbox = { overflow = \"drop_newest\"; cell = 64; }; },\n"
	    "  { name = \"actor\"; exec = [\"/bin/true\"]; ready = \"actor\"; },\n"
	    "  { name = \"o\"; exec = [\"/bin/true\"];\n"
	    "    mailbox = { overflow = \"coalesce\"; }; }\n"
	    ");\n};\n");
	ck_assert_int_eq(spec->root.children[3].mailbox.overflow,
	    OVERFLOW_COALESCE);
	c = &spec->root.children[0];
	ck_assert(c->has_mailbox);
	ck_assert_uint_eq(c->mailbox.capacity, 2);
	ck_assert_uint_eq(c->mailbox.cell, 65536);
	ck_assert_int_eq(c->mailbox.overflow, OVERFLOW_DROP_OLDEST);
	ck_assert_uint_eq(c->mailbox.block_timeout, 0);
	ck_assert_uint_eq(c->mailbox.max_attempts, 7);
	ck_assert_int_eq(c->mailbox.on_down, ON_DOWN_FAIL);
	ck_assert_int_eq(c->mailbox.while_down, WHILE_DOWN_REJECT);
	ck_assert_uint_eq(c->mailbox.state, 65536);
	ck_assert_uint_eq(c->mailbox.watchers, 1000);
	ck_assert_uint_eq(c->mailbox.asks, 300);
	ck_assert_uint_eq(c->mailbox.max_message, 1048576);

	c = &spec->root.children[1];
	ck_assert(c->has_mailbox);
	ck_assert_int_eq(c->mailbox.overflow, OVERFLOW_DROP_NEWEST);
	ck_assert_uint_eq(c->mailbox.cell, 64);
	ck_assert_uint_eq(c->mailbox.capacity, DEFAULT_MAILBOX_CAPACITY);

	/* ready = actor implies a mailbox, with every default. */
	c = &spec->root.children[2];
	ck_assert_int_eq(c->ready, READY_ACTOR);
	ck_assert(c->has_mailbox);
	ck_assert_uint_eq(c->mailbox.capacity, DEFAULT_MAILBOX_CAPACITY);
	ck_assert_uint_eq(c->mailbox.cell, DEFAULT_MAILBOX_CELL);
	ck_assert_int_eq(c->mailbox.overflow, DEFAULT_MAILBOX_OVERFLOW);
	ck_assert_uint_eq(c->mailbox.block_timeout, DEFAULT_BLOCK_TIMEOUT);
	ck_assert_uint_eq(c->mailbox.max_attempts, DEFAULT_MAX_ATTEMPTS);
	ck_assert_uint_eq(c->mailbox.watchers, DEFAULT_WATCHERS);
	ck_assert_uint_eq(c->mailbox.asks, DEFAULT_ASKS);
	ck_assert_uint_eq(c->mailbox.max_message, 65536);
	spec_free(spec);
}
END_TEST

/* Strings, comments and names with digits are left alone by the pass
 * that widens integers, and lists and arrays both work for exec. */
START_TEST(lexical_corners)
{
	struct actord_spec	*spec;
	struct child_spec	*c;

	spec = parse_ok(
	    "/* 5000000000 in a comment */ # and 6000000000 here\n"
	    "// 7000000000\n"
	    "supervisor = { children = [] ; };\n"
	    "shutdown_timeout = 0x10;\n");
	ck_assert_uint_eq(spec->root.nchildren, 0);
	ck_assert_uint_eq(spec->shutdown_timeout, 16);
	spec_free(spec);

	spec = parse_ok("supervisor = { children = (\n"
	    "  { name = \"web2\"; exec = (\"/bin/echo\", \"5000000000\",\n"
	    "    \"// not a comment\", \"a\\\"b\", \"-1e5\"); } ); };\n");
	c = &spec->root.children[0];
	ck_assert_str_eq(c->name, "web2");
	ck_assert_str_eq(c->argv[1], "5000000000");
	ck_assert_str_eq(c->argv[2], "// not a comment");
	ck_assert_str_eq(c->argv[3], "a\"b");
	ck_assert_str_eq(c->argv[4], "-1e5");
	ck_assert_ptr_null(c->argv[5]);
	spec_free(spec);
}
END_TEST

START_TEST(supervisor_nodes)
{
	struct actord_spec	*spec;
	struct child_spec	*c;

	spec = parse_ok("supervisor = { children = (\n"
	    "  { name = \"a\"; restart = \"temporary\"; supervisor = {\n"
	    "      strategy = \"rest_for_one\"; intensity = 0; period = 1;\n"
	    "      backoff_min = 0; backoff_max = 0; min_uptime = 0;\n"
	    "      children = ( { name = \"b\"; supervisor = { children = (\n"
	    "        { name = \"c\"; exec = [\"/bin/true\"]; } ); }; } );\n"
	    "  }; }\n"
	    "); };\n");
	c = &spec->root.children[0];
	ck_assert_int_eq(c->kind, CHILD_SUPERVISOR);
	ck_assert_int_eq(c->restart, RESTART_TEMPORARY);
	ck_assert_int_eq(c->sup->strategy, STRATEGY_REST_FOR_ONE);
	ck_assert_uint_eq(c->sup->intensity, 0);
	ck_assert_uint_eq(c->sup->period, 1);
	ck_assert_uint_eq(c->sup->backoff_min, 0);
	ck_assert_uint_eq(c->sup->backoff_max, 0);
	ck_assert_uint_eq(c->sup->min_uptime, 0);
	ck_assert_uint_eq(c->sup->nchildren, 1);
	c = &c->sup->children[0];
	ck_assert_str_eq(c->name, "b");
	ck_assert_int_eq(c->kind, CHILD_SUPERVISOR);
	ck_assert_uint_eq(c->sup->nchildren, 1);
	ck_assert_str_eq(c->sup->children[0].name, "c");
	ck_assert_str_eq(c->sup->children[0].argv[0], "/bin/true");
	/* A supervisor with no children at all is allowed. */
	spec_free(spec);
	spec = parse_ok("supervisor = { children = (\n"
	    "  { name = \"empty\"; supervisor = { }; } ); };\n");
	ck_assert_int_eq(spec->root.children[0].kind, CHILD_SUPERVISOR);
	ck_assert_uint_eq(spec->root.children[0].sup->nchildren, 0);
	spec_free(spec);
}
END_TEST

START_TEST(error_buffer_edges)
{
	char err[16];

	/* A small buffer is filled and terminated; NULL is allowed. */
	ck_assert_ptr_null(config_parse_string("colour = 1;", "t.conf", err,
	    sizeof(err)));
	ck_assert_str_eq(err, "t.conf:1: colou");
	ck_assert_ptr_null(config_parse_string("colour = 1;", "t.conf", NULL,
	    0));
}
END_TEST

/* A child of the full example, and a fresh copy of it to mutate. */
static struct actord_spec *
copy_of(size_t i, struct child_spec *copy)
{
	struct actord_spec *spec = parse_ok(full_example);

	ck_assert_int_eq(spec_child_copy(copy, &spec->root.children[i]), 0);
	ck_assert(spec_child_equal(copy, &spec->root.children[i]));
	return spec;
}

START_TEST(copy_is_deep)
{
	struct actord_spec	*spec;
	struct child_spec	 copy, *db;
	size_t			 i;

	spec = copy_of(0, &copy);
	db = &spec->root.children[0];
	ck_assert_ptr_ne(copy.name, db->name);
	ck_assert_ptr_ne(copy.argv, db->argv);
	for (i = 0; db->argv[i] != NULL; i++)
		ck_assert_ptr_ne(copy.argv[i], db->argv[i]);
	ck_assert_ptr_ne(copy.env, db->env);
	ck_assert_ptr_ne(copy.env[0].value, db->env[0].value);
	ck_assert_ptr_ne(copy.limits, db->limits);
	ck_assert_ptr_ne(copy.success_exit, db->success_exit);
	ck_assert_ptr_ne(copy.log.path, db->log.path);
	ck_assert_uint_eq(copy.line, db->line);
	/* The original can go first: the copy owns all its memory. */
	spec_free(spec);
	ck_assert_str_eq(copy.argv[2], "5000");
	ck_assert_str_eq(copy.env[1].value, "C");
	spec_child_clear(&copy);
	ck_assert_ptr_null(copy.name);
	ck_assert_ptr_null(copy.argv);
	spec_child_clear(&copy);	/* twice is harmless */

	spec = copy_of(1, &copy);
	ck_assert_ptr_ne(copy.sup, spec->root.children[1].sup);
	ck_assert_ptr_ne(copy.sup->children,
	    spec->root.children[1].sup->children);
	ck_assert_ptr_ne(copy.sup->children[0].argv[0],
	    spec->root.children[1].sup->children[0].argv[0]);
	spec_free(spec);
	ck_assert_str_eq(copy.sup->children[1].name, "backend");
	spec_child_clear(&copy);
	ck_assert_ptr_null(copy.sup);
}
END_TEST

/* Each mutation of a copy of /db must make it unequal. */
enum mutation {
	M_NAME, M_ARGV, M_ARGV_LONGER, M_RESTART, M_SHUTDOWN, M_START_TIMEOUT,
	M_READY, M_ENV_VALUE, M_ENV_FEWER, M_CWD, M_CWD_NULL, M_USER, M_GROUP,
	M_UMASK, M_LIMIT, M_LIMIT_RESOURCE, M_SUCCESS, M_MAILBOX,
	M_HAS_MAILBOX, M_LOG_PATH, M_LOG_KEEP, M_INSTANCES, M_FN, M_KIND,
	M_NMUTATIONS
};

START_TEST(equal_sees_each_change)
{
	struct actord_spec	*spec;
	struct child_spec	 copy;
	char			*s;

	spec = copy_of(0, &copy);
	switch (_i) {
	case M_NAME:
		copy.name[0] = 'x';
		break;
	case M_ARGV:
		copy.argv[2][0] = '6';
		break;
	case M_ARGV_LONGER:
		s = copy.argv[2];
		copy.argv[2] = NULL;	/* shorter, then restored below */
		ck_assert(!spec_child_equal(&copy, &spec->root.children[0]));
		copy.argv[2] = s;
		free(copy.argv[1]);
		copy.argv[1] = strdup("--Port");
		break;
	case M_RESTART:
		copy.restart = RESTART_PERMANENT;
		break;
	case M_SHUTDOWN:
		copy.shutdown = SHUTDOWN_BRUTAL_KILL;
		break;
	case M_START_TIMEOUT:
		copy.start_timeout++;
		break;
	case M_READY:
		copy.ready = READY_EXEC;
		break;
	case M_ENV_VALUE:
		copy.env[1].value[0] = 'D';
		break;
	case M_ENV_FEWER:
		copy.nenv = 1;		/* restored before clear */
		ck_assert(!spec_child_equal(&copy, &spec->root.children[0]));
		ck_assert(!spec_child_equal(&spec->root.children[0], &copy));
		copy.nenv = 2;
		copy.env[0].name[0] = 'Q';
		break;
	case M_CWD:
		copy.cwd[1] = 'x';
		break;
	case M_CWD_NULL:
		free(copy.cwd);
		copy.cwd = NULL;
		break;
	case M_USER:
		copy.user[0] = 'x';
		break;
	case M_GROUP:
		copy.group[0] = 'x';
		break;
	case M_UMASK:
		copy.umask = 022;
		break;
	case M_LIMIT:
		copy.limits[0].value = 4095;
		break;
	case M_LIMIT_RESOURCE:
		copy.limits[1].resource = RLIMIT_STACK;
		break;
	case M_SUCCESS:
		copy.success_exit[1] = 4;
		break;
	case M_MAILBOX:
		copy.mailbox.capacity = 2048;
		break;
	case M_HAS_MAILBOX:
		copy.has_mailbox = false;
		break;
	case M_LOG_PATH:
		copy.log.path[1] = 'x';
		break;
	case M_LOG_KEEP:
		copy.log.keep = 4;
		break;
	case M_INSTANCES:
		copy.instances = 2;
		break;
	case M_FN:
		copy.fn_arg = &copy;
		break;
	case M_KIND:
		copy.kind = CHILD_SUPERVISOR;
		break;
	}
	ck_assert_msg(!spec_child_equal(&copy, &spec->root.children[0]),
	    "mutation %d not seen", _i);
	ck_assert_msg(!spec_child_equal(&spec->root.children[0], &copy),
	    "mutation %d not seen (reversed)", _i);
	spec_child_clear(&copy);
	spec_free(spec);
}
END_TEST

START_TEST(equal_ignores_order_and_line)
{
	struct actord_spec	*a, *b;
	struct child_spec	*ca, *cb;

	a = parse_ok("supervisor = { children = (\n"
	    "{ name = \"w\"; exec = [\"/bin/true\"]; env = { A = \"1\"; "
	    "B = \"2\"; }; limits = { nofile = 10; core = 0; }; "
	    "success_exit = [0, 3]; } ); };\n");
	b = parse_ok("\n\n\nsupervisor = { children = (\n"
	    "{ success_exit = [3, 0]; limits = { core = 0; nofile = 10; };\n"
	    "  env = { B = \"2\"; A = \"1\"; };\n"
	    "  exec = [\"/bin/true\"]; name = \"w\"; } ); };\n");
	ca = &a->root.children[0];
	cb = &b->root.children[0];
	ck_assert_uint_ne(ca->line, cb->line);
	ck_assert(spec_child_equal(ca, cb));
	ck_assert(spec_child_equal(cb, ca));
	spec_free(a);
	spec_free(b);
}
END_TEST

/* What reload needs: a nested change is seen at the supervisor node, and
 * only there. */
START_TEST(equal_recurses_into_supervisors)
{
	struct actord_spec	*a, *b;
	char			*text;
	const char		*at;

	a = parse_ok(full_example);
	text = strdup(full_example);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(at = strstr(text, "/usr/bin/back"));
	text[at - text + 9] = 'B';		/* /usr/bin/Back */
	b = parse_ok(text);
	ck_assert(spec_child_equal(&a->root.children[0],
	    &b->root.children[0]));
	ck_assert(!spec_child_equal(&a->root.children[1],
	    &b->root.children[1]));
	ck_assert(spec_child_equal(&a->root.children[1].sup->children[0],
	    &b->root.children[1].sup->children[0]));
	ck_assert(spec_child_equal(&a->root.children[2],
	    &b->root.children[2]));
	spec_free(b);

	/* The nested supervisor's own settings count too. */
	ck_assert_ptr_nonnull(at = strstr(text, "one_for_all"));
	memcpy(text + (at - text), "one_for_one", 11);
	ck_assert_ptr_nonnull(at = strstr(text, "/usr/bin/Back"));
	text[at - text + 9] = 'b';
	b = parse_ok(text);
	ck_assert(!spec_child_equal(&a->root.children[1],
	    &b->root.children[1]));
	ck_assert(spec_child_equal(&a->root.children[1].sup->children[1],
	    &b->root.children[1].sup->children[1]));
	spec_free(b);
	free(text);
	spec_free(a);
}
END_TEST

START_TEST(init_and_free)
{
	struct child_spec	c;
	struct sup_spec		sup;
	struct actord_spec	*spec;

	memset(&c, 0xa5, sizeof(c));
	spec_child_init(&c);
	ck_assert_ptr_null(c.name);
	ck_assert_ptr_null(c.argv);
	ck_assert_ptr_null(c.sup);
	ck_assert_int_eq(c.kind, CHILD_WORKER);
	ck_assert_int_eq(c.umask, -1);
	ck_assert_uint_eq(c.mailbox.capacity, DEFAULT_MAILBOX_CAPACITY);
	ck_assert_uint_eq(c.log.keep, DEFAULT_LOG_KEEP);
	spec_child_clear(&c);

	memset(&sup, 0xa5, sizeof(sup));
	spec_sup_init(&sup);
	ck_assert_uint_eq(sup.nchildren, 0);
	ck_assert_ptr_null(sup.children);
	ck_assert_uint_eq(sup.intensity, DEFAULT_INTENSITY);

	spec = spec_new();
	ck_assert_ptr_nonnull(spec);
	ck_assert_str_eq(spec->runtime_dir, spec_default_runtime_dir());
	ck_assert_uint_eq(spec->shutdown_timeout, DEFAULT_SHUTDOWN_TIMEOUT);
	spec_free(spec);
	spec_free(NULL);
}
END_TEST

/* A function child, built in C, copies and compares like the others. */
static int
child_main(void *arg)
{
	return arg != NULL;
}

START_TEST(function_child)
{
	struct child_spec	c, copy;
	int			arg;

	spec_child_init(&c);
	c.name = strdup("fn");
	c.fn = child_main;
	c.fn_arg = &arg;
	ck_assert_int_eq(spec_child_copy(&copy, &c), 0);
	ck_assert_ptr_null(copy.argv);
	ck_assert(copy.fn == child_main);
	ck_assert_ptr_eq(copy.fn_arg, &arg);
	ck_assert(spec_child_equal(&c, &copy));
	copy.fn_arg = NULL;
	ck_assert(!spec_child_equal(&c, &copy));
	spec_child_clear(&copy);
	spec_child_clear(&c);
}
END_TEST

/* Reads spec_default_runtime_dir() as uid 65534, in a forked child. */
static void
runtime_dir_as_nobody(const char *xdg, char *out, size_t len)
{
	int	fds[2], status;
	pid_t	pid;
	ssize_t	n;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		const char *dir;

		if (xdg != NULL)
			setenv("XDG_RUNTIME_DIR", xdg, 1);
		else
			unsetenv("XDG_RUNTIME_DIR");
		if (setgid(65534) == -1 || setuid(65534) == -1)
			_exit(2);
		dir = spec_default_runtime_dir();
		if (write(fds[1], dir, strlen(dir)) == -1)
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], out, len - 1);
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "child status %d", status);
	ck_assert_int_gt(n, 0);
	out[n] = '\0';
}

START_TEST(default_runtime_dir)
{
	char dir[256], want[256];

	if (geteuid() != 0) {
		setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
		ck_assert_str_eq(spec_default_runtime_dir(),
		    "/run/user/4242/actord");
		unsetenv("XDG_RUNTIME_DIR");
		snprintf(want, sizeof(want), "/tmp/actord-%u",
		    (unsigned)geteuid());
		ck_assert_str_eq(spec_default_runtime_dir(), want);
		return;
	}
	ck_assert_str_eq(spec_default_runtime_dir(), "/run/actord");
	runtime_dir_as_nobody("/run/user/65534", dir, sizeof(dir));
	ck_assert_str_eq(dir, "/run/user/65534/actord");
	runtime_dir_as_nobody(NULL, dir, sizeof(dir));
	ck_assert_str_eq(dir, "/tmp/actord-65534");
	/* Relative, or too long for a socket path: not used. */
	runtime_dir_as_nobody("run/user", dir, sizeof(dir));
	ck_assert_str_eq(dir, "/tmp/actord-65534");
	runtime_dir_as_nobody("/" NAME64 NAME64, dir, sizeof(dir));
	ck_assert_str_eq(dir, "/tmp/actord-65534");
}
END_TEST

/* A scratch directory of this test process, removed by the caller. */
static void
scratch_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/check_config.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fputs(text, fp) >= 0, 1);
	ck_assert_int_eq(fclose(fp), 0);
}

START_TEST(load_files)
{
	struct actord_spec	*spec;
	char			 dir[64], path[128], want[256], err[ERRLEN];

	scratch_dir(dir, sizeof(dir));

	snprintf(path, sizeof(path), "%s/nope.conf", dir);
	ck_assert_ptr_null(config_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);

	ck_assert_ptr_null(config_load(dir, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: Is a directory", dir);
	ck_assert_str_eq(err, want);

	snprintf(path, sizeof(path), "%s/good.conf", dir);
	write_file(path, full_example);
	spec = config_load(path, err, sizeof(err));
	ck_assert_msg(spec != NULL, "%s", err);
	ck_assert_str_eq(spec->file, path);
	ck_assert_uint_eq(spec->root.nchildren, 3);
	spec_free(spec);

	/* Errors name the file as it was given. */
	snprintf(path, sizeof(path), "%s/bad.conf", dir);
	write_file(path, bad_configs[0].text);
	ck_assert_ptr_null(config_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s%s", dir, "/bad.conf:5: "
	    "supervisor.children[1].restart: expected permanent, transient or "
	    "temporary, got \"permanant\"");
	ck_assert_str_eq(err, want);
	unlink(path);

	snprintf(path, sizeof(path), "%s/nul.conf", dir);
	write_file(path, "a");
	{
		FILE *fp = fopen(path, "a");

		ck_assert_ptr_nonnull(fp);
		ck_assert_int_eq(fputc('\0', fp), 0);
		fclose(fp);
	}
	ck_assert_ptr_null(config_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: not a text file (it holds a NUL "
	    "byte)", path);
	ck_assert_str_eq(err, want);
	unlink(path);

	/* A comment one byte longer than the limit. */
	snprintf(path, sizeof(path), "%s/big.conf", dir);
	{
		char *big = malloc(1024 * 1024 + 2);

		ck_assert_ptr_nonnull(big);
		memset(big, '#', 1024 * 1024 + 1);
		big[1024 * 1024 + 1] = '\0';
		write_file(path, big);
		free(big);
	}
	ck_assert_ptr_null(config_load(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	ck_assert_str_eq(err, want);
	unlink(path);

	snprintf(path, sizeof(path), "%s/good.conf", dir);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/*
 * examples/demo.conf is what `make run` starts: it must parse, keep its
 * shape, leave runtime_dir to the default and run only programs that
 * exist here.
 */
static void
check_programs(const struct sup_spec *sup)
{
	size_t i;

	for (i = 0; i < sup->nchildren; i++) {
		if (sup->children[i].sup != NULL) {
			check_programs(sup->children[i].sup);
			continue;
		}
		const char *prog = sup->children[i].argv[0];
		char built[512];

		/* build/examples/...: what make built, in this BUILD dir. */
		if (strncmp(prog, "build/", 6) == 0 && getenv("ACTORD_BUILD")
		    != NULL) {
			snprintf(built, sizeof(built), "%s/%s",
			    getenv("ACTORD_BUILD"), prog + 6);
			prog = built;
		}
		ck_assert_msg(access(prog, X_OK) == 0, "%s: %s", prog,
		    strerror(errno));
	}
}

START_TEST(demo_conf)
{
	struct actord_spec	*spec;
	const char		*top = getenv("ACTORD_SRCDIR");
	char			 path[512], err[ERRLEN];
	const struct child_spec	*c;

	snprintf(path, sizeof(path), "%s/examples/demo.conf",
	    top != NULL ? top : ".");
	spec = config_load(path, err, sizeof(err));
	ck_assert_msg(spec != NULL, "%s", err);
	ck_assert_str_eq(spec->runtime_dir, spec_default_runtime_dir());
	ck_assert_uint_eq(spec->root.nchildren, 5);
	ck_assert_str_eq(spec->root.children[0].name, "web");
	c = &spec->root.children[1];
	ck_assert_str_eq(c->name, "pair");
	ck_assert_int_eq(c->sup->strategy, STRATEGY_ONE_FOR_ALL);
	ck_assert_uint_eq(c->sup->nchildren, 2);
	ck_assert_str_eq(spec->root.children[2].name, "flaky");
	c = &spec->root.children[3];
	ck_assert_str_eq(c->name, "fragile");
	ck_assert_int_eq(c->kind, CHILD_SUPERVISOR);
	ck_assert_uint_lt(c->sup->intensity, spec->root.intensity);
	c = &spec->root.children[4];
	ck_assert_str_eq(c->name, "counter");
	ck_assert_uint_eq(c->instances, 2);
	ck_assert_int_eq(c->ready, READY_ACTOR);
	check_programs(&spec->root);
	spec_free(spec);
}
END_TEST

/*
 * The first literal block of man/actord.conf.5 is its full example: it
 * must parse, and with "permanent" misspelt give the error shown there.
 */
START_TEST(man_example)
{
	struct actord_spec	*spec;
	const char		*top = getenv("ACTORD_SRCDIR");
	char			 path[512], err[ERRLEN], line[512], *at;
	char			 text[8192];
	size_t			 len = 0;
	bool			 in = false;
	FILE			*fp;

	snprintf(path, sizeof(path), "%s/man/actord.conf.5",
	    top != NULL ? top : ".");
	fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
	text[0] = '\0';
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (!in && strncmp(line, ".Bd -literal", 12) == 0) {
			in = true;
			continue;
		}
		if (in && strncmp(line, ".Ed", 3) == 0)
			break;
		if (in) {
			ck_assert_uint_lt(len + strlen(line), sizeof(text));
			memcpy(text + len, line, strlen(line) + 1);
			len += strlen(line);
		}
	}
	fclose(fp);
	ck_assert_uint_gt(len, 0);
	spec = config_parse_string(text, "/etc/actord.conf", err, sizeof(err));
	ck_assert_msg(spec != NULL, "%s", err);
	ck_assert_uint_eq(spec->root.nchildren, 3);
	ck_assert_uint_eq(spec->root.children[2].instances, 16);
	spec_free(spec);

	ck_assert_ptr_nonnull(at = strstr(text, "\"permanent\""));
	memcpy(at, "\"permanant", 10);
	ck_assert_ptr_null(config_parse_string(text, "/etc/actord.conf", err,
	    sizeof(err)));
	ck_assert_str_eq(err, "/etc/actord.conf:16: "
	    "supervisor.children[0].restart: expected permanent, transient or "
	    "temporary, got \"permanant\"");
}
END_TEST

static Suite *
config_suite(void)
{
	Suite	*s = suite_create("config");
	TCase	*tc;

	tc = tcase_create("bad");
	tcase_set_timeout(tc, 10);
	tcase_add_loop_test(tc, bad_config, 0,
	    sizeof(bad_configs) / sizeof(bad_configs[0]));
	tcase_add_test(tc, bad_config_count);
	tcase_add_test(tc, error_buffer_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("good");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, worker_defaults);
	tcase_add_test(tc, supervisor_start);
	tcase_add_test(tc, full_example_fields);
	tcase_add_test(tc, shutdown_limits_and_big_numbers);
	tcase_add_test(tc, mailbox_keys);
	tcase_add_test(tc, lexical_corners);
	tcase_add_test(tc, supervisor_nodes);
	tcase_add_test(tc, load_files);
	tcase_add_test(tc, demo_conf);
	tcase_add_test(tc, man_example);
	suite_add_tcase(s, tc);

	tc = tcase_create("spec");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, init_and_free);
	tcase_add_test(tc, copy_is_deep);
	tcase_add_loop_test(tc, equal_sees_each_change, 0, M_NMUTATIONS);
	tcase_add_test(tc, equal_ignores_order_and_line);
	tcase_add_test(tc, equal_recurses_into_supervisors);
	tcase_add_test(tc, function_child);
	tcase_add_test(tc, default_runtime_dir);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(config_suite());
}
