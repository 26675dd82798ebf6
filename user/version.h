/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CGTMA_VERSION_H
#define CGTMA_VERSION_H

#define CGTMA_VERSION "0.1"

#endif
