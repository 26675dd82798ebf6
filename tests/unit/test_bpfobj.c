// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF objects as built: the sampling object has no CO-RE relocation, so that its load
 * does not make libbpf read and parse the kernel's BTF a second time in a run (bpf/cgtma.h's
 * struct cgtma_layout says why and what it reads instead); the counting object has its
 * relocations, which shows the check reads them.
 */
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "bpf/cgtma.h"
#include "cgtma.skel.h"
#include "sample.skel.h"
#include "test.h"

/* The bytes of a 64-bit ELF object's section name, or NULL (*size its size). */
static const uint8_t *elf_section(const uint8_t *elf, size_t len, const char *name, size_t *size)
{
	const Elf64_Ehdr *eh = (const void *)elf;
	const Elf64_Shdr *sh, *strtab;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff > len ||
	    (len - eh->e_shoff) / sizeof(*sh) < eh->e_shnum || eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	sh = (const void *)(elf + eh->e_shoff);
	strtab = &sh[eh->e_shstrndx];
	for (int i = 0; i < eh->e_shnum; i++) {
		const char *n = (const char *)elf + strtab->sh_offset + sh[i].sh_name;

		if (strtab->sh_offset + sh[i].sh_name < len && !strcmp(n, name) &&
		    sh[i].sh_offset + sh[i].sh_size <= len) {
			*size = sh[i].sh_size;
			return elf + sh[i].sh_offset;
		}
	}
	return NULL;
}

/*
 * The bytes of CO-RE relocation records in an object's .BTF.ext (the kernel's struct
 * btf_ext_header: magic, version, flags, hdr_len, then offset and length of the function,
 * line and CO-RE records), or -1 where it has none such section or header.
 */
static long core_relo_len(const void *obj, size_t len)
{
	size_t size = 0;
	const uint8_t *ext = elf_section(obj, len, ".BTF.ext", &size);
	uint32_t hdr_len, relo_len;

	if (!ext || size < 8)
		return -1;
	memcpy(&hdr_len, ext + 4, sizeof(hdr_len));
	if (hdr_len < 32 || hdr_len > size)
		return -1;
	memcpy(&relo_len, ext + 28, sizeof(relo_len));
	return relo_len;
}

int main(void)
{
	size_t len = 0;
	const void *obj = sample__elf_bytes(&len);

	CHECK_INT(core_relo_len(obj, len), 0);
	obj = cgtma__elf_bytes(&len);
	CHECK(core_relo_len(obj, len) > 0, "the counting object's relocations: %ld",
	      core_relo_len(obj, len));
	return test_done("bpfobj");
}
