/*
 * actorctl_main.c: actorctl's thin main: the global options (-S SOCKET,
 * --json), then the command table in actorctl_cmds.c does the rest.
 * See actorctl(8).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tools/actorctl.h"

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct actorctl	 a;
	char		 defsock[CTL_PATH_MAX];
	int		 ch, rc;

	memset(&a, 0, sizeof(a));
	a.fd = -1;
	opterr = 0;	/* our messages name the program "actorctl" */
	while ((ch = getopt_long(argc, argv, "+:S:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'S':
			a.socket = optarg;
			break;
		case 'J':
			a.json = true;
			break;
		case 'h':
			actorctl_usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "actorctl: %s needs a value\n",
			    argv[optind - 1]);
			actorctl_usage(stderr);
			return ACTORCTL_EXIT_USAGE;
		default:
			fprintf(stderr, "actorctl: unknown option %s\n",
			    argv[optind - 1]);
			actorctl_usage(stderr);
			return ACTORCTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		actorctl_usage(stderr);
		return ACTORCTL_EXIT_USAGE;
	}
	if (a.socket == NULL) {
		if (ctl_default_socket(defsock, sizeof(defsock)) == -1) {
			fprintf(stderr, "actorctl: default socket path too "
			    "long; use -S\n");
			return ACTORCTL_EXIT_USAGE;
		}
		a.socket = defsock;
	}
	rc = actorctl_run(&a, argc - optind, argv + optind);
	actorctl_disconnect(&a);
	return rc;
}
