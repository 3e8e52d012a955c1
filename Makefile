# actord — the build.
#
# One Makefile for the whole tree; sources are found by directory so a new
# file needs no edit here.  Objects go to $(BUILD) (build/ or build/san/ when
# SAN=1), with -MMD dependency files so a changed header rebuilds exactly what
# includes it.  Targets: all (default), check, bench, bench-scale,
# bench-seeds, fuzz, run,
# install, clean.  Missing Debian packages are installed by tools/install-deps
# before anything is compiled.

PREFIX	?= /usr/local
DESTDIR	?=
BINDIR	 = $(PREFIX)/bin
SBINDIR	 = $(PREFIX)/sbin
LIBDIR	 = $(PREFIX)/lib
INCDIR	 = $(PREFIX)/include
MANDIR	 = $(PREFIX)/share/man
PCDIR	 = $(LIBDIR)/pkgconfig
# Where bash-completion looks for a command's completion: under every
# directory of XDG_DATA_DIRS (by default /usr/local/share and /usr/share).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
VERSION	 = 0.1.0
SOVER	 = 0

CC	?= cc
PKGS	 = libzmq libsodium check libconfig

# Install what is missing before the first compile, but never for 'clean'.
ifneq ($(filter-out clean distclean,$(or $(MAKECMDGOALS),all)),)
ifneq ($(shell pkg-config --exists $(PKGS) 2>/dev/null && command -v mandoc >/dev/null && echo ok),ok)
$(info actord: some build dependencies are missing; running tools/install-deps)
DEPS_OUT := $(shell tools/install-deps 1>&2; echo $$?)
ifneq ($(DEPS_OUT),0)
$(error tools/install-deps failed; install the packages it names and retry)
endif
endif
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
ZMQ_LIBS   := $(shell pkg-config --libs libzmq libsodium 2>/dev/null)
CONF_LIBS  := $(shell pkg-config --libs libconfig 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN	 = -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes \
	   -Wshadow -Wpointer-arith -Wcast-qual
ifeq ($(SAN),1)
BUILD	?= build/san
OPT	 = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	   -fno-sanitize-recover=undefined
LDSAN	 = -fsanitize=address,undefined
else
BUILD	?= build
OPT	 = -O2 -g
LDSAN	 =
endif
CFLAGS	+= -std=gnu11 $(OPT) $(WARN) -fPIC -D_GNU_SOURCE -I. $(PKG_CFLAGS)
DEPFLAGS = -MMD -MP
LDFLAGS	+= $(LDSAN)

# libactor is built for link-time optimization with gcc (not under SAN=1):
# a message's path crosses shm/ and worker/ files a dozen times per round
# trip, and inlining across them takes about a tenth off an ask's CPU cost.
# The objects are fat (regular code too), so a link without -flto (the
# tests) still works; the shared library, actord, the examples and the
# benchmarks are linked with it.  -fno-semantic-interposition lets the
# shared library call itself directly instead of through its PLT.
CC_IS_GCC := $(shell $(CC) -v 2>&1 | grep -q '^gcc version' && echo yes)
ifeq ($(SAN)$(CC_IS_GCC),yes)
LIB_CFLAGS = -flto=auto -ffat-lto-objects -fno-semantic-interposition
LTO_LINK   = -flto=auto
AR	   = gcc-ar
else
LIB_CFLAGS =
LTO_LINK   =
AR	   = ar
endif
LDLIBS	 = $(CONF_LIBS) $(ZMQ_LIBS) -lpthread -lm

# --- sources, found by directory ---------------------------------------------
# The control protocol's codec and client side are libactor's too: its
# client API (worker/client_local.c) speaks it; actord and actorctl get
# them from libactor.a.
CTLP_SRC  := supervisor/ctlproto.c supervisor/ctlclient.c
SHM_SRC	  := $(sort $(wildcard shm/*.c))
ACTOR_SRC := $(filter-out worker/%_main.c,$(sort $(wildcard worker/*.c))) \
	     $(CTLP_SRC)
SUP_SRC	  := $(filter-out supervisor/%_main.c $(CTLP_SRC),$(sort $(wildcard supervisor/*.c)))
CTL_SRC	  := $(filter-out tools/%_main.c,$(sort $(wildcard tools/*.c)))
TEST_SRC  := $(sort $(wildcard tests/check_*.c))
SH_TESTS  := $(sort $(wildcard tests/sh/check_*))
TLIB_SRC  := $(sort $(wildcard tests/lib/*.c))
PROG_SRC  := $(sort $(wildcard tests/progs/*.c))
BENCH_SRC := $(sort $(wildcard tools/bench/bench_*.c))
EX_SRC	  := $(sort $(wildcard examples/*.c))
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
WMAIN_SRC := $(sort $(wildcard worker/*_main.c))
GW_SRC	  := $(sort $(wildcard gateway/*.c))
MANS	  := $(sort $(wildcard man/*.[0-9]))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBACTOR_A  = $(BUILD)/libactor.a
LIBACTOR_SO = $(BUILD)/libactor.so.$(SOVER)
LIBACTORD_A = $(BUILD)/libactord.a
ACTORD	    = $(BUILD)/actord
ACTORCTL    = $(BUILD)/actorctl
TESTS	    = $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
PROGS	    = $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(PROG_SRC))
BENCHES	    = $(patsubst tools/bench/%.c,$(BUILD)/bench/%,$(filter-out \
		tools/bench/bench_scale.c tools/bench/bench_seeds.c,$(BENCH_SRC)))
SCALE_BENCH = $(BUILD)/bench/bench_scale
SEEDS_BENCH = $(BUILD)/bench/bench_seeds
EXAMPLES    = $(patsubst examples/%.c,$(BUILD)/examples/%,$(EX_SRC))
WMAINS	    = $(patsubst worker/%_main.c,$(BUILD)/%,$(WMAIN_SRC))
GATEWAY	    = $(BUILD)/actord-gateway
TLIB_O	    = $(call obj,$(TLIB_SRC))

BINS	= $(if $(wildcard supervisor/actord_main.c),$(ACTORD)) \
	  $(if $(wildcard tools/actorctl_main.c),$(ACTORCTL)) $(WMAINS) \
	  $(if $(GW_SRC),$(GATEWAY))

.PHONY: all check soak bench bench-scale bench-seeds fuzz run install clean \
	lint-man
all: $(LIBACTOR_A) $(LIBACTOR_SO) $(LIBACTORD_A) $(BINS) $(EXAMPLES) \
	$(BUILD)/libactor.pc

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(call obj,$(SHM_SRC) $(ACTOR_SRC)): CFLAGS += $(LIB_CFLAGS)

$(LIBACTOR_A): $(call obj,$(SHM_SRC) $(ACTOR_SRC))
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

# Only the API is exported (actor.h, shm.h): the control protocol's
# functions inside stay private to the library.
$(LIBACTOR_SO): $(call obj,$(SHM_SRC) $(ACTOR_SRC)) worker/libactor.map
	$(CC) -shared -Wl,-soname,libactor.so.$(SOVER) $(LDFLAGS) $(LTO_LINK) \
		-Wl,--version-script=worker/libactor.map \
		-o $@ $(filter %.o,$^) -lpthread

$(LIBACTORD_A): $(call obj,$(SUP_SRC) $(CTL_SRC))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

LINKLIBS = $(LIBACTORD_A) $(LIBACTOR_A)

$(ACTORD): $(call obj,supervisor/actord_main.c) $(LINKLIBS)
	$(CC) $(LDFLAGS) $(LTO_LINK) -o $@ $^ $(LDLIBS)

$(ACTORCTL): $(call obj,tools/actorctl_main.c) $(LINKLIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The gateway of a node (gateway/): actord runs it as /@gateway, from the
# directory actord itself is in.
$(GATEWAY): $(call obj,$(GW_SRC)) $(LINKLIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%: $(BUILD)/obj/worker/%_main.o $(LINKLIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TLIB_O) $(LINKLIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/progs/%: $(BUILD)/obj/tests/progs/%.o $(LINKLIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/obj/tools/bench/%.o $(LINKLIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(LTO_LINK) -o $@ $^ $(LDLIBS)

$(BUILD)/examples/%: $(BUILD)/obj/examples/%.o $(LINKLIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(LTO_LINK) -o $@ $^ $(LDLIBS)

$(BUILD)/libactor.pc: Makefile
	@mkdir -p $(@D)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' \
	  'includedir=$${prefix}/include' '' 'Name: libactor' \
	  'Description: actors across processes, supervised by actord' \
	  'Version: $(VERSION)' \
	  'Libs: -L$${libdir} -lactor' 'Libs.private: -lpthread' \
	  'Cflags: -I$${includedir}' > $@

# --- tests ----------------------------------------------------------------------
# The decoders are fuzzed briefly first; then tests/run runs every test
# binary under a timeout and prints one total, the last line of the output.
check: all $(TESTS) $(PROGS) $(SCALE_BENCH) lint-man
	BUILD=$(BUILD) FUZZ_SECONDS=10 tests/fuzz/run $(FUZZ_SRC)
	BUILD=$(BUILD) SAN=$(SAN) tests/run $(TESTS) $(SH_TESTS)

# --- soak: long randomized runs, one target each in SOAK_RUNS --------------------
# make soak runs every soak-NAME of the list; a new soak run adds its name
# to SOAK_RUNS and its own soak-NAME rule.  soak-sim: the deterministic
# simulator of the supervision core over 1,000,000 seeds (make check runs
# 2,000), in SOAK_JOBS processes of consecutive seeds.
SOAK_RUNS  += sim
SOAK_SEEDS ?= 1000000
SOAK_JOBS  ?= 2
soak: $(addprefix soak-,$(SOAK_RUNS))

soak-sim: all $(BUILD)/tests/check_sup_sim
	@per=$$(( ($(SOAK_SEEDS) + $(SOAK_JOBS) - 1) / $(SOAK_JOBS) )); \
	pids=""; for j in $$(seq 0 $$(($(SOAK_JOBS) - 1))); do \
	  CK_FORK=no SIM_SEEDS=$$per SIM_FIRST=$$((1 + j * per)) \
	    $(BUILD)/tests/check_sup_sim > $(BUILD)/tests/soak-sim.$$j.log 2>&1 & \
	  pids="$$pids $$!"; done; rc=0; \
	for p in $$pids; do wait $$p || rc=1; done; \
	grep -h '^sim: ' $(BUILD)/tests/soak-sim.*.log; exit $$rc

# soak-hostile: the hostile-worker races of tests/check_e2e_hostile.c
# (the scribbler, and the region flipped while its actor is reaped), 10
# minutes each instead of make check's 10 s, side by side.
SOAK_RUNS  += hostile
HOSTILE_SOAK_SECONDS ?= 600
soak-hostile: all $(BUILD)/tests/check_e2e_hostile $(PROGS)
	@pids=""; for c in hostile flip; do \
	  ACTORD_BUILD=$(BUILD) HOSTILE_SECONDS=$(HOSTILE_SOAK_SECONDS) \
	    CK_RUN_CASE=$$c $(BUILD)/tests/check_e2e_hostile \
	    > $(BUILD)/tests/soak-hostile.$$c.log 2>&1 & \
	  pids="$$pids $$!"; done; rc=0; \
	for p in $$pids; do wait $$p || rc=1; done; \
	grep -h 'Checks\|hostile_scribbler:' $(BUILD)/tests/soak-hostile.*.log; \
	exit $$rc

# soak-chaos: tests/check_chaos.c for 10 minutes instead of make check's
# 12 s: signals, operator commands, reloads and messages all at once
# against the real actord; it must stay up, answer, converge and stop clean.
SOAK_RUNS  += chaos
CHAOS_SOAK_MS ?= 600000
soak-chaos: all $(BUILD)/tests/check_chaos $(PROGS)
	@ACTORD_BUILD=$(BUILD) CHAOS_MS=$(CHAOS_SOAK_MS) \
	  $(BUILD)/tests/check_chaos > $(BUILD)/tests/soak-chaos.log 2>&1; \
	  rc=$$?; grep -h 'chaos:\|Checks' $(BUILD)/tests/soak-chaos.log; exit $$rc

# soak-adv: tests/check_adv_soak.c for 10 minutes instead of make check's
# 20 s: every adversary at once (hostile workers, signals, the operator,
# clients that hang up) while actord's memory, descriptors, zombies and
# status latency are watched.
SOAK_RUNS  += adv
ADV_SOAK_SECONDS ?= 600
soak-adv: all $(BUILD)/tests/check_adv_soak $(PROGS)
	@ACTORD_BUILD=$(BUILD) SOAK_SECONDS=$(ADV_SOAK_SECONDS) \
	  $(BUILD)/tests/check_adv_soak > $(BUILD)/tests/soak-adv.log 2>&1; \
	  rc=$$?; grep -h 'soak:\|Checks' $(BUILD)/tests/soak-adv.log; exit $$rc

lint-man:
	@if [ -n "$(MANS)" ]; then \
	  out=$$(mandoc -Tlint -Wwarning $(MANS) 2>&1); \
	  if [ -n "$$out" ]; then echo "$$out"; exit 1; fi; \
	  tools/man-check $(MANS) || { echo "man pages: rendered wrongly" \
	    "(see tools/man-check)"; exit 1; }; \
	  echo "man pages: mandoc -Tlint and tools/man-check clean" \
	    "($(words $(MANS)) pages)"; fi

# --- benchmarks -----------------------------------------------------------------
bench: all $(BENCHES) $(PROGS)
	tools/install-deps --bench
	BUILD=$(BUILD) tools/bench/run $(BENCHES)

# The tree at N = 1, 100, 1,000 and 10,000 actors (tools/bench/bench_scale.c):
# its own target, for it takes minutes and starts 10,000 processes at once.
# Its figures join those of 'make bench' in the same results.json.
bench-scale: all $(SCALE_BENCH) $(PROGS)
	BUILD=$(BUILD) tools/bench/run $(SCALE_BENCH)

# The seeds' table side by side (tools/bench/bench_seeds.c): every pattern
# the seeds measured, their figure, ours and the ratio, in one run; then
# its charts (gnuplot) in $(BUILD)/bench/.  About two minutes.
bench-seeds: all $(SEEDS_BENCH) $(PROGS)
	tools/install-deps --bench
	BUILD=$(BUILD) nice tools/bench/run $(SEEDS_BENCH)
	tools/bench/seeds-charts $(BUILD)/bench/seeds.dat $(BUILD)/bench

# --- fuzzing (clang + libFuzzer) ------------------------------------------------
FUZZ_SECONDS ?= 20
fuzz:
	BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run $(FUZZ_SRC)

# --- demo -----------------------------------------------------------------------
run: all
	examples/run-demo $(BUILD)

# --- install --------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
	  $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR)
	$(if $(wildcard $(ACTORD)),install -m 755 $(ACTORD) $(DESTDIR)$(SBINDIR)/)
	$(if $(wildcard $(GATEWAY)),install -m 755 $(GATEWAY) $(DESTDIR)$(SBINDIR)/)
	$(if $(wildcard $(ACTORCTL)),install -m 755 $(ACTORCTL) $(DESTDIR)$(BINDIR)/)
	install -m 644 $(LIBACTOR_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIBACTOR_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libactor.so.$(SOVER) $(DESTDIR)$(LIBDIR)/libactor.so
	$(if $(wildcard worker/actor.h),install -m 644 worker/actor.h $(DESTDIR)$(INCDIR)/)
	install -m 644 $(BUILD)/libactor.pc $(DESTDIR)$(PCDIR)/
	for m in $(MANS); do s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
	  install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 tools/actorctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/actorctl
	@# A real install as root: refresh the dynamic linker's cache, or a
	@# program linked to libactor fails with "libactor.so.0: cannot open
	@# shared object file"; say so when LIBDIR is not in its path.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ]; then \
	  echo "ldconfig"; ldconfig || exit 1; \
	  ldconfig -p | grep -q "libactor.so.$(SOVER) .*=> $(LIBDIR)/" || \
	  echo "install: $(LIBDIR) is not in the dynamic linker's path:" \
	    "add it to a file in /etc/ld.so.conf.d/ and run ldconfig" >&2; \
	elif [ -z "$(DESTDIR)" ]; then \
	  echo "install: not root: run ldconfig as root before using" \
	    "libactor.so" >&2; fi

clean:
	rm -rf build

.SECONDARY:
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
