# SPDX-License-Identifier: GPL-2.0
# cgtma: Top-Down (TMA) profiling per cgroup with eBPF.
#
#   make              build build/cgtma
#   make test         install missing packages (Debian), build, run every test
#   make run          install missing packages, build, profile the machine for 5 x 1 s
#   make bench        overhead figures (prints numbers, never fails on timing)
#   make test-kernels the live tests in Debian's kernels under QEMU and on this one, one table
#                     (KERNELS="5.10 6.1" picks kernels, TESTS="10 12" tests; tests/vm/;
#                     KERNELS="arm64-6.1 arm64-6.12": arm64 guests, the cross build)
#   make dist         build/cgtma-VERSION.tar.gz: the committed tree and a VERSION file, builds
#                     without git (make dist-test tries that)
#   make static       build/cgtma-static: no shared libraries, models and BPF object inside,
#                     for any x86-64 Linux 5.10+ (tools/install-deps.sh static; fetches
#                     Debian's libmicrohttpd source once)
#   make install      install the binary, the man pages, the bash completion and the docs
#                     under $(PREFIX)
#   make vmlinux      regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel's BTF, or
#                     from a kernel image's (KERNEL_IMAGE=vmlinuz: tools/kernel-btf.sh)
#   ARCH=arm64        cross-build for arm64 on an x86 host, into build-arm64/ (ARCH defaults
#                     to this machine's: x86 or arm64)
#   NO_LIBDW=1        build without libdw (no --sample), NO_LIBMICROHTTPD=1 without
#                     libmicrohttpd (no --prometheus); a library that is missing is left out
#                     by itself, and make optional-test tries a build without both
#   V=1               show the commands

# The target architecture, in the kernel's names (x86, arm64); a cross build goes to a
# directory of its own, so that the native build/ stays, and uses Debian's cross compiler
# with the target's libraries from multiarch (tools/install-deps.sh build arm64).
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
override ARCH := $(subst aarch64,arm64,$(subst x86_64,x86,$(ARCH)))
ifeq ($(filter $(ARCH),x86 arm64),)
$(error ARCH=$(ARCH): cgtma builds for x86 and arm64)
endif
ifeq ($(ARCH),$(HOST_ARCH))
OUTPUT ?= build
else
OUTPUT ?= build-$(ARCH)
CROSS_COMPILE ?= $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu-,x86_64-linux-gnu-)
endif
# The release, set here only. The commit comes from `git describe`, or from the VERSION file
# at the top of a release tarball (make dist), or from CGTMA_COMMIT=... on the command line
# (a build from copied sources, as in tools/container/Containerfile).
CGTMA_VERSION := 0.1.0
ifeq ($(origin CGTMA_COMMIT),undefined)
CGTMA_COMMIT := $(shell if [ -f VERSION ]; then cat VERSION; \
	elif [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ]; then \
	git describe --always --dirty; else echo unknown; fi | tr -cd 'A-Za-z0-9._+-')
endif
PREFIX ?= /usr/local
# make's own default (cc) gives way to gcc, the cross one for a cross build; CC=... wins.
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
STRIP ?= $(CROSS_COMPILE)strip
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
SCDOC ?= scdoc


ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wmissing-prototypes -Wstrict-prototypes
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARNINGS) $(CFLAGS) -I$(OUTPUT) -I. -Iuser -MMD -MP
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf -Wall \
	-Wno-unused-function

# --- optional libraries ------------------------------------------------------------------

# As bpftool finds its own: a library is there when a small program that calls it
# (tools/feature/test-NAME.c) compiles and links with $(CC), a cross compiler against the
# target's libraries. A success is kept in $(OUTPUT)/feature/ (make clean forgets it); a
# failure is tried again at every make, so that a library installed since is found.
# NO_LIBDW=1 or NO_LIBMICROHTTPD=1 builds without one that is there.
#   libdw          --sample: names the sampled frames (user/symbolize.c)
#   libmicrohttpd  --prometheus: serves /metrics (user/output_prometheus.c)
# A tree without the probe (sources copied without tools/feature/) stops here rather than
# build without the library.
FEATURE_DIR := $(OUTPUT)/feature
feature_probe = $(strip $(if $(wildcard tools/feature/test-$(1).c),, \
	$(error tools/feature/test-$(1).c is missing: it tells whether $(1) is there)) \
	$(shell mkdir -p $(FEATURE_DIR) && { test -e $(FEATURE_DIR)/test-$(1) || \
	$(CC) $(CFLAGS) $(LDFLAGS) tools/feature/test-$(1).c $(2) -o $(FEATURE_DIR)/test-$(1) \
	>/dev/null 2>&1; } && echo 1))
HAVE_LIBDW := $(if $(NO_LIBDW),,$(call feature_probe,libdw,-ldw -lelf))
HAVE_LIBMICROHTTPD := $(if $(NO_LIBMICROHTTPD),,$(call feature_probe,libmicrohttpd,-lmicrohttpd))

LIBS := -lbpf $(if $(HAVE_LIBDW),-ldw) -lelf -lz -lpfm -ljson-c \
	$(if $(HAVE_LIBMICROHTTPD),-lmicrohttpd) -lm
# The modules, and their unit tests, that need a library the build does without.
WITHOUT_SRCS := $(if $(HAVE_LIBDW),,user/symbolize.c tests/unit/test_symbolize.c) \
	$(if $(HAVE_LIBMICROHTTPD),,user/output_prometheus.c tests/unit/test_prometheus.c)

# --- what is built from what -------------------------------------------------------------

BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

# Every user/*.c is part of the program; cgtma.c holds main() and is left out of the
# library the unit tests link against.
USER_SRCS := $(filter-out user/cgtma.c $(WITHOUT_SRCS),$(wildcard user/*.c))
MODEL_FILES := $(sort $(wildcard user/models/*.json))
LIB_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) $(OUTPUT)/models.o

UNIT_SRCS := $(filter-out $(WITHOUT_SRCS),$(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
# The workloads use nothing of cgtma's: linked with libc alone, or their start-up loads
# libbpf, libdw, libmicrohttpd, gnutls and a dozen more, in the cgroup they are measured in
# (under the kernel matrix's TCG guests a third of a spinner's samples), and they run only
# where those libraries are installed. The others (mkprofile, mkrecord) write cgtma's files
# with its own code.
PLAIN_HELPERS := $(addprefix $(OUTPUT)/tests/,spinfn workload pingpong udp)
LINKED_HELPERS := $(filter-out $(PLAIN_HELPERS), \
	$(patsubst tests/helpers/%.c,$(OUTPUT)/tests/%,$(wildcard tests/helpers/*.c)))
# The workload and spinfn once more, static, for container root filesystems with nothing to
# link against; and spinfn without its symbols: its frames print as spinfn-stripped+OFFSET,
# one --folded line per address, where a wrong stack shows (tests/live/45-sample-flip.sh).
HELPER_BINS := $(PLAIN_HELPERS) $(LINKED_HELPERS) $(OUTPUT)/tests/workload-static \
	$(OUTPUT)/tests/spinfn-static $(OUTPUT)/tests/spinfn-stripped
# The floor under the switch hook (tests/bench/hookfloor.*): its own BPF object, skeleton and
# loader, built for make bench only.
BENCH_BINS := $(OUTPUT)/tests/hookfloor

# The same unit tests, once more under AddressSanitizer and UndefinedBehaviorSanitizer.
SAN := $(OUTPUT)/san
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_LIB_OBJS := $(patsubst user/%.c,$(SAN)/user/%.o,$(USER_SRCS)) $(OUTPUT)/models.o
SAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(SAN)/tests/%,$(UNIT_SRCS))

# libFuzzer targets build with clang, from objects of their own (instrumented, and with
# CGTMA_FUZZING), each with its dependency file.
FUZZ := $(OUTPUT)/fuzz
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ)/%,$(FUZZ_SRCS))
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined -DCGTMA_FUZZING
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(FUZZ)/user/%.o,$(USER_SRCS)) $(OUTPUT)/models.o

# Every object once more with CGTMA_STATIC (no name lookups through glibc's NSS, which a
# static binary cannot load; --version says "static"), linked with -static against Debian's
# archives, but for libmicrohttpd: Debian's needs GnuTLS, which has no complete static form
# there, so tools/build-static-mhd.sh builds it from Debian's source without TLS (cgtma
# serves plain HTTP). The skeleton already holds the BPF object, models.o the models.
STATIC := $(OUTPUT)/static
STATIC_MHD := $(if $(HAVE_LIBMICROHTTPD),$(STATIC)/mhd/lib/libmicrohttpd.a)
STATIC_OBJS := $(patsubst user/%.c,$(STATIC)/user/%.o,user/cgtma.c $(USER_SRCS)) $(OUTPUT)/models.o
# libdw.a reads compressed debug sections: its decompressors, which the shared libdw brings.
STATIC_LIBS := $(filter-out -lmicrohttpd,$(LIBS)) -lbz2 -llzma

# The man pages (docs/man/*.8.scd, scdoc) are part of the build.
MAN_SRCS := $(wildcard docs/man/*.8.scd)
MAN_PAGES := $(patsubst docs/man/%.scd,$(OUTPUT)/man/%,$(MAN_SRCS))

# Every user object may include a generated header (skeleton, model table, version, the
# libraries built in): make them first.
GENERATED_HDRS := $(SKELS) $(OUTPUT)/models_table.h $(OUTPUT)/version_data.h \
	$(OUTPUT)/cgtma_features.h

OUT_DIRS := $(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tests $(OUTPUT)/man $(SAN)/user $(SAN)/tests \
	$(FUZZ) $(FUZZ)/user $(STATIC)/user

.DELETE_ON_ERROR:
# Generated files (the skeleton, objects behind pattern rules) are kept, not treated as
# intermediate and deleted after each build.
.SECONDARY:
.PHONY: FORCE all helpers test check unit-tests san-tests fuzz-tests live-tests test-kernels run \
	bench install uninstall vmlinux deps test-deps vm-deps static-deps clean dist dist-test \
	static doc-tests install-docs optional-test

all: $(OUTPUT)/cgtma $(MAN_PAGES)

# The test helpers alone (a cross build's, for the kernel matrix's guests).
helpers: $(HELPER_BINS)

static: $(OUTPUT)/cgtma-static

# --- rules, one per kind of output -------------------------------------------------------

$(OUT_DIRS):
	$(Q)mkdir -p $@

# BPF objects: cgtma's (bpf/) and the bench's floor (tests/bench/).
vpath %.bpf.c bpf tests/bench
$(OUTPUT)/%.bpf.o: %.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# Skeletons embed the object: strip DWARF first (BTF stays, CO-RE needs it).
$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(LLVM_STRIP) -g -o $(OUTPUT)/$*.bpf.stripped.o $<
	$(Q)$(BPFTOOL) gen skeleton $(OUTPUT)/$*.bpf.stripped.o name $* > $@

# The built-in models: each user/models/NAME.json becomes a NUL-terminated string in
# .rodata, and a table names them (the symbol with '-' written '_': neoverse-n2); .incbin is
# invisible to -MMD, hence the explicit prerequisites.
# One recipe makes both (a grouped target): make -j runs it once.
$(OUTPUT)/models.S $(OUTPUT)/models_table.h &: $(MODEL_FILES) Makefile | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q){ echo '.section .note.GNU-stack,"",@progbits'; echo '.section .rodata'; \
	  for f in $(MODEL_FILES); do n=$$(basename $$f .json | tr - _); \
	    printf '.global cgtma_model_%s\ncgtma_model_%s:\n.incbin "%s"\n.byte 0\n' $$n $$n $$f; \
	  done; } > $(OUTPUT)/models.S
	$(Q){ for f in $(MODEL_FILES); do n=$$(basename $$f .json | tr - _); \
	    printf 'extern const char cgtma_model_%s[];\n' $$n; done; \
	  echo '#define CGTMA_BUILTIN_MODELS \'; \
	  for f in $(MODEL_FILES); do n=$$(basename $$f .json); \
	    printf '\t{ "%s", cgtma_model_%s }, \\\n' $$n $$(echo $$n | tr - _); done; echo; } \
	  > $(OUTPUT)/models_table.h

$(OUTPUT)/models.o: $(OUTPUT)/models.S $(MODEL_FILES)
	$(call msg,AS,$@)
	$(Q)$(CC) -c $< -o $@

# Headers of what make knows: written on every make, replaced only when they change, so
# that a new commit or a library found recompiles the files that include them (their -MMD
# dependencies say which), not everything. version_data.h: the release and the commit;
# cgtma_features.h: the optional libraries, 1 built in or 0.
$(OUTPUT)/version_data.h: GENERATED = '\#define CGTMA_VERSION "%s"\n\#define CGTMA_COMMIT "%s"\n' \
	'$(CGTMA_VERSION)' '$(CGTMA_COMMIT)'
$(OUTPUT)/cgtma_features.h: GENERATED = \
	'\#define CGTMA_HAVE_LIBDW %d\n\#define CGTMA_HAVE_LIBMICROHTTPD %d\n' \
	$(if $(HAVE_LIBDW),1,0) $(if $(HAVE_LIBMICROHTTPD),1,0)
$(OUTPUT)/version_data.h $(OUTPUT)/cgtma_features.h: FORCE | $(OUTPUT)
	$(Q)printf $(GENERATED) >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; echo '  GEN      $@'; fi

FORCE:

# Objects, and the same objects for the sanitizers, for libFuzzer (clang) and for the static
# binary.
$(OUTPUT)/user/%.o: user/%.c | $(OUTPUT)/user $(GENERATED_HDRS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(SAN)/user/%.o: user/%.c | $(SAN)/user $(GENERATED_HDRS)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(FUZZ)/user/%.o: user/%.c | $(FUZZ)/user $(GENERATED_HDRS)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(STATIC)/user/%.o: user/%.c | $(STATIC)/user $(GENERATED_HDRS) $(STATIC_MHD)
	$(call msg,CC-STATIC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -DCGTMA_STATIC -I$(STATIC)/mhd/include -c $< -o $@

$(STATIC)/mhd/lib/libmicrohttpd.a: tools/build-static-mhd.sh
	$(call msg,MHD,$@)
	$(Q)CC='$(CC)' tools/build-static-mhd.sh $(STATIC)/mhd

# The programs.
$(OUTPUT)/cgtma: $(OUTPUT)/user/cgtma.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

$(OUTPUT)/cgtma-static: $(STATIC_OBJS) $(STATIC_MHD)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -static $(LDFLAGS) $^ $(STATIC_LIBS) -o $@

# Programs of one source file linked with cgtma's objects: the unit tests, the helpers that
# write cgtma's files, the bench's loader (with its skeleton). vpath finds each one's source.
vpath %.c tests/unit tests/helpers tests/bench
$(UNIT_BINS) $(LINKED_HELPERS) $(BENCH_BINS): $(OUTPUT)/tests/%: %.c $(LIB_OBJS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(LDFLAGS) $< $(LIB_OBJS) $(LIBS) -o $@

$(BENCH_BINS): $(OUTPUT)/hookfloor.skel.h

$(SAN)/tests/%: tests/unit/%.c $(SAN_LIB_OBJS) | $(SAN)/tests
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit $< $(SAN_LIB_OBJS) $(LIBS) -o $@

$(FUZZ)/%: tests/fuzz/%.c $(FUZZ_LIB_OBJS) | $(FUZZ)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(ALL_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJS) $(LIBS) -o $@

# The workloads: libc alone, dynamic or static.
$(PLAIN_HELPERS): $(OUTPUT)/tests/%: tests/helpers/%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< -o $@

$(OUTPUT)/tests/%-static: tests/helpers/%.c | $(OUTPUT)/tests
	$(call msg,CC-STATIC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -static $(LDFLAGS) $< -o $@

# The sampling tests' spinner keeps its frame pointers: the kernel walks user stacks by them.
$(OUTPUT)/tests/spinfn $(OUTPUT)/tests/spinfn-static: CFLAGS += -fno-omit-frame-pointer

$(OUTPUT)/tests/%-stripped: $(OUTPUT)/tests/%
	$(call msg,STRIP,$@)
	$(Q)$(STRIP) -o $@ $<

$(OUTPUT)/man/%.8: docs/man/%.8.scd | $(OUTPUT)/man
	$(call msg,SCDOC,$@)
	$(Q)$(SCDOC) < $< > $@

# --- what runs ---------------------------------------------------------------------------

deps:
	$(Q)tools/install-deps.sh build $(ARCH)

# Then checks that every program a live test would skip without is there.
test-deps:
	$(Q)tools/install-deps.sh test $(ARCH)
	$(Q)tests/check-deps.sh

vm-deps:
	$(Q)tools/install-deps.sh vm $(ARCH)

static-deps:
	$(Q)tools/install-deps.sh static

unit-tests: $(UNIT_BINS)
	$(Q)tests/run-unit.sh $(UNIT_BINS)

san-tests: $(SAN_UNIT_BINS)
	$(Q)ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 tests/run-unit.sh $(SAN_UNIT_BINS)

# Every long option of each command's --help in its man page, the pages clean under groff
# -ww, and the bash completion driven as bash drives it; report's --pprof file read by a real
# consumer, go tool pprof (no root needed).
doc-tests: $(OUTPUT)/cgtma $(MAN_PAGES) $(OUTPUT)/tests/mkprofile
	$(Q)tests/docs/check-man.sh $(OUTPUT)
	$(Q)tests/docs/check-completion.sh $(OUTPUT)
	$(Q)tests/tools/check-pprof.sh $(OUTPUT)

# '+': the script runs make for each target, which then shares this make's job slots.
fuzz-tests:
	$(Q)+tests/run-fuzz.sh $(OUTPUT) $(FUZZ_SRCS)

# The test helpers alone (a cross build's, for the kernel matrix's guests).
helpers: $(HELPER_BINS)

# The static binary too: tests/live/36-static.sh runs it in an empty root.
live-tests: $(OUTPUT)/cgtma $(HELPER_BINS) $(OUTPUT)/cgtma-static
	$(Q)tests/run-live.sh $(OUTPUT)

# The same live tests in each kernel of the matrix, booted under QEMU (tests/vm/). Installs
# its packages in a step of its own, like `make test`.
# The arm64 rows run the cross build (build-arm64/) on an x86 host.
test-kernels: vm-deps
	$(Q)$(MAKE) --no-print-directory all $(HELPER_BINS) $(OUTPUT)/cgtma-static
	$(if $(and $(filter arm64-%,$(KERNELS)),$(filter-out arm64,$(HOST_ARCH))), \
		$(Q)tools/install-deps.sh build arm64 && \
		$(MAKE) --no-print-directory ARCH=arm64 OUTPUT=build-arm64 all helpers)
	$(call msg,VM-TEST,$(or $(KERNELS),the default kernels))
	$(Q)tests/vm/test-kernels.sh -b $(OUTPUT) $(if $(TESTS),-t "$(TESTS)") \
		$(if $(JOBS),-j $(JOBS)) $(KERNELS)

# Everything, in the order a failure is cheapest to read.
check: all
	$(Q)$(MAKE) --no-print-directory unit-tests
	$(Q)$(MAKE) --no-print-directory dist-test
	$(Q)$(MAKE) --no-print-directory optional-test
	$(Q)$(MAKE) --no-print-directory san-tests
	$(Q)$(MAKE) --no-print-directory doc-tests
	$(Q)$(MAKE) --no-print-directory fuzz-tests
	$(Q)$(MAKE) --no-print-directory live-tests

# The packages are installed by a separate make step so that this Makefile never needs them
# at parse time.
test: test-deps
	$(Q)$(MAKE) --no-print-directory check

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(OUTPUT)/cgtma --all-cgroups -I 1000 -d 5

bench: test-deps
	$(Q)$(MAKE) --no-print-directory all $(HELPER_BINS) $(BENCH_BINS)
	$(Q)tests/bench/floor-table.sh $(OUTPUT)
	$(Q)tests/bench/run-bench.sh $(OUTPUT)
	$(Q)tests/bench/spread-cost.sh $(OUTPUT)
	$(Q)tests/bench/irq-stream.sh $(OUTPUT)
	$(Q)tests/bench/read-cost.sh $(OUTPUT)
	$(Q)tests/bench/kmem.sh $(OUTPUT)
	$(Q)tests/bench/sample-cost.sh $(OUTPUT)

# --- release tarball -----------------------------------------------------------------------

# HEAD's files (git archive: committed changes only) and VERSION, HEAD's git describe, which
# a build without git reads for the commit.
DIST := cgtma-$(CGTMA_VERSION)

dist: | $(OUTPUT)
	$(call msg,DIST,$(OUTPUT)/$(DIST).tar.gz)
	$(Q)git diff --quiet HEAD -- 2>/dev/null || \
		echo "make dist: uncommitted changes are not in the tarball (it is HEAD's tree)" >&2
	$(Q)mkdir -p $(OUTPUT)/dist && git describe --always HEAD >$(OUTPUT)/dist/VERSION
	$(Q)git archive --format=tar.gz --prefix=$(DIST)/ --add-file=$(OUTPUT)/dist/VERSION \
		-o $(OUTPUT)/$(DIST).tar.gz HEAD

dist-test: dist
	$(Q)tests/dist.sh $(OUTPUT)/$(DIST).tar.gz $(CGTMA_VERSION)

# cgtma without libdw and libmicrohttpd, built in $(OUTPUT)/optional, against this build's.
optional-test: $(OUTPUT)/cgtma
	$(Q)+tests/optional-build.sh $(OUTPUT)

install: $(OUTPUT)/cgtma
	install -D -m 0755 $(OUTPUT)/cgtma $(DESTDIR)$(PREFIX)/sbin/cgtma

# The man pages, the bash completion, and the documents (README, CHANGELOG, docs/*.md, as
# the links between them expect).
install: install-docs
install-docs: $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/doc/cgtma/docs
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man8/
	install -D -m 0644 tools/completion/cgtma \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/cgtma
	install -m 0644 README.md CHANGELOG.md $(DESTDIR)$(PREFIX)/share/doc/cgtma/
	install -m 0644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/cgtma/docs/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/cgtma
	rm -f $(patsubst $(OUTPUT)/man/%,$(DESTDIR)$(PREFIX)/share/man/man8/%,$(MAN_PAGES))
	rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cgtma
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/cgtma

# Through a temporary file: a failing bpftool must not leave the checked-in header empty.
# The BTF is the running kernel's, if it is of ARCH; else that of a kernel image of ARCH,
# KERNEL_IMAGE=path (arm64: Debian's linux-image-*-arm64 package's /boot/vmlinuz-*, which
# `make test-kernels KERNELS=arm64-6.12` leaves in its cache, or any kernel built with
# CONFIG_DEBUG_INFO_BTF), through tools/kernel-btf.sh.
KERNEL_BTF = $(if $(KERNEL_IMAGE),$(OUTPUT)/kernel.btf,$(if $(filter $(ARCH),$(HOST_ARCH)), \
	/sys/kernel/btf/vmlinux,$(error make vmlinux ARCH=$(ARCH) on $(HOST_ARCH): \
	name a kernel image of $(ARCH) with KERNEL_IMAGE=PATH)))
vmlinux: | $(OUTPUT)
	$(call msg,GEN,vmlinux/$(ARCH)/vmlinux.h)
	$(if $(KERNEL_IMAGE),$(Q)tools/kernel-btf.sh $(KERNEL_IMAGE) $(OUTPUT)/kernel.btf)
	$(Q)mkdir -p vmlinux/$(ARCH)
	$(Q)$(BPFTOOL) btf dump file $(KERNEL_BTF) format c > vmlinux/$(ARCH)/vmlinux.h.tmp
	$(Q)mv vmlinux/$(ARCH)/vmlinux.h.tmp vmlinux/$(ARCH)/vmlinux.h

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(addsuffix /*.d,$(OUT_DIRS)))
