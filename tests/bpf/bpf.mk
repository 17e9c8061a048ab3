# BPF_PROG_TEST_RUN tests (tests/bpf/): the programs of bpf/ run by the
# kernel over hand-built packets and contexts. Included by the Makefile.
#
#   make bpf-tests      check the BPF headers, build, run the tests
#   make bpf-hdr-check  only the headers: each bpf/lib/*.h compiles alone
#
# Everything is built into $(BPFT) from bpf/ itself: its own copy of both
# BPF objects and their skeletons, never build/egret.bpf.o or
# build/*.skel.h (which build/egret embeds). Needs root and bpf(); without
# them the tests say so and skip - with CI=true they fail instead
# (tests/bpf/harness.c, as tests/integration/env.sh).

BPFT          := $(OUT)/bpftests
BPFT_LIB_HDRS := $(wildcard bpf/lib/*.h)
# Any header of bpf/ or include/ may change what the objects compile to.
BPFT_BPF_DEPS := $(BPFT_LIB_HDRS) $(wildcard include/*.h) vmlinux/vmlinux.h
BPFT_OBJS     := $(BPFT)/egret.bpf.o $(BPFT)/unix.bpf.o
BPFT_HDR_OK   := $(patsubst bpf/lib/%.h,$(BPFT)/hdr/%.ok,$(BPFT_LIB_HDRS))
BPFT_TOBJS    := $(patsubst tests/bpf/%.c,$(BPFT)/%.o,$(wildcard tests/bpf/*.c))
BPFT_BIN      := $(BPFT)/egret_bpf_tests
BPFT_PKGS     := libbpf libelf zlib cmocka
# No -I$(OUT): the tests must see $(BPFT)'s skeletons, not egret's own.
# Lazy (=): pkg-config runs in recipes, as the Makefile's PKG_CFLAGS.
BPFT_CFLAGS    = $(CFLAGS) $(WARN) -D_GNU_SOURCE -Iinclude -I$(BPFT) -Itests/bpf \
                 $(shell pkg-config --cflags $(BPFT_PKGS))
BPFT_LIBS      = $(shell pkg-config --libs $(BPFT_PKGS))

.PHONY: bpf-tests bpf-hdr-check

$(BPFT) $(BPFT)/hdr:
	$(Q)mkdir -p $@

# The Makefile's own recipe for build/%.bpf.o (bpf_object), into $(BPFT),
# with the attempt's settings and counters in globals the tests can set
# and read (bpf/lib/attempt.h: BPF_PROG_TEST_RUN's cgroup storage cannot).
$(BPFT_OBJS): BPF_CFLAGS += -DEGRET_BPF_TEST
$(BPFT_OBJS): $(BPFT)/%.bpf.o: bpf/%.bpf.c $(BPFT_BPF_DEPS) | $(BPFT)
	$(bpf_object)

$(BPFT)/egret.skel.h: $(BPFT)/egret.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name egret_bpf > $@

$(BPFT)/egret_unix.skel.h: $(BPFT)/unix.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name egret_unix_bpf > $@

# Each header on its own, twice (its include guard too): a one-line file
# that includes nothing else. bpf/egret.bpf.c's include order must never
# be what makes a header compile.
$(BPFT)/hdr/%.ok: bpf/lib/%.h $(BPFT_BPF_DEPS) | $(BPFT)/hdr
	$(call msg,HDR,$<)
	$(Q)printf '#include "lib/%s.h"\n#include "lib/%s.h"\n' $* $* > $(@:.ok=.c)
	$(Q)$(CLANG) $(BPF_CFLAGS) -fsyntax-only $(@:.ok=.c)
	$(Q)touch $@

bpf-hdr-check: $(BPFT_HDR_OK)

$(BPFT_TOBJS): $(BPFT)/%.o: tests/bpf/%.c $(BPFT)/egret.skel.h $(BPFT)/egret_unix.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(BPFT_CFLAGS) -MMD -MP -c $< -o $@

$(BPFT_BIN): $(BPFT_TOBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(BPFT_LIBS) -o $@

bpf-tests: bpf-hdr-check $(BPFT_BIN)
	@echo "== $(BPFT_BIN)"
	@$(BPFT_BIN)

-include $(BPFT_TOBJS:.o=.d)
