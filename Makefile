# egret - per-attempt, deny-by-default network egress enforced by cgroup BPF.
#
#   make            build build/egret
#   make test       install missing deps, build, run unit, BPF program,
#                   integration, red-team, real-client and agent CLI tests
#   make demo       install missing deps, build, run the offline demo
#   make vmlinux    regenerate vmlinux/vmlinux.h from the running kernel

OUT        := build
CLANG      ?= clang
CC         ?= cc
BPFTOOL    ?= bpftool
ARCH       := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VERSION    := $(shell git describe --always --dirty 2>/dev/null || echo 0.1.0)

PKGS       := libbpf libcares yaml-0.1 libelf zlib libsodium
# Lazy (=): evaluated in recipes, after `make deps` had a chance to install.
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS    = $(shell pkg-config --libs $(PKGS))
# egret itself links libbpf and what it needs (libelf, zlib) statically:
# they read only egret's own BPF objects and the kernel's data, and each
# shared library costs every start its mapping, relocation and page faults
# (issue 42). The parsers of what others write (c-ares: DNS answers;
# libyaml: policy files) stay shared, so that a distribution's security
# update reaches egret without a rebuild; libsodium too, loaded by its
# soname at the first receipt (lib/sign.c). STATIC_LIBBPF=0 links libbpf,
# libelf and zlib shared.
STATIC_LIBBPF ?= 1
ifeq ($(STATIC_LIBBPF),1)
EGRET_LIBS  = -Wl,-Bstatic $(shell pkg-config --libs libbpf libelf zlib) -Wl,-Bdynamic \
	      $(shell pkg-config --libs libcares yaml-0.1)
else
EGRET_LIBS  = $(shell pkg-config --libs libbpf libelf zlib libcares yaml-0.1)
endif
SODIUM_SONAME = $(shell objdump -p "$$(pkg-config --variable=libdir libsodium)/libsodium.so" \
	2>/dev/null | awk '/SONAME/ { print $$2 }')
$(OUT)/user/lib/sign.o: override CPPFLAGS += $(if $(SODIUM_SONAME),-DEGRET_SODIUM_SONAME='"$(SODIUM_SONAME)"')

CFLAGS     ?= -O2 -g
# Symbols bound at start, not at each first call: egretd forks a process
# per attempt, and lazy binding made every one of them resolve again what
# its parent had (and the GOT read-only: full RELRO).
override LDFLAGS += -Wl,-z,now -Wl,-z,relro

# Say what is missing, once, instead of dying on <bpf/bpf.h>. The goals that
# install the dependencies themselves (tools/install-deps.sh) skip this.
SELF_INSTALLING := deps clean vmlinux test demo bench bench-clients bench-egretd fuzz sanitize stress
ifneq ($(filter-out $(SELF_INSTALLING),$(or $(MAKECMDGOALS),all)),)
MISSING := $(shell for t in pkg-config $(CLANG) $(BPFTOOL); do \
		command -v $$t >/dev/null 2>&1 || echo $$t; done; \
	for p in $(PKGS); do pkg-config --exists $$p 2>/dev/null || echo $$p; done)
ifneq ($(strip $(MISSING)),)
$(error missing build dependencies ($(strip $(MISSING))): run sudo tools/install-deps.sh to install them)
endif
endif
WARN       := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
# A distribution's CPPFLAGS and LDFLAGS (dpkg-buildflags) add to ours.
override CPPFLAGS := -D_GNU_SOURCE -Iinclude -Iuser -I$(OUT) \
              -DEGRET_VERSION='"$(VERSION)"' $(CPPFLAGS)
# -fdebug-compilation-dir: no build directory in the objects, so the same
# sources give the same bytes anywhere (their hash names the pinned set:
# enforce/shared.h).
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -fdebug-compilation-dir=. \
              -Iinclude -Ivmlinux -Ibpf

# user/ holds one folder per subsystem (docs/ARCHITECTURE.md, "Source map");
# headers are included by their path under user/ ("dns/wire.h").
USER_SRCS  := $(filter-out user/main_client.c,$(wildcard user/*.c user/*/*.c))
USER_OBJS  := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS)) $(OUT)/user/policy/embedded.o \
              $(OUT)/user/policy/catalog_built.o
LIB_OBJS   := $(filter-out $(OUT)/user/main.o,$(USER_OBJS))
BPF_HDRS   := $(wildcard bpf/lib/*.h) $(wildcard include/*.h)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(wildcard tests/unit/test_*.c))
# tests/helpers/preload_NAME.c: a library the tests LD_PRELOAD (NAME.so).
HELPERS    := $(patsubst tests/helpers/%.c,$(OUT)/helpers/%,$(filter-out tests/helpers/preload_%.c,$(wildcard tests/helpers/*.c))) \
              $(patsubst tests/helpers/preload_%.c,$(OUT)/helpers/%.so,$(wildcard tests/helpers/preload_*.c))

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: FORCE install uninstall install-check deploy-test all deps test bpf-stats bpf-budget sanitize stress layers docs-check unit integration redteam clients agents demo bench bench-clients bench-egretd bench-uploads vmlinux helpers fuzz clean

all: $(OUT)/egret $(OUT)/egretd $(OUT)/egret-client

$(OUT) $(OUT)/tests $(OUT)/helpers:
	$(Q)mkdir -p $@

# Two BPF objects: egret (every attempt) and unix (bpf/unix.bpf.c, only
# when abstract unix sockets are judged by name).
# (tests/bpf/bpf.mk builds its own copy with the same recipe.)
define bpf_object
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $(@:.o=.tmp.o)
	$(Q)$(BPFTOOL) gen object $@ $(@:.o=.tmp.o)
	$(Q)rm -f $(@:.o=.tmp.o)
endef

# The objects depend on their flags as well: an object left from other
# flags would hash to another tag than the same sources built afresh.
$(OUT)/bpf-flags: FORCE | $(OUT)
	@echo '$(BPF_CFLAGS)' | cmp -s - $@ || echo '$(BPF_CFLAGS)' >$@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) vmlinux/vmlinux.h $(OUT)/bpf-flags | $(OUT)
	$(bpf_object)

# The same for the version the binary reports and hashes into the tag.
$(OUT)/version: FORCE | $(OUT)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@

$(OUT)/user/main.o: $(OUT)/version

$(OUT)/egret.skel.h: $(OUT)/egret.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name egret_bpf > $@

$(OUT)/egret_unix.skel.h: $(OUT)/unix.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name egret_unix_bpf > $@

$(OUT)/egret_tasks.skel.h: $(OUT)/tasks.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name egret_tasks_bpf > $@

$(OUT)/user/enforce/objects.o: $(OUT)/egret.skel.h $(OUT)/egret_unix.skel.h $(OUT)/egret_tasks.skel.h \
	$(OUT)/objects_hash.h

# What the objects and the version hash to, for the pinned set's tag
# (enforce/objects.c): hashed here once, not over 360 KiB of objects at
# every start (issue 42). The skeletons embed these files as they are.
$(OUT)/objects_hash.h: $(OUT)/egret.bpf.o $(OUT)/unix.bpf.o $(OUT)/tasks.bpf.o $(OUT)/version
	$(call msg,GEN,$@)
	$(Q)h=$$(cat $^ | sha256sum | cut -c1-16) && [ $${#h} -eq 16 ] && \
		printf '#define EGRET_OBJECTS_HASH 0x%sULL\n' "$$h" >$@

# Header dependencies come from the compiler (-MMD -MP: the .d files).
$(OUT)/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

# Data compiled in: the registry catalog and the default policy.
$(OUT)/user/policy/embedded.o: user/policy/embedded.S user/policy/catalog.yaml \
		user/policy/default-policy.yaml
	$(call msg,AS,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -c $< -o $@

# The catalog parsed at build time by egret's own parser (tools/catalog_gen.c)
# and linked as a const struct: no YAML parse at a start (issue 42). A
# catalog the parser refuses fails here.
CATALOG_GEN_OBJS := $(addprefix $(OUT)/user/,policy/catalog.o policy/yaml_util.o \
	policy/host.o policy/spec.o lib/diag.o lib/log.o \
	lib/text.o lib/names.o policy/embedded.o)

$(OUT)/catalog_gen: tools/catalog_gen.c $(CATALOG_GEN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@

$(OUT)/user/policy/catalog_built.c: $(OUT)/catalog_gen
	$(call msg,GEN,$@)
	$(Q)$< >$@

$(OUT)/user/policy/catalog_built.o: $(OUT)/user/policy/catalog_built.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/egret: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(EGRET_LIBS) -o $@

# egretd's client alone, linked against libc only: what a caller's image
# (a miner's container) needs (user/main_client.c).
CLIENT_OBJS := $(addprefix $(OUT)/user/,main_client.o attempt/run_options.o cmd/client.o \
	cmd/client_args.o cmd/git.o cmd/request.o daemon/wire.o daemon/wire_encode.o git/harvest.o git/layout.o \
	launch/environ.o lib/cmd.o lib/log.o lib/paths.o policy/repo.o)

$(OUT)/egret-client: $(CLIENT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@

# egretd is egret started by that name (cmd/daemon.c).
$(OUT)/egretd: $(OUT)/egret
	$(Q)ln -sf egret $@

# Unit tests link every module but main; cmocka supplies main().
$(OUT)/tests/test_%: tests/unit/test_%.c $(LIB_OBJS) | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP $< $(LIB_OBJS) \
		$(PKG_LIBS) $(shell pkg-config --libs cmocka) -o $@

# test_keeper pauses the supervisor's fd_recv() (its header says why).
$(OUT)/tests/test_keeper: LDFLAGS += -Wl,--wrap=fd_recv
# test_atomic_file fails O_TMPFILE as a filesystem without it would.
$(OUT)/tests/test_atomic_file: LDFLAGS += -Wl,--wrap=openat

$(OUT)/helpers/%: tests/helpers/%.c $(wildcard tests/helpers/*.h) | $(OUT)/helpers
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror $< -o $@

$(OUT)/helpers/%.so: tests/helpers/preload_%.c | $(OUT)/helpers
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC $< -o $@

helpers: $(HELPERS)

deps:
	@tools/install-deps.sh

unit: $(UNIT_TESTS)
	@failed=0; for t in $(UNIT_TESTS); do echo "== $$t"; $$t || failed=1; done; \
	[ $$failed -eq 0 ] || { echo "unit tests failed" >&2; exit 1; }

integration: $(OUT)/egret $(OUT)/egretd $(OUT)/egret-client helpers
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) \
		tests/integration/run.sh

# One test per bypass vector, as a hostile unprivileged COMMAND.
redteam: $(OUT)/egret helpers
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) \
		tests/redteam/run.sh

# Real clients (curl, wget, git, pip, npm, node, Go, dig, apt-get) through
# egret against real servers in the test world (tests/clients/run.sh).
clients: $(OUT)/egret helpers
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) \
		CLIENTS_BUILD=$(abspath $(OUT)/clients) tests/clients/run.sh

# The real agent CLIs (Claude Code, Codex, Gemini CLI, the versions in
# tests/agents/versions, installed by tools/install-deps.sh) through one
# task each, driven by mock model APIs, under root egret run and through
# egretd, with a policy of `agents: [CLI]` (tests/agents/run.sh); about a
# minute.
agents: $(OUT)/egret $(OUT)/egretd $(OUT)/egret-client helpers
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) \
		tests/agents/run.sh

# The two set-up commands: each installs what is missing first, then
# re-enters make so pkg-config sees the new packages.
test: deps
	@$(MAKE) --no-print-directory layers docs-check unit bpf-tests bpf-budget integration redteam clients agents install-check deploy-test

# What the verifier spends on each program of the shipped object
# (tools/bpf-stats.c), and the gate: each program within its reference
# count plus a stated margin (tests/bpf/budgets.txt says why that margin),
# and the same programs grown by half all over it: part of make test,
# needs root.
$(OUT)/bpf-stats: tools/bpf-stats.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $< $(shell pkg-config --cflags --libs libbpf) -o $@

bpf-stats: $(OUT)/bpf-stats $(OUT)/egret.bpf.o
	@$(OUT)/bpf-stats $(OUT)/egret.bpf.o

bpf-budget: $(OUT)/bpf-stats $(OUT)/egret.bpf.o
	@if [ "$$(id -u)" != 0 ] && [ "$${CI:-}" != true ]; then \
		echo "skip  bpf-budget: loading the programs needs root"; \
	else \
		$(OUT)/bpf-stats $(OUT)/egret.bpf.o --budget tests/bpf/budgets.txt >/dev/null && \
		$(OUT)/bpf-stats $(OUT)/egret.bpf.o --budget tests/bpf/budgets.txt --grow 50 >/dev/null && \
		echo "ok    bpf-budget: every program within its reference + margin of verified instructions, and none would be at 1.5 times (tests/bpf/budgets.txt)"; \
	fi

# The module graph of user/ has no cycle and keeps the folders' layering
# (docs/ARCHITECTURE.md, "Source map"); no file includes one of egret's
# headers it does not use; no file or function outgrew the style's sizes
# (tools/size-check.py; a justified exception is a line of
# tools/size-allow.txt).
layers:
	@tools/include-graph.py --cycles --layers --unused && echo "ok    layers: no include cycle, no layer broken, no unused include"
	@tools/size-check.py && echo "ok    sizes: no file over 600 lines, no function over 80"

# Figures the docs repeat from the code (the catalog's budgets) match it.
docs-check:
	@tools/docs-check.sh

demo: deps
	@$(MAKE) --no-print-directory all helpers
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) tools/demo.sh

# How long real clients take to fail when denied, per errno egret can
# refuse with (docs/CLIENTS.md); about 10 minutes, most of it npm's retries.
bench-clients: deps
	@$(MAKE) --no-print-directory all helpers
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) \
		CLIENTS_BUILD=$(abspath $(OUT)/clients) tests/clients/run.sh --time-to-failure

# egretd's tests under `stress-ng --cpu 2` (tests/stress.sh): 500
# sequential attempts, then 20 runs in a row; about 40 minutes.
stress:
	@tools/install-deps.sh stress
	@$(MAKE) --no-print-directory all helpers
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) tests/stress.sh

# A burst of 100 attempts through egretd (BENCHMARKS.md); about a minute.
# What real clients send to a registry or forge while they only fetch: the
# figures behind the catalog's default upload budgets (docs/POLICY.md).
bench-uploads: deps
	@$(MAKE) --no-print-directory all helpers
	@tests/bench/uploads.sh

bench-egretd: deps
	@$(MAKE) --no-print-directory all
	@tests/bench/egretd.sh

# Benchmarks (BENCHMARKS.md): never part of `make test`; about 8 minutes.
bench:
	@tools/install-deps.sh bench
	@$(MAKE) --no-print-directory all helpers
	@tests/bench/bench.sh

# egret built with ASan and UBSan (build/sanitize/), run through the
# integration suite; any sanitizer report, leaks included, fails it. The
# reports are left in build/sanitize/reports/.
SAN_OUT    := $(OUT)/sanitize
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
              -fno-sanitize-recover=undefined
sanitize: deps
	@$(MAKE) --no-print-directory OUT=$(SAN_OUT) CFLAGS="$(SAN_CFLAGS)" \
		$(SAN_OUT)/egret $(SAN_OUT)/egretd $(SAN_OUT)/egret-client helpers
	@EGRET=$(abspath $(SAN_OUT)/egret) HELPERS=$(abspath $(SAN_OUT)/helpers) \
		REPORTS=$(abspath $(SAN_OUT)/reports) tools/sanitize.sh

# libFuzzer (clang's runtime from libclang-rt-14-dev) with ASan and UBSan,
# bounded: FUZZ_SECONDS of mutation per target from its committed seed
# corpus (or FUZZ_RUNS executions each). Every module is built instrumented
# into one archive; each target links only what it reaches. Targets: the
# DNS wire parser, the request store, approvals, the policy parser, the
# egret run <-> egretd messages, egretd's configuration, the ClientHello
# reader SNI pinning runs in BPF.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?=
FUZZ_TARGETS := dns requests approvals policy wire daemon_config request_lines tls_hello http_stream ask
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
               -fno-sanitize-recover=undefined
FUZZ_OBJS := $(patsubst user/%.c,$(OUT)/fuzz/%.o,$(filter-out user/main.c,$(USER_SRCS)))

$(OUT)/fuzz/enforce/objects.o: $(OUT)/egret.skel.h $(OUT)/egret_unix.skel.h $(OUT)/egret_tasks.skel.h \
	$(OUT)/objects_hash.h

$(OUT)/fuzz/%.o: user/%.c
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/fuzz/libegret.a: $(FUZZ_OBJS) $(OUT)/user/policy/embedded.o \
		$(OUT)/user/policy/catalog_built.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(OUT)/fuzz/libegret.a
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(CPPFLAGS) $(PKG_CFLAGS) $< \
		$(OUT)/fuzz/libegret.a $(PKG_LIBS) -o $@

fuzz: deps
	@$(MAKE) --no-print-directory $(addprefix $(OUT)/fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
		echo "== fuzz_$$t"; \
		rm -rf $(OUT)/fuzz-corpus/$$t && mkdir -p $(OUT)/fuzz-corpus/$$t && \
		cp tests/fuzz/corpus/$$t/* $(OUT)/fuzz-corpus/$$t/ && \
		case $$t in wire) len=65536 ;; *) len=4096 ;; esac; \
		$(OUT)/fuzz_$$t $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS)) \
			-max_len=$$len -print_final_stats=1 $(OUT)/fuzz-corpus/$$t || exit 1; \
	done

include tests/bpf/bpf.mk

-include $(USER_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) $(UNIT_TESTS:=.d)

# make install [PREFIX=/usr/local] [DESTDIR=]: what a package would run.
# The binary, egretd as a link to it, man pages, docs, systemd units,
# examples of the two configurations (never the live files: an
# operator's are never overwritten).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR = $(PREFIX)/bin
SBINDIR = $(PREFIX)/sbin
MANDIR = $(PREFIX)/share/man
DOCDIR = $(PREFIX)/share/doc/egret
UNITDIR = $(PREFIX)/lib/systemd/system
EXAMPLEDIR = $(DOCDIR)/examples
DOCS = README.md BENCHMARKS.md $(wildcard docs/*.md)
INSTALLED = $(BINDIR)/egret $(BINDIR)/egret-client $(SBINDIR)/egretd \
	$(MANDIR)/man1/egret.1 $(MANDIR)/man8/egretd.8 $(MANDIR)/man5/egret-policy.5 \
	$(UNITDIR)/egretd.socket $(UNITDIR)/egretd.service \
	$(EXAMPLEDIR)/miner.service $(EXAMPLEDIR)/egretd.yaml $(EXAMPLEDIR)/policy.yaml \
	$(SYSCONFDIR)/egret/egretd.yaml.example $(SYSCONFDIR)/egret/policy.yaml.example \
	$(addprefix $(DOCDIR)/,$(notdir $(DOCS)))

install: $(OUT)/egret $(OUT)/egret-client
	install -D -m 0755 $(OUT)/egret $(DESTDIR)$(BINDIR)/egret
	install -D -m 0755 $(OUT)/egret-client $(DESTDIR)$(BINDIR)/egret-client
	install -d $(DESTDIR)$(SBINDIR)
	ln -sfn $(shell realpath -m --relative-to=$(SBINDIR) $(BINDIR))/egret $(DESTDIR)$(SBINDIR)/egretd
	install -D -m 0644 docs/man/egret.1 $(DESTDIR)$(MANDIR)/man1/egret.1
	install -D -m 0644 docs/man/egretd.8 $(DESTDIR)$(MANDIR)/man8/egretd.8
	install -D -m 0644 docs/man/egret-policy.5 $(DESTDIR)$(MANDIR)/man5/egret-policy.5
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(SYSCONFDIR)/egret
	sed 's|/usr/local/sbin|$(SBINDIR)|g' tools/deploy/systemd/egretd.service >$(DESTDIR)$(UNITDIR)/egretd.service
	install -m 0644 tools/deploy/systemd/egretd.socket $(DESTDIR)$(UNITDIR)/egretd.socket
	chmod 0644 $(DESTDIR)$(UNITDIR)/egretd.service
	install -m 0644 tools/deploy/systemd/miner.service.example $(DESTDIR)$(EXAMPLEDIR)/miner.service
	install -m 0644 tools/deploy/egretd.yaml.example $(DESTDIR)$(EXAMPLEDIR)/egretd.yaml
	install -m 0644 tools/deploy/policy.yaml.example $(DESTDIR)$(EXAMPLEDIR)/policy.yaml
	install -m 0644 tools/deploy/egretd.yaml.example $(DESTDIR)$(SYSCONFDIR)/egret/egretd.yaml.example
	install -m 0644 tools/deploy/policy.yaml.example $(DESTDIR)$(SYSCONFDIR)/egret/policy.yaml.example
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/egret 2>/dev/null

# The Kubernetes manifests validated offline, the systemd units in a
# booted systemd (systemd-nspawn), and egretd in a real Docker
# container beside an unprivileged miner container, as Compose and as the
# DaemonSet run it (docs/DEPLOYMENT.md); needs docker.io, docker-compose
# and python3-kubernetes (tools/install-deps.sh deploy), skipped without
# them outside CI (and mmdebstrap, systemd-container).
deploy-test: $(OUT)/egret $(OUT)/egret-client helpers
	@tests/deploy/k8s.sh
	@tests/deploy/systemd.sh
	@EGRET=$(abspath $(OUT)/egret) HELPERS=$(abspath $(OUT)/helpers) tests/deploy/docker.sh

# The install into an empty directory is the tree the docs describe, and
# every man page renders without a warning; uninstall leaves nothing.
install-check: $(OUT)/egret $(OUT)/egret-client
	@tools/install-check.sh $(OUT)

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

clean:
	rm -rf $(OUT)
