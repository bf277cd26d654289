# omnibox - one non-recursive makefile.  Everything it builds goes to $(B).
#
#   make                 build/omnibox-compile (and the library it uses)
#   make check           install missing packages, build, run every test
#   make demo            install missing packages, build, show the examples
#   make golden          rewrite golden/*/expect.* after an intended change
#   make golden-check    diff golden/ against what the compiler emits now
#   make SANITIZE=address,undefined check
#   make fuzz [FUZZ_SECONDS=600]   make bench   make format
#   make install [PREFIX=/usr/local] [DESTDIR=] [MANDIR=]   make uninstall   make clean
#   make check-man       render the manual pages, test the bash completion
#   make check-size      no function over 150 lines (files over 1,500: a warning)

.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

B ?= build
ifneq ($(SANITIZE),)
B := build/sanitize
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
CC ?= cc
FUZZ_CC ?= clang
RE2C ?= re2c
LEMON ?= lemon
LEMPAR ?= /usr/share/lemon/lempar.c
FUZZ_SECONDS ?= 60

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
	-Wwrite-strings -Wvla -Wformat=2 -Wundef -Wimplicit-fallthrough
# Warnings are errors in development builds; a packager may pass WERROR=.
WERROR ?= -Werror
CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -I. -I$(B)/grammar $(SANFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(WARN) $(WERROR) $(CFLAGS) -MMD -MP
# Generated C is not ours to lint.
GEN_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) -w -MMD -MP
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
# `make V=1` shows the commands.
Q := $(if $(V),,@)
say = $(if $(V),,@printf '  %-7s %s\n' $(1) $(2);)
LIBS := -lyaml -lseccomp -lcrypto
# omnibox-run's own event loop (libevent's core only: no TLS, no DNS); the
# egress proxy is omnibox-proxy, a process of its own with OpenSSL.
RUN_LIBS := -levent_core
# omnibox-run and omnibox-compile start for every command an agent runs, and
# omnibox-proxy for every launch with egress rules: the small libraries they
# use are linked in (each shared one costs the dynamic loader about 0.06 ms a
# start, libevent 0.3 ms the proxy); OpenSSL stays shared, so the
# system's security updates reach it.
STATIC = -Wl,-Bstatic $(1) -Wl,-Bdynamic
PROXY_LIBS := $(call STATIC,-levent) -lssl -lcrypto

# ---- sources -------------------------------------------------------------

LIB_SRC := \
	compiler/base/arena.c \
	compiler/base/diag.c \
	compiler/yaml_tree.c \
	compiler/validate.c \
	compiler/validate_egress.c \
	compiler/validate_values.c \
	compiler/decide/env.c \
	compiler/decide/hidden.c \
	compiler/decide/refuse.c \
	compiler/decide/paths.c \
	compiler/decide/address.c \
	compiler/decide/omnigent.c \
	compiler/decide/workspace.c \
	compiler/policy.c \
	compiler/ir.c \
	compiler/decide/protect.c \
	compiler/decide/secrets.c \
	compiler/decide/transparent.c \
	compiler/decide/landlock.c \
	compiler/decide/llbackend.c \
	compiler/decide/container.c \
	compiler/base/format.c \
	compiler/base/textbuf.c \
	compiler/base/textesc.c \
	compiler/base/udiff.c \
	compiler/base/fileio.c \
	grammar/egress.c \
	grammar/egress_match.c \
	grammar/egress_subsume.c \
	emitters/emit_ir.c \
	emitters/emit_egress.c \
	emitters/emit_egress_table.c \
	emitters/emit.c \
	emitters/emit_bwrap.c \
	emitters/emit_landlock.c \
	emitters/bwrap_view.c \
	emitters/emit_env.c \
	emitters/emit_seccomp.c \
	emitters/emit_seccomp_oci.c \
	emitters/emit_oci.c \
	emitters/emit_kubernetes.c \
	emitters/emit_sbpl.c \
	emitters/emit_winjob.c \
	emitters/query.c \
	emitters/diff.c \
	emitters/explain.c \
	emitters/compile.c \
	runtime/launch/darwin.c \
	runtime/resolve/resolve.c \
	runtime/resolve/resolve_base.c \
	runtime/resolve/resolve_masks.c \
	runtime/resolve/resolve_protect.c \
	runtime/resolve/resolve_private.c \
	runtime/resolve/command.c \
	runtime/launch/rlimit.c \
	runtime/launch/cgroup.c \
	runtime/resolve/scan.c \
	runtime/resolve/scan_ahead.c \
	runtime/resolve/scan_memo.c \
	runtime/launch/elsewhere.c \
	runtime/resolve/walk.c \
	runtime/resolve/copy.c \
	runtime/resolve/perm.c \
	runtime/resolve/writeback.c \
	runtime/resolve/host.c \
	runtime/resolve/gitguard.c \
	runtime/resolve/gitconfig.c \
	runtime/resolve/gitindex.c \
	runtime/resolve/why.c \
	runtime/resolve/report.c \
	runtime/resolve/gitshow.c \
	runtime/resolve/landlock_open.c \
	runtime/launch/fds.c \
	runtime/launch/handover.c \
	runtime/launch/janitor.c \
	runtime/launch/landlock.c \
	runtime/launch/seccomp_load.c \
	emitters/json.c
# git's blob hashes (runtime/resolve/gitindex.c), without libcrypto.
LIB_SRC += compiler/base/sha1.c
GEN_SRC := $(B)/grammar/egress_lex.c $(B)/grammar/egress_gram.c
GEN_HDR := $(B)/grammar/egress_gram.h

LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o) $(GEN_SRC:$(B)/%.c=$(B)/obj/gen/%.o)
LIB := $(B)/libomnibox.a

COMPILE := $(B)/omnibox-compile
RUN := $(B)/omnibox-run
PROXY := $(B)/omnibox-proxy
INIT := $(B)/omnibox-init
# omnibox-init runs inside sandboxes that may not see the host's libraries:
# static, except under the sanitizers (which need their shared runtimes).
# It starts in every sandbox before the command, so with musl where
# musl-gcc exists (Debian: musl-tools): its start costs an execve and little
# more, where glibc's static start probes the CPU first (0.3 ms a launch on
# a virtual machine, where each CPUID traps).  musl has no kernel headers of
# its own: the system's are given to it alone (INIT_INC).
MUSL_GCC ?= $(shell command -v musl-gcc 2>/dev/null)
INIT_SRC := runtime/launch/omnibox-init.c runtime/launch/init_steps.c \
	runtime/launch/init_mounts.c runtime/egress/relay.c runtime/egress/handoff.c \
	runtime/egress/fakedns.c runtime/launch/rlimit.c runtime/launch/fds.c \
	runtime/launch/handover.c runtime/launch/landlock.c runtime/launch/seccomp_load.c \
	runtime/gitssh/client.c compiler/base/diag.c compiler/base/arena.c \
	compiler/base/textesc.c compiler/base/format.c
# Objects of each C library in a folder of their own: none is ever linked
# with the other's.
ifneq ($(SANITIZE),)
INIT_CC := $(CC)
INIT_LDFLAGS :=
INIT_DIR := $(B)/initobj
else ifneq ($(MUSL_GCC),)
INIT_CC := $(MUSL_GCC)
INIT_LDFLAGS := -static
INIT_INC := -isystem $(B)/musl-include
INIT_HDRS := $(B)/musl-include/.made
INIT_DIR := $(B)/initobj-musl
else
INIT_CC := $(CC)
INIT_LDFLAGS := -static
INIT_DIR := $(B)/initobj
endif
INIT_OBJ := $(INIT_SRC:%.c=$(INIT_DIR)/%.o)
UNIT := frontend egress_parse egress_match scan seccomp sbpl resolve host perm winjob winquote \
	http destination credentials scrub websocket sigv4 gitssh diff textesc env gitindex transparent landlock_plan \
	landlock_open llbackend egress_table handover scan_memo janitor
UNIT_BIN := $(UNIT:%=$(B)/tests/test_%)
BENCH_BIN := $(B)/bench/bench_match $(B)/bench/bench_exec $(B)/bench/bench_scan \
	$(B)/bench/bench_seccomp $(B)/bench/bench_sbpl $(B)/bench/bench_proxy_start \
	$(B)/bench/floor_run $(B)/bench/floor_init
PROBE := $(B)/tests/probe
FUZZ := yaml egress http ws scrub sigv4
FUZZ_BIN := $(FUZZ:%=$(B)/fuzz/fuzz_%)

# ---- build ---------------------------------------------------------------

all: $(COMPILE) $(RUN) $(INIT) $(PROXY)

$(B)/obj/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/obj/gen/%.o: $(B)/%.c | $(GEN_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(GEN_CFLAGS) -c -o $@ $<

$(B)/grammar/egress_gram.c $(B)/grammar/egress_gram.h &: grammar/egress_gram.y
	@mkdir -p $(@D)
	$(call say,LEMON,$<)$(LEMON) -q -d$(B)/grammar -T$(LEMPAR) $<

$(B)/grammar/egress_lex.c: grammar/egress_lex.re $(GEN_HDR)
	@mkdir -p $(@D)
	$(call say,RE2C,$<)$(RE2C) -W --no-generation-date --no-version -o $@ $<

$(LIB): $(LIB_OBJ)
	$(Q)rm -f $@
	$(call say,AR,$@)$(AR) rcs $@ $^

# The seccomp outputs depend on no policy: built once here, by the emitters'
# own functions (emitters/seccomp_gen.c), and carried by omnibox-compile, so
# that a compile builds no filter (tests/unit/test_seccomp_carried.c: the
# same bytes as a fresh build).
CARRIED_DIR := $(B)/gen/carried
CARRIED_OBJ := $(B)/obj/emitters/seccomp_carried.o $(B)/obj/emitters/seccomp_blobs.o

# --as-needed: no library a compile never calls is loaded (libcrypto).
$(COMPILE): $(B)/obj/compiler/omnibox-compile.o $(CARRIED_OBJ) $(LIB)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $^ $(call STATIC,-lyaml -lseccomp)

$(B)/gen/seccomp_gen: $(B)/obj/emitters/seccomp_gen.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(B)/obj/emitters/seccomp_blobs.o: emitters/seccomp_blobs.S $(B)/gen/seccomp_gen
	@mkdir -p $(@D)
	$(call say,GEN,$(CARRIED_DIR))$(B)/gen/seccomp_gen $(CARRIED_DIR)
	$(call say,AS,$@)$(CC) -c -Wa,-I,$(CARRIED_DIR) -o $@ $<

# The seccomp filter is compiled once, at build time, and carried by omnibox-run.
$(B)/gen/seccomp.bpf: $(COMPILE)
	@mkdir -p $(@D)
	$(call say,GEN,$@)$(COMPILE) --quiet --target=linux --emit=seccomp-bpf -o $@ examples/minimal.yaml

$(B)/obj/runtime/launch/seccomp_blob.o: runtime/launch/seccomp_blob.S $(B)/gen/seccomp.bpf
	@mkdir -p $(@D)
	$(call say,AS,$@)$(CC) -c -DSECCOMP_BPF_PATH='"$(B)/gen/seccomp.bpf"' -o $@ $<

# The linux_landlock backend's variant of it, carried beside it.
$(B)/gen/seccomp-landlock.bpf: $(COMPILE)
	@mkdir -p $(@D)
	$(call say,GEN,$@)$(COMPILE) --quiet --target=linux --emit=seccomp-landlock-bpf -o $@ examples/minimal.yaml

$(B)/gen/seccomp-landlock-net.bpf: $(COMPILE)
	@mkdir -p $(@D)
	$(call say,GEN,$@)$(COMPILE) --quiet --target=linux --emit=seccomp-landlock-net-bpf -o $@ examples/minimal.yaml

$(B)/obj/runtime/launch/seccomp_ll_blob.o: runtime/launch/seccomp_ll_blob.S $(B)/gen/seccomp-landlock.bpf \
		$(B)/gen/seccomp-landlock-net.bpf
	@mkdir -p $(@D)
	$(call say,AS,$@)$(CC) -c -DSECCOMP_LL_BPF_PATH='"$(B)/gen/seccomp-landlock.bpf"' \
		-DSECCOMP_LL_NET_BPF_PATH='"$(B)/gen/seccomp-landlock-net.bpf"' -o $@ $<

# The egress proxy (OpenSSL, libevent): omnibox-proxy, which omnibox-run
# starts for a launch with egress_rules (runtime/egress/session.h).
PROXY_OBJ := $(B)/obj/runtime/egress/proxy.o $(B)/obj/runtime/egress/proxy_conn.o \
	$(B)/obj/runtime/egress/proxy_request.o $(B)/obj/runtime/egress/proxy_tunnel.o \
	$(B)/obj/runtime/egress/proxy_response.o $(B)/obj/runtime/egress/splice.o \
	$(B)/obj/runtime/egress/handoff.o \
	$(B)/obj/runtime/egress/tls.o $(B)/obj/runtime/egress/tlsleg.o \
	$(B)/obj/runtime/egress/tlsrec.o $(B)/obj/runtime/egress/destination.o \
	$(B)/obj/runtime/egress/credentials.o $(B)/obj/gen/runtime/egress/http.o \
	$(B)/obj/runtime/egress/scrub.o $(B)/obj/runtime/egress/websocket.o \
	$(B)/obj/runtime/egress/sigv4.o $(B)/obj/runtime/egress/refresh.o \
	$(B)/obj/runtime/egress/truststore.o $(B)/obj/runtime/egress/pemcerts.o

$(B)/runtime/egress/http.c: runtime/egress/http.re
	@mkdir -p $(@D)
	$(call say,RE2C,$<)$(RE2C) -W --no-generation-date --no-version -o $@ $<

# The git_ssh broker, in omnibox-run too; its helper is a mode of omnibox-init.
GITSSH_OBJ := $(B)/obj/runtime/gitssh/broker.o $(B)/obj/runtime/gitssh/request.o \
	$(B)/obj/runtime/egress/destination.o
# The sandbox's own terminal for interactive launches.
PTY_OBJ := $(B)/obj/runtime/launch/pty.o
# write_files copied back while the sandbox runs.
COPYBACK_OBJ := $(B)/obj/runtime/launch/copyback.o
# The seccomp filter's refusals, counted and answered (SECCOMP_RET_USER_NOTIF).
NOTIFY_OBJ := $(B)/obj/runtime/launch/notify.o

# linux_landlock: the backend's own steps, its choice under auto, and the
# relay to the proxy's socket (run by omnibox-run itself: no sandbox to hold it).
LANDLOCK_RUN_OBJ := $(B)/obj/runtime/launch/launch_landlock.o $(B)/obj/runtime/launch/choose.o \
	$(B)/obj/runtime/launch/metadata.o \
	$(B)/obj/runtime/egress/relay.o $(B)/obj/runtime/egress/handoff.o $(B)/obj/runtime/egress/fakedns.o

# What omnibox-run keeps of the egress side: the credentials read
# outside the sandbox, and the session with omnibox-proxy.
SESSION_OBJ := $(B)/obj/runtime/egress/session.o $(B)/obj/runtime/egress/credentials.o

# omnibox-run's launches: runtime/omnibox-run.c is their entry point.
RUN_OBJ := $(B)/obj/runtime/launch/launch.o $(B)/obj/runtime/launch/launch_bwrap.o \
	$(B)/obj/runtime/launch/bwrap_run.o \
	$(B)/obj/runtime/launch/egress_start.o $(B)/obj/runtime/launch/unsandboxed.o \
	$(B)/obj/runtime/launch/why_answer.o $(B)/obj/runtime/launch/seccomp_blob.o \
	$(B)/obj/runtime/launch/seccomp_ll_blob.o $(SESSION_OBJ) \
	$(GITSSH_OBJ) $(PTY_OBJ) $(COPYBACK_OBJ) $(NOTIFY_OBJ) $(LANDLOCK_RUN_OBJ)

# omnibox-proxy is found beside omnibox-run, as omnibox-init is: built with it.
$(RUN): $(B)/obj/runtime/omnibox-run.o $(RUN_OBJ) $(LIB) | $(PROXY)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $^ \
		$(call STATIC,-lyaml -lseccomp $(RUN_LIBS))

# The egress proxy's compiled table, read back (runtime/egress/table.h), and
# the proxy on its own that reads it (runtime/omnibox-proxy.c).
TABLE_OBJ := $(B)/obj/runtime/egress/table.o
$(PROXY): $(B)/obj/runtime/omnibox-proxy.o $(TABLE_OBJ) $(PROXY_OBJ) \
		$(B)/obj/runtime/egress/session.o $(LIB)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $^ $(LIBS) $(PROXY_LIBS)

# omnibox-run's macOS launch path, built here so it is compiled and tested
# on Linux: sandbox-exec is replaced by OMNIBOX_TEST_SANDBOX_EXEC.  Never installed.
RUN_DARWIN := $(B)/test-omnibox-run-darwin

$(B)/obj/runtime/omnibox-run-darwin.o: runtime/omnibox-run.c | $(GEN_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -DOMNIBOX_TEST_DARWIN -c -o $@ $<

$(RUN_DARWIN): $(B)/obj/runtime/omnibox-run-darwin.o $(B)/obj/runtime/launch/darwin_run.o \
		$(RUN_OBJ) $(LIB) | $(PROXY)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $^ $(LIBS) $(RUN_LIBS)

$(INIT): $(INIT_OBJ) $(B)/.init-cc
	$(call say,LD,$@)$(INIT_CC) $(ALL_LDFLAGS) $(INIT_LDFLAGS) -o $@ $(INIT_OBJ)

# Linked again when the compiler it is built with changes (musl-gcc installed
# or gone): the stamp changes only then.
$(B)/.init-cc: FORCE
	@mkdir -p $(@D)
	@echo '$(INIT_CC) $(INIT_LDFLAGS)' | cmp -s - $@ || echo '$(INIT_CC) $(INIT_LDFLAGS)' >$@

FORCE:

$(INIT_DIR)/%.o: %.c | $(GEN_HDR) $(INIT_HDRS)
	@mkdir -p $(@D)
	$(call say,CC,$@)$(INIT_CC) $(ALL_CFLAGS) $(INIT_INC) -c -o $@ $<

$(B)/musl-include/.made:
	@mkdir -p $(@D)
	$(Q)ln -sfn /usr/include/linux $(@D)/linux && \
		ln -sfn /usr/include/asm-generic $(@D)/asm-generic && \
		ln -sfn /usr/include/$$($(CC) -print-multiarch)/asm $(@D)/asm && touch $@

# ---- tests ---------------------------------------------------------------

$(B)/tests/test_%: $(B)/obj/tests/unit/test_%.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $(filter-out $(LIB),$^) $(LIB) $(LIBS) -lcriterion

# The seccomp tests run the filter in their own BPF interpreter too.
$(B)/tests/test_seccomp: $(B)/obj/tests/unit/test_seccomp.o $(B)/obj/tests/unit/bpf_interp.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcriterion -lpthread

# The seccomp outputs omnibox-compile carries against a fresh build of them.
UNIT_BIN += $(B)/tests/test_seccomp_carried
unit: $(B)/tests/test_seccomp_carried
$(B)/tests/test_seccomp_carried: $(B)/obj/tests/unit/test_seccomp_carried.o $(CARRIED_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcriterion

# compiler/base/sha1.c against OpenSSL's.
UNIT_BIN += $(B)/tests/test_sha1
unit: $(B)/tests/test_sha1
$(B)/tests/test_sha1: LIBS += -lcrypto

# textbuf.c's shortcuts against the long way.
UNIT_BIN += $(B)/tests/test_textbuf
unit: $(B)/tests/test_textbuf

# The SBPL tests read profiles with their own checker and evaluator.
$(B)/tests/test_sbpl: $(B)/obj/tests/unit/test_sbpl.o $(B)/obj/tests/darwin/sbpl_check.o \
		$(B)/obj/tests/darwin/sbpl_eval.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcriterion

$(PROBE): tests/linux/probe.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra $(WERROR) -static -o $@ $< -lpthread

# A host where no namespace can be made (Docker's default seccomp profile):
# tests/linux/nons.sh.  Static, like the probe, so it runs whatever a
# sandbox around it can see (so never with the sanitizers, as the probe).
NONS := $(B)/tests/nons
$(NONS): tests/linux/nons.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(WERROR) $(CFLAGS) -static -o $@ $< -lseccomp

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t --short-filename; done

golden: $(COMPILE)
	tests/golden.sh update $(COMPILE)

golden-check: $(COMPILE)
	tests/golden.sh check $(COMPILE)

# golden-check fails when a mount argument of a resolved golden changes.
check-golden-selftest: $(COMPILE)
	tests/golden_selftest.sh $(COMPILE)

check-cli: $(COMPILE)
	tests/cli.sh $(COMPILE)

# No function over 150 lines (fails); files over 1,500 lines are named as a warning.
check-size:
	tests/size.sh

# Each suite on real launches runs under a limit (tests/watch.sh): one that
# hangs fails within it, listing the processes it left, and says its time.
WATCH ?= tests/watch.sh 1200

check-linux: $(RUN) $(INIT) $(PROBE)
	$(WATCH) tests/linux/acceptance.sh $(B)

# The agent as the adversary: each move against a real launch, the host checked.
check-attacks: $(COMPILE) $(RUN) $(INIT) $(PROBE)
	$(WATCH) tests/linux/attacks.sh $(B)

# --why against what a real launch of every golden policy can do.
check-why: $(COMPILE) $(RUN) $(INIT)
	$(WATCH) tests/linux/why.sh $(B)

# What the agent leaves behind, against the host's own git and shells.
check-leftovers: $(RUN) $(INIT)
	$(WATCH) tests/linux/leftovers.sh $(B)

# The launch's order: bwrap started before the resolve, omnibox-init handed
# the rest; each way that goes wrong in between against a real launch.
check-launch: $(RUN) $(INIT) $(PROXY)
	$(WATCH) tests/linux/launch.sh $(B)

# Where bwrap cannot make its namespaces (containers, AppArmor, sysctls):
# omnibox refuses and says why, rather than run anything unconfined.
.PHONY: check-nons
check-nons: $(RUN) $(INIT) $(NONS) $(PROBE)
	$(WATCH) tests/linux/nons.sh $(B)

# The linux_landlock backend (no namespaces) against real launches, as root
# and as nobody: on this host and under nons, and `auto` under nons.
.PHONY: check-landlock
check-landlock: $(RUN) $(INIT) $(NONS) $(PROBE) $(B)/tests/proxy/upstream
	$(WATCH) tests/linux/landlock.sh $(B)

# omnibox-init's full Landlock mode (--ll-fs), run directly without bwrap,
# as root and as nobody: tests/linux/landlock_init.sh.
.PHONY: check-landlock-init
check-landlock-init: $(INIT)
	$(WATCH) tests/linux/landlock_init.sh $(B)

# The agent as the adversary against real linux_landlock launches, as root
# and as nobody: tests/linux/landlock_attacks.sh (not part of check).
.PHONY: check-landlock-attacks
check-landlock-attacks: $(COMPILE) $(RUN) $(INIT) $(PROBE)
	$(WATCH) tests/linux/landlock_attacks.sh $(B)

# The OCI bundle of --target=oci --resolve run by runc, as root and rootless as
# nobody, over a root filesystem the test builds: tests/linux/oci.sh.
.PHONY: check-oci
check-oci: $(COMPILE) $(PROBE)
	$(WATCH) tests/linux/oci.sh $(B)

# A developer's working day (git, toolchains, package registries) inside real launches.
check-workday: $(RUN) $(INIT)
	$(WATCH) tests/linux/workday.sh $(B)

# The test servers behind the egress proxy.
$(B)/tests/proxy/upstream: tests/proxy/upstream.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(BASE_CFLAGS) $(WARN) $(WERROR) $(CFLAGS) -o $@ $< -lssl -lcrypto -lpthread

# The agent flooding the proxy from inside (tests/linux/egress.sh).
$(B)/tests/proxy/flood: tests/proxy/flood.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(BASE_CFLAGS) $(WARN) $(WERROR) $(CFLAGS) -o $@ $<

check-egress: $(RUN) $(INIT) $(B)/tests/proxy/upstream $(B)/tests/proxy/flood
	$(WATCH) tests/linux/egress.sh $(B)

# Clients that ignore the proxy, through the sandbox's resolver (docs/egress.md).
check-transparent: $(RUN) $(INIT) $(B)/tests/proxy/upstream $(B)/tests/proxy/dnsd
	$(WATCH) tests/linux/transparent.sh $(B)

# An interactive launch through tmux: job control, Ctrl-C/Z, resize, terminal restored.
check-pty: $(RUN) $(INIT)
	$(WATCH) tests/linux/pty.sh $(B)

# git over ssh through the broker, against a real sshd on loopback.
check-git-ssh: $(RUN) $(INIT)
	$(WATCH) tests/linux/git_ssh.sh $(B)

# The proxy's own units (HTTP lexer, destinations, credentials, TLS, relay)
# and its end-to-end suite on loopback, without a sandbox.
$(B)/tests/test_http: $(B)/obj/gen/runtime/egress/http.o
$(B)/tests/test_destination: $(B)/obj/runtime/egress/destination.o
$(B)/tests/test_credentials: $(B)/obj/runtime/egress/credentials.o
$(B)/tests/test_scrub: $(B)/obj/runtime/egress/scrub.o $(B)/obj/runtime/egress/credentials.o
$(B)/tests/test_websocket: $(B)/obj/runtime/egress/websocket.o
$(B)/tests/test_egress_table: $(TABLE_OBJ) $(B)/obj/runtime/egress/credentials.o
$(B)/tests/test_gitssh: $(B)/obj/runtime/gitssh/broker.o $(B)/obj/runtime/gitssh/request.o \
	$(B)/obj/runtime/gitssh/client.o \
	$(B)/obj/runtime/egress/destination.o
$(B)/tests/test_websocket: LIBS += -lcrypto
$(B)/tests/test_sigv4: $(B)/obj/runtime/egress/sigv4.o
$(B)/tests/test_sigv4: LIBS += -lcrypto
# The frames between omnibox-run and its proxy (runtime/egress/session.h).
UNIT_BIN += $(B)/tests/test_session
unit: $(B)/tests/test_session
$(B)/tests/test_session: $(B)/obj/runtime/egress/session.o
# The plain-body mover the proxy hands big downloads to (runtime/egress/splice.h).
UNIT_BIN += $(B)/tests/test_splice
unit: $(B)/tests/test_splice
$(B)/tests/test_splice: $(B)/obj/runtime/egress/splice.o
# The sandbox's DNS (fake addresses for the relay's transparent listeners).
UNIT_BIN += $(B)/tests/test_fakedns
unit: $(B)/tests/test_fakedns
$(B)/tests/test_fakedns: $(B)/obj/runtime/egress/fakedns.o

# The proxy's starting trust read without parsing every certificate (runtime/egress/pemcerts.h).
UNIT_BIN += $(B)/tests/test_truststore
unit: $(B)/tests/test_truststore
$(B)/tests/test_truststore: $(B)/obj/runtime/egress/truststore.o $(B)/obj/runtime/egress/pemcerts.o \
	$(B)/obj/runtime/egress/tls.o
$(B)/tests/test_truststore: LIBS += -lssl -lcrypto

# A TLS leg against OpenSSL over a socket pair (runtime/egress/tlsleg.h).
$(B)/tests/proxy/test_tlsleg: $(B)/obj/tests/proxy/test_tlsleg.o $(B)/obj/runtime/egress/tlsleg.o \
		$(B)/obj/runtime/egress/tlsrec.o $(B)/obj/runtime/egress/tls.o \
		$(B)/obj/runtime/egress/pemcerts.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ -levent -lssl -lcrypto -lcriterion

$(B)/tests/proxy/test_tls: $(B)/obj/tests/proxy/test_tls.o $(B)/obj/runtime/egress/tls.o \
		$(B)/obj/runtime/egress/pemcerts.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lssl -lcrypto -lcriterion

$(B)/tests/proxy/test_relay: $(B)/obj/tests/proxy/test_relay.o $(B)/obj/runtime/egress/relay.o \
		$(B)/obj/runtime/egress/handoff.o \
		$(B)/obj/runtime/egress/fakedns.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcriterion -lpthread

$(B)/tests/proxy/test_handoff: $(B)/obj/tests/proxy/test_handoff.o $(B)/obj/runtime/egress/relay.o \
		$(B)/obj/runtime/egress/handoff.o $(B)/obj/runtime/egress/fakedns.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcriterion

$(B)/tests/proxy/proxyd: $(B)/obj/tests/proxy/proxyd.o $(PROXY_OBJ) $(B)/obj/runtime/egress/relay.o \
		$(B)/obj/runtime/egress/fakedns.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) $(PROXY_LIBS)

$(B)/tests/proxy/dnsd: $(B)/obj/tests/proxy/dnsd.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^

check-proxy: $(B)/tests/proxy/proxyd $(B)/tests/proxy/upstream $(B)/tests/proxy/dnsd \
		$(B)/tests/proxy/test_tls $(B)/tests/proxy/test_tlsleg $(B)/tests/proxy/test_relay \
		$(B)/tests/proxy/test_handoff $(COMPILE) $(PROXY)
	$(B)/tests/proxy/test_tls --short-filename
	$(B)/tests/proxy/test_tlsleg --short-filename
	$(B)/tests/proxy/test_relay --short-filename
	OMNIBOX_TEST_RELAY_POLL=1 $(B)/tests/proxy/test_relay --short-filename
	$(B)/tests/proxy/test_handoff --short-filename
	OMNIBOX_TEST_RELAY_POLL=1 $(B)/tests/proxy/test_handoff --short-filename
	$(WATCH) tests/proxy/e2e.sh $(B)

# The macOS launch path with a stand-in for sandbox-exec (see the script).
check-darwin: $(COMPILE) $(RUN_DARWIN) $(INIT) $(B)/tests/proxy/upstream
	$(WATCH) tests/darwin/launch.sh $(B)

# An installation works from its own tree and uninstalls without a trace.
check-install: $(COMPILE) $(RUN) $(INIT)
	@set -e; d=$$(mktemp -d); \
	$(MAKE) --no-print-directory -s install DESTDIR=$$d PREFIX=/opt/omnibox; \
	printf 'os_env:\n  sandbox:\n    allow_network: false\n' >$$d/agent.yaml; \
	out=$$(cd $$d && $$d/opt/omnibox/bin/omnibox-run -q agent.yaml -- sh -c 'echo installed-ok'); \
	test "$$out" = installed-ok; \
	$$d/opt/omnibox/bin/omnibox-compile --quiet --emit=bwrap $$d/agent.yaml >/dev/null; \
	$(MAKE) --no-print-directory -s uninstall DESTDIR=$$d PREFIX=/opt/omnibox; \
	test -z "$$(find $$d/opt ! -type d)"; rm -rf $$d; echo "install: ok"

# The manual pages render without a warning; the bash completion completes.
MAN_PAGES := docs/man/omnibox-compile.1 docs/man/omnibox-run.1 docs/man/omnibox-policy.5

check-man:
	@set -e; for p in $(MAN_PAGES); do \
		w=$$(groff -ww -man -Tutf8 -z $$p 2>&1); \
		if [ -z "$$w" ] && command -v man >/dev/null; then \
			w=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l $$p 2>&1 >/dev/null); fi; \
		if [ -n "$$w" ]; then echo "$$p:"; echo "$$w"; exit 1; fi; \
	done; echo "man: ok"
	tests/completion.sh

# The Kubernetes objects of --target=kubernetes against the Kubernetes OpenAPI
# schema (tests/kubernetes/validate.mjs, with the npm packages .ci/install-deps
# pins and installs into build/npm): first that the validator refuses what it
# must, then every golden's expect.kubernetes and a fresh compile of each.
.PHONY: check-kubernetes
check-kubernetes: $(COMPILE)
	tests/kubernetes/selftest.sh
	$(WATCH) tests/kubernetes/check.sh $(B)

deps:
	@.ci/install-deps

fuzz-deps:
	@.ci/install-deps clang libclang-rt-14-dev

bench-deps:
	@.ci/install-deps tinyproxy hyperfine

check: deps
	$(MAKE) --no-print-directory check-size unit golden-check check-golden-selftest check-cli check-linux check-attacks \
		check-leftovers check-launch check-workday check-why check-proxy check-egress check-transparent check-nons check-landlock check-landlock-attacks check-landlock-init check-oci check-git-ssh check-pty check-darwin check-install \
		check-windows check-man check-kubernetes

# ---- Windows: omnibox-run.exe, cross-compiled, tested under Wine ----------

MINGW_CC ?= x86_64-w64-mingw32-gcc
WIN := $(B)/windows
WIN_CFLAGS := -std=c11 -I. -municode $(WARN) $(WERROR) -O2 -g
# compiler/base/textesc.c is portable C: messages are escaped as on Linux and macOS.
# The library files of omnibox-run.exe return their errors; only the entry
# point (omnibox-run-win.c) reports one and exits.  What a policy means comes
# from compiler/decide/, the same functions the other launchers call.
WIN_LIB_SRC := runtime/win/launch.c runtime/win/job.c runtime/win/agent.c runtime/win/scratch.c \
	runtime/win/wintext.c runtime/win/manifest.c runtime/win/winquote.c
WIN_DECIDE_SRC := compiler/decide/env.c compiler/decide/refuse.c compiler/decide/hidden.c \
	compiler/decide/workspace.c compiler/decide/llbackend.c compiler/decide/paths.c \
	compiler/decide/protect.c compiler/decide/transparent.c \
	compiler/ir.c compiler/base/arena.c compiler/base/format.c compiler/base/textesc.c
WIN_RUN_SRC := runtime/win/omnibox-run-win.c $(WIN_LIB_SRC) $(WIN_DECIDE_SRC)
WIN_HDR := $(wildcard runtime/win/*.h) emitters/winjob.h compiler/base/format.h compiler/base/textesc.h \
	compiler/decide/env.h compiler/decide/refuse.h compiler/decide/hidden.h \
	compiler/decide/workspace.h compiler/decide/llbackend.h compiler/decide/paths.h \
	compiler/decide/protect.h compiler/decide/transparent.h compiler/ir.h
WIN_HELPERS := $(WIN)/wt_agent.exe $(WIN)/wt_quote.exe $(WIN)/wt_bench.exe

windows: $(WIN)/omnibox-run.exe $(WIN_HELPERS)

$(WIN)/omnibox-run.exe: $(WIN_RUN_SRC) $(WIN_HDR)
	@mkdir -p $(@D)
	$(call say,MINGW,$@)$(MINGW_CC) $(WIN_CFLAGS) -o $@ $(WIN_RUN_SRC) -lbcrypt -ladvapi32

$(WIN)/wt_%.exe: tests/windows/wt_%.c runtime/win/winquote.c runtime/win/winquote.h
	@mkdir -p $(@D)
	$(call say,MINGW,$@)$(MINGW_CC) $(WIN_CFLAGS) -o $@ $< runtime/win/winquote.c -lshell32

$(B)/tests/test_winjob: $(B)/obj/tests/unit/test_winjob.o $(B)/obj/runtime/win/manifest.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcriterion

$(B)/tests/test_env: $(B)/obj/tests/unit/test_env.o $(B)/obj/runtime/win/manifest.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcriterion

# compiler/decide/workspace.c: the workspace rule every launcher takes.
UNIT_BIN += $(B)/tests/test_workspace
unit: $(B)/tests/test_workspace

$(B)/tests/test_workspace: $(B)/obj/tests/unit/test_workspace.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lcriterion

$(B)/tests/test_winquote: $(B)/obj/tests/unit/test_winquote.o $(B)/obj/runtime/win/winquote.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcriterion

check-windows: $(COMPILE) windows
	$(WATCH) tests/windows/wine.sh $(B)

bench-windows: $(COMPILE) windows
	tests/windows/bench.sh $(B)

# ---- fuzzing and benchmarks ---------------------------------------------

FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -I. -I$(B)/grammar -g -O1 \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_OBJ := $(LIB_SRC:%.c=$(B)/fuzzobj/%.o) $(GEN_SRC:$(B)/%.c=$(B)/fuzzobj/gen/%.o)

$(B)/fuzzobj/%.o: %.c | $(GEN_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) -MMD -MP -c -o $@ $<

$(B)/fuzzobj/gen/%.o: $(B)/%.c | $(GEN_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) -w -MMD -MP -c -o $@ $<

$(B)/fuzz/fuzz_http: $(B)/fuzzobj/gen/runtime/egress/http.o
$(B)/fuzz/fuzz_ws: $(B)/fuzzobj/runtime/egress/websocket.o
$(B)/fuzz/fuzz_ws: LIBS += -lcrypto
$(B)/fuzz/fuzz_scrub: $(B)/fuzzobj/runtime/egress/scrub.o
$(B)/fuzz/fuzz_sigv4: $(B)/fuzzobj/runtime/egress/sigv4.o
$(B)/fuzz/fuzz_sigv4: LIBS += -lcrypto
$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) | fuzz-deps
	@mkdir -p $(@D)
	$(call say,LD,$@)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)

fuzz: $(FUZZ_BIN)
	@set -e; for f in $(FUZZ); do \
		mkdir -p $(B)/fuzz/corpus-$$f; \
		echo "== fuzz_$$f for $(FUZZ_SECONDS)s"; \
		$(B)/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(B)/fuzz/ \
			-dict=tests/fuzz/$$f.dict $(B)/fuzz/corpus-$$f tests/fuzz/corpus/$$f; \
	done

$(B)/bench/%: $(B)/obj/tests/bench/%.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lpthread

# The launch's floor (tests/bench/run.sh): a launcher linked as omnibox-run
# is, and a first process built as omnibox-init is.
$(B)/bench/floor_run: $(B)/obj/tests/bench/floor_run.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^

$(B)/bench/floor_init: $(INIT_DIR)/tests/bench/floor_init.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(INIT_CC) $(ALL_LDFLAGS) $(INIT_LDFLAGS) -o $@ $^

$(B)/bench/bench_proxy_client: $(B)/obj/tests/bench/bench_proxy_client.o
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lssl -lcrypto

# omnibox-proxy's startup alone, from exec to its ready answer (tests/bench/run.sh).
$(B)/bench/bench_proxy_start: $(B)/obj/tests/bench/bench_proxy_start.o \
		$(B)/obj/runtime/egress/session.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

bench-proxy: $(B)/bench/bench_proxy_client $(B)/tests/proxy/proxyd $(B)/tests/proxy/upstream \
		$(B)/tests/proxy/flood $(INIT)
	tests/bench/bench_proxy.sh $(B)

bench: bench-deps
	$(MAKE) --no-print-directory bench-run

bench-run: $(COMPILE) $(RUN) $(INIT) $(PROXY) $(BENCH_BIN)
	tests/bench/run.sh $(B)
	$(MAKE) --no-print-directory bench-proxy

# ---- demo, install, housekeeping ----------------------------------------

demo: deps
	$(MAKE) --no-print-directory all
	tests/demo.sh $(B)

LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

install: $(COMPILE) $(RUN) $(INIT) $(PROXY)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/omnibox
	install -m 0755 $(COMPILE) $(RUN) $(PROXY) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(INIT) $(DESTDIR)$(LIBEXECDIR)/omnibox/omnibox-init
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(filter %.5,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 examples/completion/omnibox.bash $(DESTDIR)$(BASHCOMPDIR)/omnibox-compile
	ln -sf omnibox-compile $(DESTDIR)$(BASHCOMPDIR)/omnibox-run

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/omnibox-compile $(DESTDIR)$(BINDIR)/omnibox-run
	rm -f $(DESTDIR)$(BINDIR)/omnibox-proxy
	rm -f $(DESTDIR)$(LIBEXECDIR)/omnibox/omnibox-init
	-rmdir $(DESTDIR)$(LIBEXECDIR)/omnibox
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(filter %.5,$(MAN_PAGES))))
	rm -f $(DESTDIR)$(BASHCOMPDIR)/omnibox-compile $(DESTDIR)$(BASHCOMPDIR)/omnibox-run

FORMAT_SRC = $(wildcard compiler/*.[ch] grammar/*.[ch] emitters/*.[ch] runtime/*/*.[ch] \
	tests/unit/*.c tests/fuzz/*.c tests/bench/*.c tests/darwin/*.[ch] tests/linux/*.c \
	tests/windows/*.c tests/proxy/*.c)

format:
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf build

.PHONY: all unit golden golden-check check-golden-selftest check-cli check-size check-linux check-attacks check-leftovers check-why check-proxy check-egress check-transparent check-git-ssh check-pty check-darwin check-install check-man windows check-windows \
	bench-windows deps fuzz-deps bench-deps check fuzz bench-run bench-proxy bench demo install uninstall \
	format clean

-include $(shell find $(B) -name '*.d' 2>/dev/null)
