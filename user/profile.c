// SPDX-License-Identifier: GPL-2.0
/*
 * The profile of sampled stacks (profile.h): interning of its strings and entries, counting,
 * naming a frame, and the folded-stacks writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "profile.h"
#include "strbuf.h"

/* The profile's copy of s (NULL stays NULL), or NULL with *err = -ENOMEM. */
static const char *intern(struct profile *p, const char *s, int *err)
{
	char *copy;
	int i;

	if (!s)
		return NULL;
	i = hashmap_get_str(&p->str_index, s);
	if (i >= 0)
		return p->strs[i];
	copy = strdup(s);
	if (!copy || ALLOC_GROW(p->strs, p->nr_strs + 1, p->cap_strs) ||
	    hashmap_put_str(&p->str_index, s, p->nr_strs)) {
		free(copy);
		*err = -ENOMEM;
		return NULL;
	}
	p->strs[p->nr_strs++] = copy;
	return copy;
}

/*
 * The index kept under the key sb holds, or -1 with the key left for the caller to store; a
 * key that could not be written is -ENOMEM. Fields are separated by a byte names never hold.
 */
static int lookup(const struct hashmap *index, const struct strbuf *sb)
{
	if (sb->failed)
		return -ENOMEM;
	return hashmap_get_str(index, sb->buf);
}

#define SEP "\x1f"

int profile_type(struct profile *p, const char *event, uint64_t period)
{
	struct strbuf key = STRBUF_INIT;
	struct profile_type t = { .period = period };
	int err = 0, i;

	strbuf_addf(&key, "%s" SEP "%" PRIu64, event, period);
	i = lookup(&p->type_index, &key);
	if (i != -1)
		goto out;
	t.event = intern(p, event, &err);
	if (err || ALLOC_GROW(p->types, p->nr_types + 1, p->cap_types)) {
		i = -ENOMEM;
		goto out;
	}
	/* Every sample gets a count for the new type, before the type is counted in. */
	for (int s = 0; s < p->nr_samples; s++) {
		uint64_t *v = realloc(p->samples[s].values, (p->nr_types + 1) * sizeof(*v));

		if (!v) {
			i = -ENOMEM;
			goto out;
		}
		v[p->nr_types] = 0;
		p->samples[s].values = v;
	}
	if (hashmap_put_str(&p->type_index, key.buf, p->nr_types)) {
		i = -ENOMEM;
		goto out;
	}
	p->types[p->nr_types] = t;
	i = p->nr_types++;
out:
	strbuf_release(&key);
	return i;
}

int profile_scope(struct profile *p, const char *name, const char *cgroup, const char *container,
		  const char *pod)
{
	struct profile_scope s = { 0 };
	int err = 0, i;

	i = hashmap_get_str(&p->scope_index, name);
	if (i >= 0)
		return i;
	s.name = intern(p, name, &err);
	s.cgroup = intern(p, cgroup, &err);
	s.container = intern(p, container, &err);
	s.pod = intern(p, pod, &err);
	if (err || ALLOC_GROW(p->scopes, p->nr_scopes + 1, p->cap_scopes) ||
	    hashmap_put_str(&p->scope_index, name, p->nr_scopes))
		return -ENOMEM;
	p->scopes[p->nr_scopes] = s;
	return p->nr_scopes++;
}

int profile_mapping(struct profile *p, const struct profile_mapping *m)
{
	struct strbuf key = STRBUF_INIT;
	struct profile_mapping c = *m;
	int err = 0, i;

	strbuf_addf(&key, "%s" SEP "%" PRIx64 SEP "%" PRIx64 SEP "%" PRIx64 SEP "%s",
		    m->file ? m->file : "", m->start, m->limit, m->file_offset,
		    m->build_id ? m->build_id : "");
	i = lookup(&p->map_index, &key);
	if (i != -1)
		goto out;
	c.file = intern(p, m->file, &err);
	c.build_id = intern(p, m->build_id, &err);
	if (err || ALLOC_GROW(p->maps, p->nr_maps + 1, p->cap_maps) ||
	    hashmap_put_str(&p->map_index, key.buf, p->nr_maps)) {
		i = -ENOMEM;
		goto out;
	}
	p->maps[p->nr_maps] = c;
	i = p->nr_maps++;
out:
	strbuf_release(&key);
	return i;
}

int profile_location(struct profile *p, const struct profile_location *l)
{
	struct strbuf key = STRBUF_INIT;
	struct profile_location c = *l;
	int err = 0, i;

	strbuf_addf(&key, "%d" SEP "%" PRIx64 SEP "%s" SEP "%s" SEP "%d", l->mapping, l->addr,
		    l->func ? l->func : "", l->file ? l->file : "", l->line);
	i = lookup(&p->loc_index, &key);
	if (i != -1)
		goto out;
	c.func = intern(p, l->func, &err);
	c.file = intern(p, l->file, &err);
	if (err || ALLOC_GROW(p->locs, p->nr_locs + 1, p->cap_locs) ||
	    hashmap_put_str(&p->loc_index, key.buf, p->nr_locs)) {
		i = -ENOMEM;
		goto out;
	}
	p->locs[p->nr_locs] = c;
	i = p->nr_locs++;
out:
	strbuf_release(&key);
	return i;
}

int profile_add(struct profile *p, int scope, const int *locs, int nr_locs, int type,
		uint64_t count)
{
	return profile_add_task(p, scope, 0, NULL, locs, nr_locs, type, count);
}

int profile_add_task(struct profile *p, int scope, uint32_t pid, const char *comm,
		     const int *locs, int nr_locs, int type, uint64_t count)
{
	struct strbuf key = STRBUF_INIT;
	struct profile_sample s = { .scope = scope, .pid = pid, .nr_locs = nr_locs };
	int i, err = 0;

	if (scope < 0 || scope >= p->nr_scopes || type < 0 || type >= p->nr_types || nr_locs < 0)
		return -EINVAL;
	/* A comm of NULL and one of "" are told apart: "" is a name, if an odd one. */
	strbuf_addf(&key, "%d" SEP "%" PRIu32 SEP "%c%s" SEP, scope, pid, comm ? '+' : '-',
		    comm ? comm : "");
	for (int k = 0; k < nr_locs; k++)
		strbuf_addf(&key, ",%d", locs[k]);
	i = lookup(&p->sample_index, &key);
	if (i >= 0) {
		p->samples[i].values[type] += count;
		goto out;
	}
	if (i != -1) {
		err = i;
		goto out;
	}
	s.comm = intern(p, comm, &err);
	s.locs = malloc((nr_locs ? nr_locs : 1) * sizeof(*s.locs));
	s.values = calloc(p->nr_types, sizeof(*s.values));
	if (err || !s.locs || !s.values || ALLOC_GROW(p->samples, p->nr_samples + 1, p->cap_samples) ||
	    hashmap_put_str(&p->sample_index, key.buf, p->nr_samples)) {
		free(s.locs);
		free(s.values);
		err = -ENOMEM;
		goto out;
	}
	if (nr_locs)
		memcpy(s.locs, locs, nr_locs * sizeof(*locs));
	s.values[type] = count;
	p->samples[p->nr_samples++] = s;
out:
	strbuf_release(&key);
	return err;
}

const char *profile_frame_name(const struct profile *p, int loc, char *buf, size_t len)
{
	const struct profile_location *l = &p->locs[loc];
	const struct profile_mapping *m = l->mapping >= 0 ? &p->maps[l->mapping] : NULL;
	const char *base;

	if (l->func) {
		snprintf(buf, len, "%s", l->func);
	} else if (m && m->file) {
		base = strrchr(m->file, '/');
		snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : m->file,
			 l->addr - m->start + m->file_offset);
	} else {
		snprintf(buf, len, "[unknown]+0x%" PRIx64, l->addr);
	}
	return buf;
}

/* A name in a folded line: ';' separates frames there, and a line ends at '\n'. */
static void add_folded_name(struct strbuf *sb, const char *name)
{
	for (; *name; name++)
		strbuf_add(sb, *name == ';' || *name == '\n' ? "_" : name, 1);
}

struct folded_line {
	char *stack;
	uint64_t count;
};

static int cmp_folded(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

int profile_write_folded(const struct profile *p, int type, bool with_task, FILE *f)
{
	struct hashmap index = HASHMAP_INIT;
	struct folded_line *lines = NULL;
	int nr = 0, cap = 0, err = 0;
	char name[512];

	if (type < 0 || type >= p->nr_types)
		return -EINVAL;
	/* Stacks that differ only in addresses within the same functions are one line. */
	for (int s = 0; s < p->nr_samples && !err; s++) {
		const struct profile_sample *smp = &p->samples[s];
		struct strbuf sb = STRBUF_INIT;
		int i;

		if (!smp->values[type])
			continue;
		add_folded_name(&sb, p->scopes[smp->scope].name);
		if (with_task && smp->comm) {
			strbuf_addstr(&sb, ";");
			add_folded_name(&sb, smp->comm);
			strbuf_addf(&sb, "-%" PRIu32, smp->pid);
		}
		for (int k = smp->nr_locs - 1; k >= 0; k--) {
			strbuf_addstr(&sb, ";");
			add_folded_name(&sb, profile_frame_name(p, smp->locs[k], name, sizeof(name)));
		}
		if (sb.failed) {
			err = -ENOMEM;
		} else if ((i = hashmap_get_str(&index, sb.buf)) >= 0) {
			lines[i].count += smp->values[type];
		} else if (ALLOC_GROW(lines, nr + 1, cap) || hashmap_put_str(&index, sb.buf, nr)) {
			err = -ENOMEM;
		} else {
			lines[nr].stack = strbuf_detach(&sb, NULL);
			lines[nr++].count = smp->values[type];
		}
		strbuf_release(&sb);
	}
	if (!err) {
		qsort(lines, nr, sizeof(*lines), cmp_folded);
		for (int i = 0; i < nr; i++)
			fprintf(f, "%s %" PRIu64 "\n", lines[i].stack, lines[i].count);
		if (fflush(f) || ferror(f))
			err = -errno ?: -EIO;
	}
	for (int i = 0; i < nr; i++)
		free(lines[i].stack);
	free(lines);
	hashmap_clear(&index);
	return err;
}

int profile_merge(struct profile *dst, const struct profile *src)
{
	int nr = src->nr_types + src->nr_scopes + src->nr_maps + src->nr_locs;
	int *map = malloc((nr ? nr : 1) * sizeof(*map)), *types, *scopes, *maps, *locs;
	int *stack = NULL, cap = 0, err = 0;
	uint64_t end;

	if (!map)
		return -ENOMEM;
	types = map;
	scopes = types + src->nr_types;
	maps = scopes + src->nr_scopes;
	locs = maps + src->nr_maps;
	for (int i = 0; i < src->nr_types && err >= 0; i++)
		err = types[i] = profile_type(dst, src->types[i].event, src->types[i].period);
	for (int i = 0; i < src->nr_scopes && err >= 0; i++) {
		const struct profile_scope *s = &src->scopes[i];

		err = scopes[i] = profile_scope(dst, s->name, s->cgroup, s->container, s->pod);
	}
	for (int i = 0; i < src->nr_maps && err >= 0; i++)
		err = maps[i] = profile_mapping(dst, &src->maps[i]);
	for (int i = 0; i < src->nr_locs && err >= 0; i++) {
		struct profile_location l = src->locs[i];

		l.mapping = l.mapping >= 0 ? maps[l.mapping] : -1;
		err = locs[i] = profile_location(dst, &l);
	}
	for (int s = 0; s < src->nr_samples && err >= 0; s++) {
		const struct profile_sample *smp = &src->samples[s];

		if (ALLOC_GROW(stack, smp->nr_locs, cap)) {
			err = -ENOMEM;
			break;
		}
		for (int k = 0; k < smp->nr_locs; k++)
			stack[k] = locs[smp->locs[k]];
		for (int t = 0; t < src->nr_types && err >= 0; t++)
			if (smp->values[t])
				err = profile_add_task(dst, scopes[smp->scope], smp->pid,
						       smp->comm, stack, smp->nr_locs, types[t],
						       smp->values[t]);
	}
	free(stack);
	free(map);
	if (err < 0)
		return err;
	dst->lost.samples += src->lost.samples;
	dst->lost.user_stacks += src->lost.user_stacks;
	dst->lost.kernel_stacks += src->lost.kernel_stacks;
	if (src->start_ns || src->duration_ns) {
		end = dst->start_ns + dst->duration_ns;
		if (src->start_ns + src->duration_ns > end || !(dst->start_ns || dst->duration_ns))
			end = src->start_ns + src->duration_ns;
		if (src->start_ns < dst->start_ns || !(dst->start_ns || dst->duration_ns))
			dst->start_ns = src->start_ns;
		dst->duration_ns = end - dst->start_ns;
	}
	return 0;
}

const char *profile_lost_text(const struct profile_lost *l, char *buf, size_t len)
{
	int n = 0;

	buf[0] = 0;
	if (l->samples)
		n = snprintf(buf, len, "%" PRIu64 " samples lost: the kernel's counts map was full "
			     "(raise --sample-max)", l->samples);
	if ((l->user_stacks || l->kernel_stacks) && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "%s%" PRIu64 " user and %" PRIu64 " kernel stacks kept "
			 "without their frames: the stack maps had no room for them", n ? "; " : "",
			 l->user_stacks, l->kernel_stacks);
	return buf;
}

static int cmp_top(const void *a, const void *b)
{
	const struct profile_top *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

int profile_top_functions(const struct profile *p, int scope, int type, struct profile_top **top,
			  uint64_t *total)
{
	struct hashmap index = HASHMAP_INIT;
	struct profile_top *t = NULL;
	int nr = 0, cap = 0, err = 0;
	char name[512];

	*total = 0;
	for (int s = 0; s < p->nr_samples && !err; s++) {
		const struct profile_sample *smp = &p->samples[s];
		const char *leaf;
		int i;

		if (smp->scope != scope || type < 0 || type >= p->nr_types || !smp->values[type])
			continue;
		*total += smp->values[type];
		leaf = smp->nr_locs ? profile_frame_name(p, smp->locs[0], name, sizeof(name))
				    : "[no stack]";
		if ((i = hashmap_get_str(&index, leaf)) >= 0) {
			t[i].count += smp->values[type];
		} else if (ALLOC_GROW(t, nr + 1, cap) || !(t[nr].name = strdup(leaf))) {
			err = -ENOMEM;
		} else if (hashmap_put_str(&index, leaf, nr)) {
			free(t[nr].name);
			err = -ENOMEM;
		} else {
			t[nr++].count = smp->values[type];
		}
	}
	hashmap_clear(&index);
	if (err) {
		profile_top_free(t, nr);
		return err;
	}
	qsort(t, nr, sizeof(*t), cmp_top);
	*top = t;
	return nr;
}

void profile_top_free(struct profile_top *top, int n)
{
	for (int i = 0; i < n; i++)
		free(top[i].name);
	free(top);
}

int profile_scope_find(const struct profile *p, const char *name)
{
	return hashmap_get_str(&p->scope_index, name);
}

void profile_release(struct profile *p)
{
	for (int s = 0; s < p->nr_samples; s++) {
		free(p->samples[s].locs);
		free(p->samples[s].values);
	}
	for (int i = 0; i < p->nr_strs; i++)
		free(p->strs[i]);
	free(p->types);
	free(p->scopes);
	free(p->maps);
	free(p->locs);
	free(p->samples);
	free(p->strs);
	hashmap_clear(&p->type_index);
	hashmap_clear(&p->scope_index);
	hashmap_clear(&p->map_index);
	hashmap_clear(&p->loc_index);
	hashmap_clear(&p->sample_index);
	hashmap_clear(&p->str_index);
	*p = (struct profile)PROFILE_INIT;
}
