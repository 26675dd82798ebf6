// SPDX-License-Identifier: GPL-2.0
/*
 * UDP with exactly known counts, for tests/live/23-irq.sh:
 *
 *   udp send ADDR PORT N [PAUSE_MS]  N sendto() calls of one 64-byte datagram each
 *                                    (sys_enter_sendto fires N times), sleeping PAUSE_MS
 *                                    after every N/10 so the work spans several intervals
 *   udp recv PORT N TIMEOUT_S        receives until N datagrams came or TIMEOUT_S passed
 *                                    without one; prints how many came
 * Exit status: 0, 1 when a call fails (printed), 2 for bad arguments.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int do_send(const char *addr, int port, long n, long pause_ms)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	long chunk = n >= 10 ? n / 10 : 1;
	char buf[64] = "cgtma";
	int fd;

	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1) {
		fprintf(stderr, "udp: '%s' is not an IPv4 address\n", addr);
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("udp: socket");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if (sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
			perror("udp: sendto");
			return 1;
		}
		if (pause_ms && (i + 1) % chunk == 0 && i + 1 < n)
			usleep(pause_ms * 1000);
	}
	close(fd);
	return 0;
}

static int do_recv(int port, long n, long timeout_s)
{
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = timeout_s };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), size = 4 << 20;
	char buf[2048];
	long got = 0;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		perror("udp: receiving socket");
		return 1;
	}
	while (got < n && recv(fd, buf, sizeof(buf), 0) >= 0)
		got++;
	printf("%ld\n", got);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "send"))
		return do_send(argv[2], atoi(argv[3]), atol(argv[4]), argc > 5 ? atol(argv[5]) : 0);
	if (argc == 5 && !strcmp(argv[1], "recv"))
		return do_recv(atoi(argv[2]), atol(argv[3]), atol(argv[4]));
	fprintf(stderr, "usage: udp send ADDR PORT N [PAUSE_MS] | udp recv PORT N TIMEOUT_S\n");
	return 2;
}
