# hitmap build. `make` builds ./hitmap; see README.md for the other targets.
CC      ?= cc
PREFIX  ?= /usr/local
PKGS    := libdw libelf capstone libbpf libdeflate
CFLAGS  ?= -O2 -g
# Kept apart from CFLAGS so that `make CFLAGS=...` (the asan build) keeps them.
HM_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# -lstdc++: the C++ ABI's demangler (__cxa_demangle) for C++ function names.
HM_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ldw -lelf -lcapstone -lbpf -ldeflate) -lpfm -lm -lstdc++
BUILD   ?= build

LIB_SRCS  := $(sort $(wildcard core/*.c collectors/*.c symbolize/*.c resolve/*.c analyzer/*.c render/*.c))
CLI_SRCS  := $(sort $(wildcard cli/*.c))
TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# Tools the e2e tests run (tests/tools/*.c), linked against the library without cmocka.
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)
LIB       := $(BUILD)/libhitmap.a
BIN       ?= hitmap

.PHONY: all deps check test asan asan-test tsan-build demo bench bench-mem bench-tools install clean fmt examples print-libs

all: $(BIN)

# What a program linked against build/libhitmap.a needs: scripts that build their own
# tools (tests/kernel, the fuzz replayer) take it from here, not from a copy.
print-libs:
	@echo $(HM_LIBS)

$(BIN): $(CLI_OBJS) $(LIB)
	$(CC) $(CFLAGS) $(HM_CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(HM_LIBS) $(LDLIBS)

$(LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(HM_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(HM_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(LIB) $(HM_LIBS) $(LDLIBS) -lcmocka

$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(HM_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(LIB) $(HM_LIBS) $(LDLIBS)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_BINS:=.d) $(TOOL_BINS:=.d)

# Installs what the build and the tests need on a fresh Debian 12 machine, only when missing.
DEB_PKGS := build-essential pkg-config libdw-dev libelf-dev libdeflate-dev libcapstone-dev libpfm4-dev \
            libbpf-dev libcmocka-dev libdebuginfod-dev linux-perf dwarves python3 clang \
            libclang-rt-14-dev dwz chromium python3-jsonschema
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

examples:
	$(MAKE) -C examples

test: $(BIN) $(TEST_BINS) $(TOOL_BINS) $(BUILD)/bench/perfgrow examples
	@BUILD=$(BUILD) HITMAP=./$(BIN) tests/run.sh

# The whole suite, then again under ASan+UBSan, then the threads' checks under TSan; one
# closing line for all.
check: deps
	@$(MAKE) --no-print-directory all $(TEST_BINS) $(TOOL_BINS) $(BUILD)/bench/perfgrow examples >/dev/null
	@$(MAKE) --no-print-directory asan-build >/dev/null
	@rm -f $(BUILD)/results.normal $(BUILD)/results.asan $(BUILD)/results.tsan
	@BUILD=$(BUILD) HITMAP=./$(BIN) HM_RESULTS=$(BUILD)/results.normal tests/run.sh || true
	@BUILD=build-asan HITMAP=./build-asan/hitmap HM_RESULTS=$(BUILD)/results.asan HM_SUITE=asan \
		ASAN_OPTIONS=detect_leaks=1 tests/run.sh || true
	@$(MAKE) --no-print-directory tsan-build >/dev/null
	@BUILD=build-tsan HITMAP=./build-tsan/hitmap HM_RESULTS=$(BUILD)/results.tsan HM_SUITE=tsan \
		HM_E2E="tests/e2e/jobs.sh tests/e2e/whatif_stream.sh" \
		HM_UNITS="build-tsan/tests/test_debugfile build-tsan/tests/test_handoff build-tsan/tests/test_warm build-tsan/tests/test_whatif" \
		TSAN_OPTIONS=halt_on_error=1 \
		tests/run.sh || true
	@tests/total.sh $(BUILD)/results.normal $(BUILD)/results.asan $(BUILD)/results.tsan

ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan-build:
	@$(MAKE) --no-print-directory BUILD=build-asan BIN=build-asan/hitmap CFLAGS="$(ASAN_FLAGS)" \
		LDFLAGS="-fsanitize=address,undefined" build-asan/hitmap \
		$(TEST_SRCS:tests/unit/%.c=build-asan/tests/%) $(TOOL_SRCS:tests/tools/%.c=build-asan/tests/tools/%)

# The threaded read (--jobs 2 and 3: resolve/handoff.h, core/perfdata_ahead.h) under
# ThreadSanitizer: tests/e2e/jobs.sh, its reports compared byte for byte, and
# tests/e2e/whatif_stream.sh (a streamed whatif's first read hands its accesses on); and
# test_debugfile (debug files inflated ahead on a thread while an opener waits for them);
# test_handoff (batches the consumer's thread gathers from the producer's array);
# test_warm (a file's indexes built ahead on a thread while a ti waits for them);
# test_whatif (the replay's reading thread places accesses in slots it hands to the
# after side's thread).
tsan-build:
	@$(MAKE) --no-print-directory BUILD=build-tsan BIN=build-tsan/hitmap \
		CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" build-tsan/hitmap \
		build-tsan/tests/test_debugfile build-tsan/tests/test_handoff build-tsan/tests/test_warm \
		build-tsan/tests/test_whatif

asan: deps asan-build examples
	@BUILD=build-asan HITMAP=./build-asan/hitmap HM_SUITE=asan tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all examples >/dev/null
	@examples/demo.sh ./$(BIN)

# Benchmark tools (bench/README.md), linked against the library like the unit tests.
BENCH_BINS := $(BUILD)/bench/perfgrow $(BUILD)/bench/symbench $(BUILD)/bench/memgen
bench-tools: $(BENCH_BINS)

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(HM_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(LIB) $(HM_LIBS) $(LDLIBS)

-include $(BENCH_BINS:=.d)

bench: deps all examples $(BENCH_BINS)
	@bench/run.sh ./$(BIN)
	@bench/mem.sh ./$(BIN)

# Peak memory of report, compare and whatif alone (bench/README.md, bench/mem.sh).
bench-mem: all $(BENCH_BINS)
	@bench/mem.sh ./$(BIN)

# libFuzzer targets (tests/fuzz/README.md): built with clang into build-fuzz/, apart from
# build/ and build-asan/; each runs FUZZ_SECONDS on seeds that tests/fuzz/seeds.sh makes
# from the examples and the shared perf.data fixtures. Fails if any target crashes.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := perfdata layout_dwarf layout_btf decode report btf_elf kcore
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=all
FUZZ_BINS    := $(FUZZ_TARGETS:%=build-fuzz/fuzz/%_fuzz)

.PHONY: fuzz fuzz-build
fuzz: deps
	@$(MAKE) --no-print-directory all examples >/dev/null
	@$(MAKE) --no-print-directory fuzz-build >/dev/null
	@tests/fuzz/seeds.sh build-fuzz/corpus ./$(BIN)
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# -Wno-error: clang warns where gcc (the project's compiler) does not; make still builds -Werror.
fuzz-build:
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=$(FUZZ_CC) CFLAGS="$(FUZZ_FLAGS)" \
		HM_CFLAGS="$(HM_CFLAGS) -Wno-error" $(FUZZ_BINS)

build-fuzz/fuzz/%_fuzz: tests/fuzz/%_fuzz.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(HM_CFLAGS) -fsanitize=fuzzer,address,undefined -MMD -MP -o $@ $< \
		$(LIB) $(HM_LIBS) $(LDLIBS)

-include $(FUZZ_BINS:=.d)

# The kernel lab (tests/kernel/run.sh, docs/kernel.md): a Debian cloud kernel under QEMU
# TCG, four workloads recorded with `hitmap record -k -a`, reported in the guest and on the
# host; fetches what it needs into build-lab/ on first use. Not part of `make check`.
.PHONY: lab
lab: deps
	@tests/kernel/run.sh

install: $(BIN)
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/hitmap

fmt:
	clang-format -i $(LIB_SRCS) $(CLI_SRCS) $(TEST_SRCS) $(wildcard */*.h)

clean:
	rm -rf build build-asan build-tsan build-fuzz $(BIN)
	$(MAKE) -C examples clean
