// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <perfmon/pfmlib_perf_event.h>

#include "pfm_encode.h"

static int pfm_state;	/* 0 not tried, 1 ready, -1 failed */

static bool pfm_ready(void)
{
	if (pfm_state == 0)
		pfm_state = pfm_initialize() == PFM_SUCCESS ? 1 : -1;
	return pfm_state > 0;
}

int pfm_event_names(int (*fn)(const char *name, void *ctx), void *ctx)
{
	pfm_pmu_info_t pinfo;
	pfm_event_info_t einfo;
	pfm_pmu_t pmu;
	int ret;

	if (!pfm_ready())
		return 0;
	pfm_for_all_pmus(pmu) {
		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
			continue;
		for (int e = pinfo.first_event; e != -1; e = pfm_get_event_next(e)) {
			memset(&einfo, 0, sizeof(einfo));
			einfo.size = sizeof(einfo);
			if (pfm_get_event_info(e, PFM_OS_NONE, &einfo) != PFM_SUCCESS)
				continue;
			ret = fn(einfo.name, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

bool pfm_has_pmu(const char *name)
{
	pfm_pmu_info_t pinfo;
	pfm_pmu_t pmu;

	if (!pfm_ready())
		return false;
	/* every table built in is known to pfm_get_pmu_info(), the others are not */
	pfm_for_all_pmus(pmu) {
		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info(pmu, &pinfo) == PFM_SUCCESS && !strcmp(pinfo.name, name))
			return true;
	}
	return false;
}

int pfm_encode(const char *name, struct pfm_encoding *enc, char *err, size_t errlen)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int ret;

	if (!pfm_ready()) {
		snprintf(err, errlen, "libpfm4 failed to initialize");
		return -ENODEV;
	}
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	/* Both privilege levels: exclusion is the caller's choice, not libpfm4's default. */
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (ret != PFM_SUCCESS) {
		snprintf(err, errlen, "%s", pfm_strerror(ret));
		return ret == PFM_ERR_NOTFOUND ? -ENOENT : -EINVAL;
	}
	enc->type = attr.type;
	enc->config = attr.config;
	enc->config1 = attr.config1;
	enc->config2 = attr.config2;
	enc->exclude_user = attr.exclude_user;
	enc->exclude_kernel = attr.exclude_kernel;
	return 0;
}
