/* BTF type source through libbpf: raw BTF (/sys/kernel/btf/vmlinux) or an ELF .BTF
 * section. BTF has no alignment attributes; alignment is inferred from the layout. */
#include "symbolize/layout_int.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"

#define HM_BTF_CHUNK 4096	/* ids indexed per index_more call */
#define HM_BTF_MAX_DEPTH 64
#define HM_BTF_MAX_BYTES (1u << 30)	/* raw BTF read whole; vmlinux's is about 5 MiB */

struct btf_src {
	struct btf *btf;
	struct hm_layout *base;		/* a split BTF's base layout (vmlinux's for a module),
					 * borrowed: its types below first are converted there */
	uint32_t first;			/* the first id of this layout's own types */
	uint32_t next_id, nr_types;
	const struct hm_type **types;	/* by id - first, converted on demand */
};

static struct btf_src *src_of(struct hm_layout *lay) { return lay->priv; }

static int btf_index_more(struct hm_layout *lay)
{
	struct btf_src *s = src_of(lay);
	uint32_t end = s->next_id + HM_BTF_CHUNK;

	if (end > s->nr_types)
		end = s->nr_types;
	for (; s->next_id < end; s->next_id++) {
		const struct btf_type *bt = btf__type_by_id(s->btf, s->next_id);
		const char *name = btf__name_by_offset(s->btf, bt->name_off);
		const char *kw;

		if (!name || !*name)
			continue;
		switch (btf_kind(bt)) {
		case BTF_KIND_STRUCT: kw = "struct"; break;
		case BTF_KIND_UNION: kw = "union"; break;
		case BTF_KIND_TYPEDEF: kw = NULL; break;
		case BTF_KIND_VAR: kw = "var"; break;
		case BTF_KIND_FUNC: kw = "func"; break;
		default: continue;
		}
		hm_layout_index_add(lay, kw, name, s->next_id);
	}
	return s->next_id < s->nr_types;
}

static const struct hm_type *convert(struct hm_layout *lay, uint32_t id, int depth);

static void convert_func(struct hm_layout *lay, const struct btf_type *bt, struct hm_type *t,
			 int depth)
{
	const struct btf_param *p = btf_params(bt);
	uint16_t n = btf_vlen(bt);

	t->ref = convert(lay, bt->type, depth + 1);
	t->params = hm_arena_alloc(&lay->arena, (n ? n : 1) * sizeof(*t->params));
	for (uint16_t i = 0; i < n; i++) {
		if (i == n - 1 && p[i].type == 0 && !p[i].name_off) {
			t->variadic = 1;	/* a trailing void parameter means ... */
			break;
		}
		t->params[t->nr_params++] = convert(lay, p[i].type, depth + 1);
	}
}

static void fill(struct hm_layout *lay, const struct btf_type *bt, uint32_t id,
		 struct hm_type *t, int depth)
{
	struct btf_src *s = src_of(lay);
	const struct btf_array *arr;

	switch (btf_kind(bt)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
		t->kind = HM_T_BASE;
		t->size = bt->size;
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		t->kind = HM_T_ENUM;
		t->size = bt->size;
		break;
	case BTF_KIND_PTR:
		t->kind = HM_T_PTR;
		t->size = (uint64_t)btf__pointer_size(s->btf);
		t->ref = convert(lay, bt->type, depth + 1);
		break;
	case BTF_KIND_ARRAY:
		arr = btf_array(bt);
		t->kind = HM_T_ARRAY;
		t->ref = convert(lay, arr->type, depth + 1);
		t->nelems = arr->nelems;
		t->size = t->ref ? arr->nelems * t->ref->size : 0;
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		t->kind = btf_kind(bt) == BTF_KIND_UNION ? HM_T_UNION : HM_T_STRUCT;
		t->size = bt->size;
		t->src = lay;
		t->key = id;
		break;
	case BTF_KIND_FWD:
		t->kind = HM_T_FWD;
		break;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		t->kind = btf_kind(bt) == BTF_KIND_TYPEDEF ? HM_T_TYPEDEF :
			  btf_kind(bt) == BTF_KIND_CONST ? HM_T_CONST :
			  btf_kind(bt) == BTF_KIND_VOLATILE ? HM_T_VOLATILE :
			  btf_kind(bt) == BTF_KIND_RESTRICT ? HM_T_RESTRICT : HM_T_ATOMIC;
		t->ref = convert(lay, bt->type, depth + 1);
		t->size = t->ref ? t->ref->size : 0;
		if (btf_kind(bt) == BTF_KIND_TYPE_TAG)
			t->kind = HM_T_TYPEDEF;	/* __user and friends: transparent */
		else
			hm_type_set_alias(t);
		break;
	case BTF_KIND_FUNC_PROTO:
		t->kind = HM_T_FUNC;
		convert_func(lay, bt, t, depth);
		break;
	default:
		t->kind = HM_T_VOID;
		break;
	}
}

static const struct hm_type *convert(struct hm_layout *lay, uint32_t id, int depth)
{
	struct btf_src *s = src_of(lay);
	const struct btf_type *bt;
	struct hm_type *t;
	const char *name;

	if (id == 0 || id >= s->nr_types)
		return NULL;	/* void */
	if (id < s->first)	/* a module's member of the base's type: the base's */
		return s->base ? convert(s->base, id, depth) : NULL;
	if (s->types[id - s->first])
		return s->types[id - s->first];
	t = hm_arena_alloc(&lay->arena, sizeof(*t));
	s->types[id - s->first] = t;
	if (depth > HM_BTF_MAX_DEPTH || !(bt = btf__type_by_id(s->btf, id)))
		return t;
	name = btf__name_by_offset(s->btf, bt->name_off);
	t->name = name && *name ? name : NULL;
	fill(lay, bt, id, t, depth);
	if (btf_kind(bt) == BTF_KIND_TYPE_TAG)
		t->name = NULL;
	return t;
}

static const struct hm_type *btf_type_at(struct hm_layout *lay, uint64_t ref)
{
	return convert(lay, (uint32_t)ref, 0);
}

static void btf_load_members(struct hm_layout *lay, struct hm_type *t)
{
	struct btf_src *s = src_of(lay);
	const struct btf_type *bt = btf__type_by_id(s->btf, (uint32_t)t->key);
	const struct btf_member *bm;
	uint16_t n;

	if (!bt || !(n = btf_vlen(bt)))
		return;
	bm = btf_members(bt);
	t->members = hm_arena_alloc(&lay->arena, n * sizeof(*t->members));
	for (uint16_t i = 0; i < n; i++) {
		struct hm_member *m = &t->members[i];
		const char *name = btf__name_by_offset(s->btf, bm[i].name_off);

		m->name = name && *name ? name : NULL;
		m->type = convert(lay, bm[i].type, 0);
		m->bit_offset = btf_member_bit_offset(bt, i);
		m->bit_size = btf_member_bitfield_size(bt, i);
	}
	t->nr_members = n;
}

/* A VAR's type, or a FUNC's prototype (FUNC_PROTO): both are bt->type. */
static const struct hm_type *btf_var_type(struct hm_layout *lay, uint64_t ref)
{
	const struct btf_type *bt = btf__type_by_id(src_of(lay)->btf, (uint32_t)ref);

	return bt ? convert(lay, bt->type, 0) : NULL;
}

static void btf_close(struct hm_layout *lay)
{
	struct btf_src *s = src_of(lay);

	if (!s)
		return;
	btf__free(s->btf);
	free(s->types);
	free(s);
}

static const struct hm_layout_ops btf_ops = {
	.index_more = btf_index_more,
	.type = btf_type_at,
	.load_members = btf_load_members,
	.var_type = btf_var_type,
	.close = btf_close,
};

/* Raw BTF: the whole file, read (not mapped: a file that shrinks under a mapping ends
 * the process with SIGBUS). */
static struct btf *btf_raw(int fd, const char *path, struct hm_err *err)
{
	size_t len = 0, cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	struct btf *btf;
	ssize_t n;

	while (buf && (n = read(fd, buf + len, cap - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			hm_err_set(err, HM_EXIT_INPUT, "%s: read failed: %s: check the file", path,
				   strerror(errno));
			return NULL;
		}
		len += (size_t)n;
		if (len == cap && cap < HM_BTF_MAX_BYTES) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		} else if (len == cap) {
			free(buf);
			hm_err_set(err, HM_EXIT_INPUT, "%s: over %u MiB: not raw BTF (for an ELF "
				   "file it needs the ELF magic)", path, HM_BTF_MAX_BYTES >> 20);
			return NULL;
		}
	}
	if (!buf) {
		hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", path);
		return NULL;
	}
	btf = btf__new(buf, (uint32_t)len);	/* copies the bytes */
	free(buf);
	if (!btf)
		hm_err_set(err, HM_EXIT_INPUT, "%s: no readable BTF: give raw BTF such as "
			   "/sys/kernel/btf/vmlinux or an ELF file with a .BTF section (for DWARF "
			   "drop --btf)", path);
	return btf;
}

static Elf_Scn *find_scn(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* An ELF file's .BTF section, checked before libbpf sees it: it must hold bytes
 * (SHT_NOBITS has none, and libbpf's btf__parse read through its NULL data) that lie
 * inside the file. libelf reads it with pread, not a mapping. */
static struct btf *btf_elf(int fd, const char *path, struct hm_err *err)
{
	Elf *elf;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d = NULL;
	struct stat st;
	struct btf *btf = NULL;
	const char *why = NULL;

	elf_version(EV_CURRENT);
	if (fstat(fd, &st) != 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		hm_err_set(err, HM_EXIT_INPUT, "%s: corrupt ELF (%s): copy or rebuild the file",
			   path, elf_errmsg(-1));
		return NULL;
	}
	if (!(scn = find_scn(elf, ".BTF", &sh)))
		why = "no .BTF section";
	else if (sh.sh_type == SHT_NOBITS)
		why = "its .BTF section is SHT_NOBITS (no bytes in the file)";
	else if (sh.sh_offset > (uint64_t)st.st_size || sh.sh_size > (uint64_t)st.st_size - sh.sh_offset)
		why = "its .BTF section runs past the end of the file";
	else if (sh.sh_size > UINT32_MAX || !(d = elf_rawdata(scn, NULL)) || !d->d_buf ||
		 d->d_size != sh.sh_size)
		why = "its .BTF section cannot be read";
	else if (!(btf = btf__new(d->d_buf, (uint32_t)d->d_size)))
		why = "its .BTF section is not valid BTF";
	if (why)
		hm_err_set(err, HM_EXIT_INPUT, "%s: %s: give an ELF file with BTF (pahole -J) or "
			   "raw BTF such as /sys/kernel/btf/vmlinux (for DWARF drop --btf)", path, why);
	elf_end(elf);
	return btf;
}

/* A layout over btf (freed with it), naming its types from id first; those below first
 * are base's. */
static int wrap(struct btf *btf, struct hm_layout *base, uint32_t first, const char *path,
		struct hm_layout **out, struct hm_err *err)
{
	struct hm_layout *lay;
	struct btf_src *s;

	/* Every record is a multiple of 4 bytes, so an aligned first type aligns them all;
	 * libbpf takes a header length that is not (the kernel refuses it). */
	if (btf__type_cnt(btf) > first && ((uintptr_t)btf__type_by_id(btf, first) & 3)) {
		btf__free(btf);
		return hm_err_set(err, HM_EXIT_INPUT, "%s: corrupt BTF: its type section is not "
				  "4-byte aligned (header length or type offset): regenerate it "
				  "(pahole -J)", path);
	}
	lay = malloc(sizeof(*lay));
	s = calloc(1, sizeof(*s));
	if (!lay || !s) {
		free(lay);
		free(s);
		btf__free(btf);
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", path);
	}
	hm_layout_base_init(lay, &btf_ops, HM_LAYOUT_BTF, path);
	lay->priv = s;
	s->btf = btf;
	s->base = base;
	s->first = first;
	s->nr_types = btf__type_cnt(btf);
	s->next_id = first;
	s->types = calloc(s->nr_types - first + 1, sizeof(*s->types));
	if (!s->types) {
		hm_layout_close(lay);
		return hm_err_set(err, HM_EXIT_ENV, "%s: out of memory", path);
	}
	*out = lay;
	return 0;
}

int hm_layout_open_btf(const char *path, struct hm_layout **out, struct hm_err *err)
{
	struct btf *btf;
	unsigned char magic[4];
	int fd = hm_file_open(path), e = errno;

	*out = NULL;
	if (fd < 0)
		return hm_err_set(err, e == EACCES ? HM_EXIT_ENV : HM_EXIT_INPUT, "%s: %s%s",
				  path, hm_file_strerror(e),
				  e == ENOENT && !strcmp(path, "/sys/kernel/btf/vmlinux")
					  ? " (kernel built without CONFIG_DEBUG_INFO_BTF: use "
					    "'hitmap layout VMLINUX' with a -dbg vmlinux instead)"
					  : e == EACCES ? " (run as root)" : "");
	libbpf_set_print(NULL);	/* library code does not print; the error says it all */
	if (pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "\177ELF", 4))
		btf = btf_elf(fd, path, err);
	else
		btf = btf_raw(fd, path, err);
	close(fd);
	if (!btf)
		return -1;
	return wrap(btf, NULL, 1, path, out, err);
}


int hm_layout_open_btf_split(const char *path, struct hm_layout *base, struct hm_layout **out,
			     struct hm_err *err)
{
	struct btf *btf;

	*out = NULL;
	if (!base || base->ops != &btf_ops)
		return hm_err_set(err, HM_EXIT_INPUT, "%s: split BTF needs its base as BTF (%s "
				  "is not): give /sys/kernel/btf/vmlinux of the same kernel", path,
				  base ? hm_layout_path(base) : "none");
	libbpf_set_print(NULL);
	/* sysfs BTF files do not shrink under a reader: libbpf reads them whole */
	if (!(btf = btf__parse_raw_split(path, src_of(base)->btf)))
		return hm_err_set(err, HM_EXIT_INPUT, "%s: no readable split BTF over %s: give "
				  "a module's /sys/kernel/btf/MODULE of the same kernel", path,
				  hm_layout_path(base));
	/* the module's own types come after the base's ids; only they are indexed */
	return wrap(btf, base, btf__type_cnt(src_of(base)->btf), path, out, err);
}

int hm_layout_btf_enum(struct hm_layout *lay, const char *type, const char *name,
		       int64_t *value)
{
	const struct btf *btf = lay && lay->ops == &btf_ops ? src_of(lay)->btf : NULL;
	int id = btf ? btf__find_by_name_kind(btf, type, BTF_KIND_ENUM) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (uint16_t i = 0; e && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name)) {
			*value = e[i].val;
			return 0;
		}
	return -1;
}
