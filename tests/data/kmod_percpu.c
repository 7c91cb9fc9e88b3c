/* Built with gcc -O2 -g -c by tests/unit/test_kmod_globals.c: a stand-in for a kernel
 * module with a per-CPU variable (its own .data..percpu section, as DEFINE_PER_CPU puts
 * one in a .ko). */
struct hm_pcpu_stats {
	long reads, writes;
};

__attribute__((section(".data..percpu"))) struct hm_pcpu_stats hm_pcpu = {1, 2};

long hm_pcpu_read(void)
{
	return hm_pcpu.writes;
}
