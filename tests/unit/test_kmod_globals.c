/* Kernel modules' globals (core/ksections.c, symbolize/code_kmoddata.c, data_kmod.c).
 * The section table's encoding is checked on data made here. The naming and relocation
 * run on the real -dbg loop.ko of the kernel lab (build-lab/root, Debian 6.1.0-57-cloud;
 * skipped without it); only its section load addresses are made up here (a recording
 * carries the ones /sys/module/loop/sections showed). */
#include "code_util.h"
#include "core/ksections.h"
#include "core/perfdata.h"
#include "symbolize/data.h"
#include "symbolize/decode.h"

#define KV "6.1.0-57-cloud-amd64"
#define LOOP "/lib/modules/" KV "/kernel/drivers/block/loop.ko"
#define ROOT "build-lab/root"
#define START 0xffffffffc03c1000ull	/* .text, as /proc/modules showed in the lab */
#define DATA 0xffffffffc03c9000ull
#define BSS 0xffffffffc03ca000ull

static void test_sections_round_trip_and_perf_padding(void **state)
{
	struct hm_ksect v[3] = {{".text", START}, {".data", DATA}, {".data..percpu", 0x3c800}};
	struct hm_ksect out[4];
	uint8_t buf[256], zeros[32] = {0};
	size_t n;

	(void)state;
	n = hm_ksect_encode(v, 3, buf, sizeof(buf));
	assert_true(n > 0 && n % 8 == 0);
	assert_int_equal(hm_ksect_decode(buf, n, out, 4), 3);
	assert_string_equal(out[2].name, ".data..percpu");
	assert_int_equal(out[1].addr, DATA);
	assert_int_equal(hm_ksect_decode(zeros, sizeof(zeros), out, 4), 0);	/* perf's */
	assert_int_equal(hm_ksect_encode(v, 3, buf, 40), 0);	/* does not fit */
}

/* A module MMAP record with the section table written and read back by hitmap, with its
 * sample_id_all trailer intact behind it; and, where linux-perf is installed, real perf
 * script reads the same file and prints the module's filename as written (the file is
 * made here; the lab checks perf on a real recording). */
static void test_mmap_extra_survives_and_perf_reads_it(void **state)
{
	const char *file = "/lib/modules/6.1.0-test/kernel/drivers/block/loop.ko";
	struct hm_ksect v[2] = {{".text", START}, {".data", DATA}}, got[4];
	struct hm_perf_attr attr = {0};
	static const uint64_t ids[1] = {7};
	struct hm_perfdata_writer *w;
	struct hm_perfdata *pd;
	struct hm_perf_event ev;
	struct hm_err err = {0};
	uint8_t extra[256];
	char path[600];
	int seen = 0, rc;

	(void)state;
	snprintf(path, sizeof(path), "%s/kmod.data", P.dir);
	attr.attr.type = PERF_TYPE_SOFTWARE;
	attr.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	attr.attr.sample_id_all = 1;
	attr.ids = ids;
	attr.nr_ids = 1;
	assert_int_equal(hm_perfdata_create(path, &attr, 1, 0, &w, &err), 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = PERF_RECORD_MMAP;
	ev.misc = PERF_RECORD_MISC_KERNEL;
	ev.attr = hm_perfdata_writer_attr(w, 0);
	ev.sid = (struct hm_perf_sample_id){(uint32_t)-1, (uint32_t)-1, 1, 777, 7, 0};
	ev.mmap = (struct hm_perf_mmap){.pid = (uint32_t)-1, .tid = (uint32_t)-1,
					.start = START, .len = 0x8000, .filename = file};
	ev.mmap.extra = extra;
	ev.mmap.extra_len = hm_ksect_encode(v, 2, extra, sizeof(extra));
	assert_int_equal(hm_perfdata_write(w, &ev, &err) < 0, 0);
	assert_int_equal(hm_perfdata_finish(w, NULL, &err), 0);
	hm_perfdata_writer_close(w);

	assert_int_equal(hm_perfdata_open(path, &pd, &err), 0);
	while ((rc = hm_perfdata_next(pd, &ev, &err)) > 0)
		if (ev.type == PERF_RECORD_MMAP) {
			assert_string_equal(ev.mmap.filename, file);
			assert_int_equal(hm_ksect_decode(ev.mmap.extra, ev.mmap.extra_len, got, 4), 2);
			assert_string_equal(got[1].name, ".data");
			assert_int_equal(got[1].addr, DATA);
			assert_true(ev.has_sid);
			assert_int_equal(ev.sid.time, 777);
			seen++;
		}
	assert_int_equal(rc, 0);
	assert_int_equal(seen, 1);
	hm_perfdata_close(pd);
	if (run("command -v perf >/dev/null 2>&1") == 0)
		assert_int_equal(run("perf script -i %s --show-mmap-events -F ip 2>/dev/null | grep -q "
				     "'PERF_RECORD_MMAP -1/-1: \\[0x%llx(0x8000) @ 0\\]: . %s$'",
				     path, (unsigned long long)START, file), 0);
}

/* loop_ctl_mutex's offset in .data, and the first .rela.text place that addresses .data
 * rip-relatively (R_X86_64_PC32 against the .data symbol: loop.ko's own loads; its
 * references to loop_ctl_mutex are `mov $loop_ctl_mutex,%rdi` immediates, R_X86_64_32S)
 * with *target the .data offset it means when the place ends its instruction. */
static int loop_facts(const char *ko, uint64_t *mutex_off, uint64_t *place, uint64_t *target)
{
	int fd = open(ko, O_RDONLY), found = 0;
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstr, datandx = 0;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL)) || elf_getshdrstrndx(e, &shstr))
		return -1;
	*mutex_off = UINT64_MAX;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(e, shstr, sh.sh_name), ".data"))
			datandx = elf_ndxscn(scn);
		if (sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			gelf_getsym(d, (int)i, &s);
			if (!strcmp(elf_strptr(e, sh.sh_link, s.st_name), "loop_ctl_mutex"))
				*mutex_off = s.st_value;
		}
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh, ssh;
		Elf_Data *d, *sd;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_RELA ||
		    strcmp(elf_strptr(e, shstr, sh.sh_name), ".rela.text") || !(d = elf_getdata(scn, NULL)))
			continue;
		gelf_getshdr(elf_getscn(e, sh.sh_link), &ssh);
		sd = elf_getdata(elf_getscn(e, sh.sh_link), NULL);
		for (size_t i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym s;

			gelf_getrela(d, (int)i, &r);
			gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &s);
			if (GELF_R_TYPE(r.r_info) == R_X86_64_PC32 && s.st_shndx == datandx &&
			    GELF_ST_TYPE(s.st_info) == STT_SECTION) {
				*place = r.r_offset;
				*target = s.st_value + (uint64_t)r.r_addend + 4;
				found = 1;
			}
		}
	}
	elf_end(e);
	close(fd);
	return found && *mutex_off != UINT64_MAX ? 0 : -1;
}

/* The instruction whose last 4 bytes are at .text offset place, decoded from the
 * relocated bytes: its rip-relative operand is loop_ctl_mutex where .data was put. */
static void check_relocated_operand(struct hm_code *c, uint64_t place, uint64_t want)
{
	struct hm_decoder *dec;
	struct hm_err err = {0};
	int checked = 0;

	assert_int_equal(hm_decode_open(&dec, &err), 0);
	for (uint64_t len = 5; len <= 12 && !checked; len++) {	/* where it starts */
		uint8_t b[16];
		struct hm_insn in;
		uint64_t ip = START + place + 4 - len, ea;

		if (hm_code_read(c, 0, ip, 1, b, len) != len ||
		    hm_decode_insn(dec, b, len, ip, &in) != 0 || in.len != len || !in.nr_mem ||
		    in.mem[0].base != HM_REG_RIP)
			continue;
		assert_int_equal(hm_decode_ea(&in, &in.mem[0], 0, NULL, 0, 0, &ea, NULL), 0);
		assert_int_equal(ea, want);
		assert_int_equal(hm_code_kernel_relocated(c, ip, in.len), 0);	/* decoded now */
		checked = 1;
	}
	assert_true(checked);
	hm_decode_close(dec);
}

static void test_loop_ko_global_named_and_relocated(void **state)
{
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = KALLSYMS, .kernel_release = KV,
				 .sysroot = ROOT, .kcore = ""};
	struct hm_ksect v[3] = {{".text", START}, {".data", DATA}, {".bss", BSS}};
	uint8_t buf[256];
	uint64_t off = 0, place = 0, target = 0, got;
	const char *path, *sec;
	struct hm_code *c;
	struct hm_data *d;
	struct hm_err err = {0};
	struct hm_data_query q = {.kernel = 1};
	struct hm_data_obj obj;
	struct hm_data_stats st;
	size_t n;

	(void)state;
	if (access(ROOT "/usr/lib/debug" LOOP, R_OK) ||
	    loop_facts(ROOT "/usr/lib/debug" LOOP, &off, &place, &target))
		skip();
	c = open_code(&o);
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, START, 0x10000, 0, LOOP, NULL, 0), 0);
	n = hm_ksect_encode(v, 3, buf, sizeof(buf));
	assert_int_equal(hm_code_add_kmod_sections(c, START, buf, n), 0);
	assert_int_equal(hm_code_kernel_datasec(c, DATA + off + 8, &path, &sec, &got), 0);
	assert_string_equal(sec, ".data");
	assert_int_equal(got, off + 8);
	check_relocated_operand(c, place, DATA + target);

	/* Named through loop.ko's DWARF: the mutex's owner word, as a mutex spinner reads it */
	assert_int_equal(hm_data_open(&d, &err), 0);
	hm_data_set_files(d, c);
	q.addr = DATA + off;
	assert_int_equal(hm_data_resolve(d, &q, &obj), 0);
	assert_int_equal(obj.method, HM_M_GLOBAL);
	assert_string_equal(obj.object, "loop_ctl_mutex");
	assert_non_null(obj.type);
	assert_string_equal(obj.field, "loop_ctl_mutex.owner.counter");
	assert_int_equal(obj.base, DATA + off);
	/* past the end of .data (its size from the file), still in the module: not named */
	q.addr = DATA + 0x800;
	assert_int_equal(hm_data_resolve(d, &q, &obj), 0);
	assert_int_not_equal(obj.method, HM_M_GLOBAL);
	hm_data_stats(d, 0, &st);
	assert_int_equal(st.kmod_globals, 1);
	hm_data_close(d);
	hm_code_close(c);
}

/* xfs.ko's statistics (the real -dbg xfs.ko, its .bss put at a made-up address): xfsstats
 * shares its address with the empty `static struct lock_class_key __key` variables of a
 * kernel without lockdep, which hold no byte and must not name it (XFS_STATS_INC reads
 * xfsstats.xs_stats on every read). */
static void test_xfs_ko_stats_not_shadowed_by_empty_key(void **state)
{
	const char *file = "/lib/modules/" KV "/kernel/fs/xfs/xfs.ko";
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = KALLSYMS, .kernel_release = KV,
				 .sysroot = ROOT, .kcore = ""};
	struct hm_ksect v[2] = {{".text", START}, {".bss", START + 0x1c0000}};
	struct hm_data_query q = {.kernel = 1, .addr = START + 0x1c0000 + 0xc0};
	uint8_t buf[128];
	struct hm_code *c;
	struct hm_data *d;
	struct hm_err err = {0};
	struct hm_data_obj obj;

	(void)state;
	if (access(ROOT "/usr/lib/debug/lib/modules/" KV "/kernel/fs/xfs/xfs.ko", R_OK))
		skip();
	c = open_code(&o);
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, START, 0x1e1000, 0, file, NULL, 0), 0);
	assert_int_equal(hm_code_add_kmod_sections(c, START, buf,
						   hm_ksect_encode(v, 2, buf, sizeof(buf))), 0);
	assert_int_equal(hm_data_open(&d, &err), 0);
	hm_data_set_files(d, c);
	assert_int_equal(hm_data_resolve(d, &q, &obj), 0);
	assert_int_equal(obj.method, HM_M_GLOBAL);
	assert_string_equal(obj.object, "xfsstats");	/* readelf: .bss+0xc0, 104 bytes */
	assert_string_equal(obj.field, "xfsstats.xs_stats");
	hm_data_close(d);
	hm_code_close(c);
}

/* A module's per-CPU variable (synthesized: tests/data/kmod_percpu.c built here stands in
 * for the .ko, its .data..percpu placed at a made-up per-CPU offset): %gs:off names it
 * with its field, through the module's DWARF. */
static void test_module_percpu_variable_named(void **state)
{
	const char *file = "/lib/modules/6.1.0-test/kernel/fs/hmpcpu.ko";
	struct hm_code_opts o = {.vmlinux = "", .kallsyms = KALLSYMS,
				 .kernel_release = "6.1.0-test", .sysroot = P.dir, .kcore = ""};
	struct hm_ksect v[2] = {{".text", START}, {".data..percpu", 0x3c800}};
	/* mov %gs:0x3c808,%rax: CPU-local hm_pcpu.writes */
	static const uint8_t mov[] = {0x65, 0x48, 0x8b, 0x04, 0x25, 0x08, 0xc8, 0x03, 0x00};
	char ko[700], dir[600];
	uint8_t buf[128];
	struct hm_code *c;
	struct hm_data *d;
	struct hm_decoder *dec;
	struct hm_err err = {0};
	struct hm_insn in;
	struct hm_data_obj obj;
	uint64_t off;
	const char *path;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/usr/lib/debug/lib/modules/6.1.0-test/kernel/fs", P.dir);
	snprintf(ko, sizeof(ko), "%s/hmpcpu.ko", dir);
	assert_int_equal(run("mkdir -p %s && gcc -O2 -g -c -o %s tests/data/kmod_percpu.c", dir,
			     ko), 0);
	c = open_code(&o);
	assert_int_equal(hm_code_add_map(c, (uint32_t)-1, START, 0x10000, 0, file, NULL, 0), 0);
	assert_int_equal(hm_code_add_kmod_sections(c, START, buf,
						   hm_ksect_encode(v, 2, buf, sizeof(buf))), 0);
	assert_int_equal(hm_code_kernel_percpusec(c, 0x3c808, &path, &off), 0);
	assert_int_equal(off, 8);
	assert_int_not_equal(hm_code_kernel_percpusec(c, 0x3c800 + 16, &path, &off), 0);

	assert_int_equal(hm_decode_open(&dec, &err), 0);
	assert_int_equal(hm_decode_insn(dec, mov, sizeof(mov), START, &in), 0);
	assert_int_equal(hm_data_open(&d, &err), 0);
	hm_data_set_files(d, c);
	{
		struct hm_data_query q = {.ip = START, .insn = &in, .op = &in.mem[0], .kernel = 1};

		assert_int_equal(hm_data_resolve(d, &q, &obj), 0);
	}
	assert_int_equal(obj.method, HM_M_GLOBAL);
	assert_string_equal(obj.object, "hm_pcpu");
	assert_string_equal(obj.field, "hm_pcpu.writes");
	assert_int_equal(obj.offset, 8);
	hm_data_close(d);
	hm_decode_close(dec);
	hm_code_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections_round_trip_and_perf_padding),
		cmocka_unit_test(test_mmap_extra_survives_and_perf_reads_it),
		cmocka_unit_test(test_loop_ko_global_named_and_relocated),
		cmocka_unit_test(test_xfs_ko_stats_not_shadowed_by_empty_key),
		cmocka_unit_test(test_module_percpu_variable_named),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_prog);
}
