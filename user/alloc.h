/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Growing arrays, as git's ALLOC_GROW does, but returning -ENOMEM instead of dying:
 *
 *   struct series *series;
 *   int nr_series, cap_series;
 *
 *   if (ALLOC_GROW(series, nr_series + 1, cap_series))
 *           return -ENOMEM;          // series and cap_series unchanged
 *   series[nr_series++] = s;
 *
 * The capacity grows by half again (plus 16), so appending n elements costs O(n) copies.
 * x is evaluated more than once.
 */
#ifndef CGTMA_ALLOC_H
#define CGTMA_ALLOC_H

#include <errno.h>
#include <stdlib.h>

#define alloc_nr(x) (((x) + 16) * 3 / 2)

#define ALLOC_GROW(x, nr, alloc)                                                          \
	({                                                                                \
		int ag_err_ = 0;                                                          \
		if ((nr) > (alloc)) {                                                     \
			__typeof__(alloc) ag_want_ = alloc_nr(alloc) < (nr) ? (nr) :       \
								    alloc_nr(alloc);          \
			void *ag_p_ = realloc((x), (size_t)ag_want_ * sizeof(*(x)));       \
			if (ag_p_) {                                                      \
				(x) = ag_p_;                                              \
				(alloc) = ag_want_;                                       \
			} else {                                                          \
				ag_err_ = -ENOMEM;                                        \
			}                                                                 \
		}                                                                         \
		ag_err_;                                                                  \
	})

#endif
