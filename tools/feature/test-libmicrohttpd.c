// SPDX-License-Identifier: GPL-2.0
/*
 * The Makefile's probe for libmicrohttpd, which serves --prometheus (output_prometheus.c):
 * one as new as the calls it makes (responses that free their buffer: 0.9.63).
 */
#include <stdlib.h>
#include <microhttpd.h>

int main(void)
{
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(0, NULL, free);

	MHD_destroy_response(r);
	return MHD_is_feature_supported(MHD_FEATURE_IPv6) == MHD_YES;
}
