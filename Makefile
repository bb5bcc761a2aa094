# memsim — top-level build.  Outputs go under build/ (build/san/ with SANITIZE=1).
#
#   make                 build everything
#   make test            unit and integration tests
#   make test SANITIZE=1 the same under AddressSanitizer and UBSan
#   make test CHECKS=1   the same with every invariant walker after every operation
#   make bench           benchmarks: strategies against glibc, tracing against heaptrack
#   make bench-quick     the same at small sizes, once each: a smoke run
#   make study           real programs under every strategy and real allocator, predictions checked: docs/strategies.md, .svg
#   make compare         memsim against heaptrack, massif and DHAT: docs/performance.md
#   make demo            build, then show memsim on a bundled workload
#   make install PREFIX=/usr/local
#   make clean
#
# Flags come in layers (after redis): WARN, OPT, DEBUG, then the user's
# CFLAGS last so that `make CFLAGS=-O0` wins.

CC      ?= cc
PREFIX  ?= /usr/local
SANITIZE ?=
V       ?=

# The sanitizer runtimes of GCC <= 13 and LLVM <= 16 may take a dynamic TLS
# block for a pre-2.25 glibc one and hand LeakSanitizer a bogus range; its
# tracer then dies at exit ("Tracer caught signal 11", google/sanitizers
# #1322), depending on where malloc put the block.  Not tracking dynamic
# TLS avoids it; every other leak check stays.
SAN_ENV = ASAN_OPTIONS=intercept_tls_get_addr=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}

# make CHECKS=1: every invariant walker after every operation, and the
# _locked functions assert their lock (lib/check.h), in build/checks/.
ifeq ($(CHECKS),1)
BUILD   ?= build/checks
CHECKFLAGS = -DMEMSIM_CHECKS
endif

ifeq ($(SANITIZE),1)
BUILD   ?= build/san
OPT     ?= -O1
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
BUILD   ?= build
OPT     ?= -O2
SANFLAGS =
endif

WARN    = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith
DEBUG   = -g
STD     = -std=c11 -D_GNU_SOURCE
ALL_CFLAGS  = $(STD) $(WARN) $(OPT) $(DEBUG) $(SANFLAGS) $(CHECKFLAGS) -fPIC -fvisibility=hidden -I. -MMD -MP \
	$(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)

# Evaluated when a recipe runs, after scripts/deps.sh has made sure they exist.
JANSSON_CFLAGS = $(shell pkg-config --cflags jansson)
JANSSON_LIBS   = $(shell pkg-config --libs jansson)
CHECK_CFLAGS   = $(shell pkg-config --cflags check)
CHECK_LIBS     = $(shell pkg-config --libs check)
# The analyzer's symbolizer: elfutils' libdw, and libstdc++'s C++ demangler
# (named by soname: the runtime is on every Debian system, no -dev needed).
DW_LIBS        = $(shell pkg-config --libs libdw) -l:libstdc++.so.6
ZSTD_LIBS      = $(shell pkg-config --libs libzstd)
# memsim-analyze --pprof: protobuf-c's runtime (the message code is
# generated from analyzer/report/profile.proto by protoc-c) and zlib's gzip.
PB_LIBS        = $(shell pkg-config --libs libprotobuf-c) -lz
ANALYZE_LIBS   = $(JANSSON_LIBS) $(DW_LIBS) $(ZSTD_LIBS) $(PB_LIBS)

ifeq ($(V),)
Q = @
say = @printf '  %-7s %s\n' $(1) $(2);
else
Q =
say =
endif

CORE_SRC  = $(sort $(wildcard lib/*.c sim/*.c trace/*.c))
PRELOAD_SRC = $(sort $(wildcard preload/*.c))
IPC_SRC   = $(sort $(wildcard ipc/*.c))
RECORDER_SRC = $(sort $(wildcard recorder/*.c))
CLI_SRC   = $(sort $(wildcard cli/*.c))
ANALYZER_SRC = $(sort $(wildcard analyzer/*.c analyzer/*/*.c))
UNIT_SRC  = $(sort $(wildcard tests/unit/*.c))
BENCH_SRC = $(sort $(wildcard bench/*.c))
# The real allocators' catalog, shared by memsim and memsim-analyze, and
# smapsum (the meter's reading of smaps, here for the unit tests)
# (allocators/replay.c and meter.c are programs of their own, below).
ALLOC_OBJ = $(BUILD)/allocators/catalog.o $(BUILD)/allocators/smapsum.o

CORE_OBJ  = $(CORE_SRC:%.c=$(BUILD)/%.o)
IPC_OBJ   = $(IPC_SRC:%.c=$(BUILD)/%.o)
# libmemsim.so: the in-process code and the contract it shares with the recorder.
PRELOAD_OBJ = $(PRELOAD_SRC:%.c=$(BUILD)/%.o) $(IPC_OBJ)
RECORDER_OBJ = $(RECORDER_SRC:%.c=$(BUILD)/%.o)
# The pieces of ipc/ the recorder links: the arena and its ring, the
# configuration, the clock, the seccomp judge (a no-op there).
SHARED_OBJ = $(addprefix $(BUILD)/ipc/,arena.o ring.o config.o clock.o sysmem.o seccomp.o)
# What the unit tests link: the preload's pieces that run without being
# preloaded (not the hooks, nor the process's life, which start at load),
# the recorder's but its main, the analyzer's but its main.
PRELOAD_TESTABLE = $(filter-out $(addprefix $(BUILD)/preload/,hooks%.o cancel.o process%.o signals.o events.o sandbox.o sandboxed.o \
	modules.o launch.o),$(PRELOAD_OBJ))
RECORDER_TESTABLE = $(filter-out $(BUILD)/recorder/main.o,$(RECORDER_OBJ))
ANALYZER_TESTABLE = $(filter-out $(BUILD)/analyzer/main.o,$(ANALYZER_OBJ))
CLI_TESTABLE = $(filter-out $(BUILD)/cli/memsim.o,$(CLI_OBJ))
CLI_OBJ   = $(CLI_SRC:%.c=$(BUILD)/%.o)
# The pprof messages' code, generated (analyzer/report/profile.proto).
PB_GEN    = $(BUILD)/gen/analyzer/report/profile.pb-c.c
PB_OBJ    = $(BUILD)/gen/analyzer/report/profile.pb-c.o
# The HTML pages' script and style, as C strings (scripts/embed.sh).
ASSETS_GEN = $(BUILD)/gen/analyzer/report/report_assets.c
ASSETS_OBJ = $(BUILD)/gen/analyzer/report/report_assets.o
ANALYZER_OBJ = $(ANALYZER_SRC:%.c=$(BUILD)/%.o) $(PB_OBJ) $(ASSETS_OBJ)
UNIT_OBJ  = $(UNIT_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ = $(BENCH_SRC:%.c=$(BUILD)/%.o)

LIBCORE   = $(BUILD)/libmemsim-core.a
MEMSIM    = $(BUILD)/memsim
ANALYZE   = $(BUILD)/memsim-analyze
LIBMEMSIM = $(BUILD)/libmemsim.so
RECORDER  = $(BUILD)/memsim-recorder
# memsim-replay: a trace's operations through the allocator preloaded
# into it (memsim-analyze --allocators); libmemsim-meter.so: the heap's
# RSS of a real run (memsim run --allocator).  Never sanitized: they run
# with another allocator preloaded, which a sanitizer runtime refuses.
REPLAY    = $(BUILD)/memsim-replay
METER     = $(BUILD)/libmemsim-meter.so
UNIT      = $(BUILD)/test-unit
BENCHCORE = $(BUILD)/bench-core
# The workloads of the benchmarks that are built here (bench/programs/*.c).
BENCH_PROGRAMS = $(BUILD)/programs/alloc_heavy $(BUILD)/programs/churn
BENCHWATCH = $(BUILD)/bench-watch
BENCHCOUNT = $(BUILD)/libbench-count.so
BENCHFLOOR = $(BUILD)/bench-floor
MALLINFO_METER = $(BUILD)/libmallinfo-meter.so
AS_SQUEEZE = $(BUILD)/libas-squeeze.so
JSONQ     = $(BUILD)/jsonq
TRACECHECK = $(BUILD)/tracecheck
DEPS_OK   = $(BUILD)/.deps-ok

# Programs the preload tests run under libmemsim.so (tests/programs/*.c).
# unwind_clash links LLVM's libunwind, built only where it is installed
# (Debian package libunwind-14).
LLVM_UNWIND = /usr/lib/llvm-14/lib/libunwind.so.1
# heap_mix_je is heap_mix linked with jemalloc, built only where
# libjemalloc is installed (Debian package libjemalloc-dev).
JEMALLOC  = /usr/lib/x86_64-linux-gnu/libjemalloc.so
PROGRAMS  = sample_stats mt_alloc fork_mt killme closefds crash phases exit_threads det_heap temps map_drift sites_wrap touch_mb tree_touch sites dlswap dlrules walk_shapes shapes many_stacks bss_touch zero_read \
	$(if $(wildcard $(LLVM_UNWIND)),unwind_clash) \
	$(TRANSPARENCY_PROGRAMS) $(if $(wildcard $(JEMALLOC)),heap_mix_je)
# What test_transparency.sh runs (memsim changes nothing in the program).
TRANSPARENCY_PROGRAMS = fd_reuse fd_list fd_limit out_moved heap_mix main_exit own_segv overflow \
	qexit fork_sig exit_sig small_stack coro spawn_env stack_use clone_child exec_fail sigdisp \
	reallocarray0 many_threads frag_heap realloc_race many_live stack_flood
PROGRAM_BINS = $(PROGRAMS:%=$(BUILD)/programs/%) $(BUILD)/programs/static_hello
# The programs of the edge cases (tests/edges/NAME.c, test_edges.sh).
EDGE_BINS = $(patsubst tests/edges/%.c,$(BUILD)/edges/%,$(sort $(wildcard tests/edges/*.c)))
# Example programs (examples/*.c): demo_workload is the one `make demo` runs.
EXAMPLE_BINS = $(patsubst examples/%.c,$(BUILD)/examples/%,$(sort $(wildcard examples/*.c)))

.PHONY: all test unit integration bench bench-quick study compare demo man install uninstall clean deps fuzz

# libmemsim.so is not built under SANITIZE=1: a sanitizer runtime must be
# the first library of a process, which an LD_PRELOADed library is not.
ifeq ($(SANITIZE),1)
all: $(MEMSIM) $(ANALYZE) $(LIBCORE) $(REPLAY)
else
all: $(MEMSIM) $(ANALYZE) $(LIBCORE) $(LIBMEMSIM) $(RECORDER) $(REPLAY) $(METER)
endif

deps: $(DEPS_OK)
$(DEPS_OK): scripts/deps.sh
	$(Q)sh scripts/deps.sh
	$(Q)mkdir -p $(@D) && touch $@

$(BUILD)/%.o: %.c Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(EXTRA_CFLAGS) -c -o $@ $<

$(BUILD)/cli/%.o: EXTRA_CFLAGS = $(JANSSON_CFLAGS)
$(BUILD)/analyzer/%.o: EXTRA_CFLAGS = $(JANSSON_CFLAGS) -I$(BUILD)/gen
$(BUILD)/analyzer/report/report_pprof.o: $(PB_GEN)

$(PB_GEN): analyzer/report/profile.proto | $(DEPS_OK)
	$(call say,PROTOC,$<)
	$(Q)mkdir -p $(BUILD)/gen
	$(Q)protoc-c --c_out=$(BUILD)/gen $<

$(ASSETS_GEN): analyzer/report/report.js analyzer/report/report.css scripts/embed.sh
	$(call say,EMBED,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ sh scripts/embed.sh report_js analyzer/report/report.js && \
		sh scripts/embed.sh report_css analyzer/report/report.css; } >$@.tmp && mv $@.tmp $@

$(ASSETS_OBJ): $(ASSETS_GEN)
	$(call say,CC,$<)
	$(Q)$(CC) $(STD) -O2 $(SANFLAGS) -fPIC -c -o $@ $<

$(PB_OBJ): $(PB_GEN)
	$(call say,CC,$<)
	$(Q)$(CC) $(STD) -O2 -g $(SANFLAGS) -fPIC -I$(BUILD)/gen -c -o $@ $<
$(BUILD)/tests/unit/%.o: EXTRA_CFLAGS = $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
$(BUILD)/tests/tools/%.o: EXTRA_CFLAGS = $(JANSSON_CFLAGS)

$(LIBCORE): $(CORE_OBJ)
	$(call say,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# memsim run checks --analyze-opts with the analyzer's own parser.
MEMSIM_SHARED = $(BUILD)/ipc/childenv.o $(BUILD)/analyzer/options.o $(ALLOC_OBJ)
$(MEMSIM): $(CLI_OBJ) $(MEMSIM_SHARED) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(MEMSIM_SHARED) $(LIBCORE) $(JANSSON_LIBS) $(ZSTD_LIBS) -lm

$(ANALYZE): $(ANALYZER_OBJ) $(ALLOC_OBJ) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(ANALYZER_OBJ) $(ALLOC_OBJ) $(LIBCORE) $(ANALYZE_LIBS) -lm

$(REPLAY): allocators/replay.c allocators/oplog.h lib/procfs.c lib/procfs.h Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O2 -g -I. -o $@ $< lib/procfs.c -ldl -lpthread

$(METER): allocators/meter.c allocators/smapsum.c allocators/smapsum.h lib/procfs.c lib/procfs.h Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O2 -g -fPIC -shared -fvisibility=hidden -I. -o $@ $< allocators/smapsum.c lib/procfs.c -ldl -lpthread

# No -lm: one library fewer to load into every traced program (sample_log).
$(LIBMEMSIM): $(PRELOAD_OBJ) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -Wl,-z,now -Wl,-z,defs -o $@ $(PRELOAD_OBJ) $(LIBCORE) -ldl -lpthread

# The recorder process libmemsim.so starts beside every traced process.
$(RECORDER): $(RECORDER_OBJ) $(SHARED_OBJ) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(RECORDER_OBJ) $(SHARED_OBJ) $(LIBCORE) $(ZSTD_LIBS) -lpthread -lm

# The recorder of an older build (its arena's layout version 2), for the
# transparency test of a libmemsim.so and a memsim-recorder that differ.
OLD_RECORDER = $(BUILD)/tests/memsim-recorder-v2
$(OLD_RECORDER): recorder/main.c $(RECORDER_TESTABLE) $(SHARED_OBJ) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -DARENA_MAGIC=0x3261726e6d73656dull $(ALL_LDFLAGS) -o $@ recorder/main.c \
		$(RECORDER_TESTABLE) $(SHARED_OBJ) $(LIBCORE) $(ZSTD_LIBS) -lpthread -lm

$(UNIT): $(UNIT_OBJ) $(PRELOAD_TESTABLE) $(RECORDER_TESTABLE) $(ANALYZER_TESTABLE) $(CLI_TESTABLE) $(ALLOC_OBJ) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc \
		-o $@ $(UNIT_OBJ) $(PRELOAD_TESTABLE) $(RECORDER_TESTABLE) $(ANALYZER_TESTABLE) $(CLI_TESTABLE) $(ALLOC_OBJ) $(LIBCORE) \
		$(CHECK_LIBS) $(ANALYZE_LIBS) \
		-ldl -lpthread -lm

$(JSONQ): $(BUILD)/tests/tools/jsonq.o
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(JANSSON_LIBS)

$(TRACECHECK): $(BUILD)/tests/tools/tracecheck.o $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBCORE) $(JANSSON_LIBS) $(ZSTD_LIBS)

$(BUILD)/programs/%: tests/programs/%.c Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(PROGRAM_LIBS) -lpthread

$(BUILD)/edges/%: tests/edges/%.c Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lpthread

# realloc_crowd's allocator behind memsim (tests/edges/plugins/crowd.c).
$(BUILD)/edges/realloc_crowd: $(BUILD)/edges/libcrowd.so
$(BUILD)/edges/libcrowd.so: tests/edges/plugins/crowd.c Makefile | $(DEPS_OK)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O1 -g -fPIC -shared -o $@ $<

# async_cancel's check that each thread allocates before it turns
# asynchronous cancellation on (tests/edges/plugins/firstalloc.c).
$(BUILD)/edges/async_cancel: $(BUILD)/edges/libfirstalloc.so
$(BUILD)/edges/libfirstalloc.so: tests/edges/plugins/firstalloc.c Makefile | $(DEPS_OK)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O1 -g -fPIC -shared -o $@ $< -ldl

# dlswap's two plugins: one source, two names (tests/programs/plugins).
$(BUILD)/programs/dlswap: PROGRAM_LIBS = -ldl
$(BUILD)/programs/dlswap: $(BUILD)/programs/libplug_a.so $(BUILD)/programs/libplug_b.so
$(BUILD)/programs/libplug_%.so: tests/programs/plugins/plug.c Makefile | $(DEPS_OK)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O1 -g -fPIC -shared -DPLUG=plug_$* -o $@ $<

# dlrules' two plugins: one assembly source, other frame rules at one
# return address (tests/programs/plugins/rules.S).
$(BUILD)/programs/dlrules: PROGRAM_LIBS = -ldl
$(BUILD)/programs/dlrules: $(BUILD)/programs/librules_a.so $(BUILD)/programs/librules_b.so
$(BUILD)/programs/librules_a.so: RULES_FLAGS = -DRULES_RBP
$(BUILD)/programs/librules_%.so: tests/programs/plugins/rules.S Makefile | $(DEPS_OK)
	$(call say,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -fPIC $(RULES_FLAGS) -o $@ $<

# test_allocators' stand-in allocator, under tcmalloc's soname in a
# directory of its own (tests/programs/plugins/cold_alloc.c).
COLD_ALLOC = $(BUILD)/programs/cold/libtcmalloc_minimal.so.4
$(COLD_ALLOC): tests/programs/plugins/cold_alloc.c Makefile | $(DEPS_OK)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O1 -g -fPIC -shared -o $@ $<

# static_hello: statically linked, out of LD_PRELOAD's reach (test_run.sh).
$(BUILD)/programs/static_hello: tests/programs/static_hello.c Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O1 -static -o $@ $<

$(BUILD)/examples/%: examples/%.c Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<

$(BUILD)/programs/heap_mix_je: tests/programs/heap_mix.c Makefile | $(DEPS_OK)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< -ljemalloc -lpthread

$(BUILD)/programs/unwind_clash: PROGRAM_LIBS = -L$(dir $(LLVM_UNWIND)) -l:$(notdir $(LLVM_UNWIND)) \
	-Wl,-rpath,$(dir $(LLVM_UNWIND))

$(BENCHCORE): $(BENCH_OBJ) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(BENCH_OBJ) $(LIBCORE) -lm

test: unit integration

unit: $(UNIT)
	$(Q)$(SAN_ENV) $(UNIT)

# The preload tests need libmemsim.so, which SANITIZE=1 does not build:
# test_preload.sh and test_transparency.sh then print a skip line.
ifeq ($(SANITIZE),1)
integration: $(MEMSIM) $(ANALYZE) $(JSONQ) $(REPLAY) $(COLD_ALLOC)
else
integration: $(MEMSIM) $(ANALYZE) $(JSONQ) $(REPLAY) $(COLD_ALLOC) $(METER) $(TRACECHECK) $(LIBMEMSIM) $(RECORDER) $(PROGRAM_BINS) $(EDGE_BINS) $(BUILD)/programs/alloc_heavy $(BUILD)/programs/churn $(EXAMPLE_BINS) $(AS_SQUEEZE) $(OLD_RECORDER)
endif
	$(Q)$(SAN_ENV) BUILD=$(BUILD) SANITIZE=$(SANITIZE) sh tests/integration/run.sh

# bench/preload.sh (short runs, with MEMSIM_STRATEGY=none beside
# the default) is no longer part of it: bench/workloads.sh measures at scale.
BENCH_TIMING = $(addprefix $(BUILD)/programs/,exit_sig heap_mix frag_heap touch_mb) $(BUILD)/edges/fork_timer $(MALLINFO_METER) $(MEMSIM) $(JSONQ)
bench: $(BENCHCORE) $(LIBMEMSIM) $(RECORDER) $(ANALYZE) $(JSONQ) $(TRACECHECK) $(BENCH_PROGRAMS) $(BENCHWATCH) $(BENCHCOUNT) $(BENCHFLOOR) $(BENCH_TIMING) $(REPLAY) $(METER) $(BUILD)/programs/shapes
	$(Q)$(BENCHCORE)
	$(Q)sh bench/workloads.sh $(BUILD)
	$(Q)sh bench/threads.sh $(BUILD)
	$(Q)sh bench/analyze.sh $(BUILD)
	$(Q)sh bench/findings.sh $(BUILD)
	$(Q)sh bench/shapes.sh $(BUILD)
	$(Q)sh bench/procs.sh $(BUILD)
	$(Q)sh bench/timing.sh $(BUILD)
	$(Q)sh bench/allocators.sh $(BUILD)
	$(Q)sh bench/sampling.sh $(BUILD)
	$(Q)sh bench/report.sh $(BUILD)

# Every part of `make bench` at small sizes, each measured once (under a
# minute): that the scripts run, not what they measure.
bench-quick: $(BENCHCORE) $(LIBMEMSIM) $(RECORDER) $(ANALYZE) $(JSONQ) $(TRACECHECK) $(BENCH_PROGRAMS) $(BENCHWATCH) $(BENCHCOUNT) $(BENCHFLOOR) $(BENCH_TIMING)
	$(Q)$(BENCHCORE) --live 10000 --reps 1
	$(Q)BENCH_QUICK=1 sh bench/workloads.sh $(BUILD)
	$(Q)BENCH_QUICK=1 sh bench/threads.sh $(BUILD)
	$(Q)BENCH_ANALYZE_LUA_N=10000 sh bench/analyze.sh $(BUILD) 100000 200000 1
	$(Q)sh bench/procs.sh $(BUILD) 50 1
	$(Q)BENCH_QUICK=1 sh bench/timing.sh $(BUILD)

# The strategy study: real programs traced, replayed through
# every strategy; writes docs/strategies.md's tables and docs/strategies.svg.
study: $(LIBMEMSIM) $(RECORDER) $(ANALYZE) $(JSONQ) $(MEMSIM) $(REPLAY) $(METER) $(BENCHFLOOR)
	$(Q)sh bench/study.sh $(BUILD)

# memsim against its peers: docs/performance.md.
compare: $(LIBMEMSIM) $(RECORDER) $(ANALYZE) $(JSONQ) $(BENCH_PROGRAMS) $(BENCHWATCH) $(BENCHCOUNT)
	$(Q)sh bench/compare.sh $(BUILD)

$(BENCH_PROGRAMS): $(BUILD)/programs/%: bench/programs/%.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O2 -g -pthread -o $@ $<

# bench-watch: wall time, and every process's peak RSS and CPU, of a run.
$(BENCHWATCH): bench/tools/watch.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O2 -g -o $@ $<

# libmallinfo-meter.so: the share of a process's time mallinfo2 takes (bench/timing.sh).
$(MALLINFO_METER): tests/tools/mallinfo_meter.c Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O2 -g -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

# bench-floor: glibc's malloc through a trace's heap operations (bench/analyze.sh).
$(BENCHFLOOR): $(BUILD)/bench/tools/floor.o $(ANALYZER_TESTABLE) $(ALLOC_OBJ) $(LIBCORE)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(ANALYZER_TESTABLE) $(ALLOC_OBJ) $(LIBCORE) $(ANALYZE_LIBS) -lm

# libas-squeeze.so: the address space runs out as memsim-analyze resolves lines (test_analyze.sh).
$(AS_SQUEEZE): tests/tools/as_squeeze.c Makefile | $(DEPS_OK)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O2 -g -fPIC -shared -fvisibility=default -o $@ $< -ldl

# libbench-count.so: a program's heap events, counted apart from either profiler.
$(BENCHCOUNT): bench/tools/count.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(STD) $(WARN) -O2 -g -fPIC -shared -fvisibility=hidden -o $@ $<

# libFuzzer over the analyzer's reader (needs clang); FUZZ_SECONDS long.
FUZZ_SECONDS ?= 20
FUZZ_SRC = tests/fuzz/fuzz_reader.c analyzer/read/reader.c analyzer/consume/summary.c analyzer/consume/findings.c analyzer/consume/mappings.c \
	analyzer/progress.c analyzer/consume/sites.c analyzer/read/symbols.c analyzer/escape.c analyzer/read/modfile.c analyzer/consume/stats.c $(CORE_SRC)
FUZZ_SRC += analyzer/read/symnames.c analyzer/read/symopen.c analyzer/read/symdwarf.c
FUZZ_SRC += analyzer/read/reader_json.c
FUZZ_SRC += analyzer/consume/findings_spike.c analyzer/consume/findings_drift.c analyzer/consume/findings_frag.c \
	analyzer/consume/findings_compose.c
fuzz: | $(DEPS_OK)
	$(Q)if ! command -v clang >/dev/null 2>&1; then \
		echo "fuzz: skipped: clang is not installed (apt-get install clang)"; exit 0; fi; \
	mkdir -p $(BUILD)/fuzz-corpus && cp tests/fuzz/corpus/* $(BUILD)/fuzz-corpus/ && \
	clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-I. $(JANSSON_CFLAGS) $(FUZZ_SRC) -o $(BUILD)/fuzz-reader $(JANSSON_LIBS) $(DW_LIBS) $(ZSTD_LIBS) -lm && \
	{ $(SAN_ENV) $(BUILD)/fuzz-reader -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=0 \
		-artifact_prefix=$(BUILD)/fuzz- $(BUILD)/fuzz-corpus >$(BUILD)/fuzz.log 2>&1; rc=$$?; }; \
	if [ $$rc != 0 ]; then grep -A12 'ERROR\|runtime error' $(BUILD)/fuzz.log | head -n 30; \
		echo "fuzz: failed (exit $$rc; the input is $(BUILD)/fuzz-crash-*, the log $(BUILD)/fuzz.log)"; exit 1; fi; \
	tail -n 3 $(BUILD)/fuzz.log

demo: $(MEMSIM) $(ANALYZE) $(LIBMEMSIM) $(RECORDER) $(REPLAY) $(METER) $(BUILD)/examples/demo_workload
	$(Q)sh scripts/demo.sh $(BUILD)

# make install PREFIX=P: the programs in P/bin, the preload library and
# its recorder in P/lib/memsim (off the linker's search path: memsim run
# finds them from its own location), memsim.h and memsim.pc for programs
# that mark phases, the man pages, bash completion.  make uninstall
# removes exactly these files (and P/lib/memsim).  libmemsim-core.a is
# internal: not installed.
VERSION    = $(shell sed -n 's/^\#define MEMSIM_VERSION "\(.*\)"/\1/p' include/memsim.h)
BINDIR     = $(PREFIX)/bin
LIBDIR     = $(PREFIX)/lib
PKGLIBDIR  = $(LIBDIR)/memsim
INCLUDEDIR = $(PREFIX)/include
PCDIR      = $(LIBDIR)/pkgconfig
MANDIR     = $(PREFIX)/share/man
COMPDIR    = $(PREFIX)/share/bash-completion/completions
MAN1       = memsim memsim-run memsim-analyze memsim-simulate
# The paths written into the man pages and memsim.pc: where they are installed.
SUBST      = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@PKGLIBDIR@|$(PKGLIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g'
HELP2MAN   = sh scripts/help2man.sh

# The man pages, for PREFIX: memsim(1) and each command's from its --help
# (scripts/help2man.sh) with a hand-written tail (man/*.1.tail);
# libmemsim(7) by hand.  Made anew each time: PREFIX is in them.
man: $(MEMSIM) $(ANALYZE)
	$(call say,MAN,$(BUILD)/man)
	$(Q)mkdir -p $(BUILD)/man
	$(Q)$(MEMSIM) help | $(HELP2MAN) memsim 1 "a memory profiler: trace a program, analyze its traces, simulate allocation strategies" \
		$(VERSION) man/memsim.1.tail | $(SUBST) >$(BUILD)/man/memsim.1
	$(Q)$(MEMSIM) run --help | $(HELP2MAN) memsim-run 1 "run a program under libmemsim.so, its process tree's RSS watched" \
		$(VERSION) man/memsim-run.1.tail | $(SUBST) >$(BUILD)/man/memsim-run.1
	$(Q)$(ANALYZE) --help | $(HELP2MAN) memsim-analyze 1 "report what a traced program did with memory" \
		$(VERSION) man/memsim-analyze.1.tail | $(SUBST) >$(BUILD)/man/memsim-analyze.1
	$(Q)$(MEMSIM) simulate --help | $(HELP2MAN) memsim-simulate 1 "run a seeded workload through the simulated allocation strategies" \
		$(VERSION) man/memsim-simulate.1.tail | $(SUBST) >$(BUILD)/man/memsim-simulate.1
	$(Q)$(SUBST) man/libmemsim.7 >$(BUILD)/man/libmemsim.7
	$(Q)$(SUBST) dist/memsim.pc.in >$(BUILD)/memsim.pc

install: $(MEMSIM) $(ANALYZE) $(LIBMEMSIM) $(RECORDER) $(REPLAY) $(METER) man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PCDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(COMPDIR)
	install -m 0755 $(MEMSIM) $(DESTDIR)$(BINDIR)/memsim
	install -m 0755 $(ANALYZE) $(DESTDIR)$(BINDIR)/memsim-analyze
	install -m 0755 $(LIBMEMSIM) $(DESTDIR)$(PKGLIBDIR)/libmemsim.so
	install -m 0755 $(RECORDER) $(DESTDIR)$(PKGLIBDIR)/memsim-recorder
	install -m 0755 $(REPLAY) $(DESTDIR)$(PKGLIBDIR)/memsim-replay
	install -m 0755 $(METER) $(DESTDIR)$(PKGLIBDIR)/libmemsim-meter.so
	install -m 0644 include/memsim.h $(DESTDIR)$(INCLUDEDIR)/memsim.h
	install -m 0644 $(BUILD)/memsim.pc $(DESTDIR)$(PCDIR)/memsim.pc
	install -m 0644 $(MAN1:%=$(BUILD)/man/%.1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(BUILD)/man/libmemsim.7 $(DESTDIR)$(MANDIR)/man7/libmemsim.7
	install -m 0644 dist/memsim.bash $(DESTDIR)$(COMPDIR)/memsim
	install -m 0644 dist/memsim.bash $(DESTDIR)$(COMPDIR)/memsim-analyze

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/memsim $(DESTDIR)$(BINDIR)/memsim-analyze \
		$(DESTDIR)$(PKGLIBDIR)/libmemsim.so $(DESTDIR)$(PKGLIBDIR)/memsim-recorder \
		$(DESTDIR)$(PKGLIBDIR)/memsim-replay $(DESTDIR)$(PKGLIBDIR)/libmemsim-meter.so \
		$(DESTDIR)$(INCLUDEDIR)/memsim.h $(DESTDIR)$(PCDIR)/memsim.pc \
		$(MAN1:%=$(DESTDIR)$(MANDIR)/man1/%.1) $(DESTDIR)$(MANDIR)/man7/libmemsim.7 \
		$(DESTDIR)$(COMPDIR)/memsim $(DESTDIR)$(COMPDIR)/memsim-analyze
	-rmdir $(DESTDIR)$(PKGLIBDIR) 2>/dev/null

clean:
	rm -rf build

-include $(CORE_OBJ:.o=.d) $(ALLOC_OBJ:.o=.d) $(PRELOAD_OBJ:.o=.d) $(RECORDER_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(ANALYZER_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) \
	$(BUILD)/tests/tools/jsonq.d $(BUILD)/tests/tools/tracecheck.d $(PROGRAM_BINS:=.d) \
	$(EXAMPLE_BINS:=.d)
