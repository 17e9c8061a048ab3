/* acceptor.c - bench listener: accept and close in a tight loop, nothing else.
 * Usage: acceptor ADDR PORT  (IPv4 or IPv6 literal). Prints "ready" on stdout
 * once listening. Backlog 4096; no logging, so the listener is never the
 * bottleneck the way tests/helpers/sink is. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../helpers/target.h"

int main(int argc, char **argv)
{
	struct target t;
	int fd, one = 1;

	if (argc != 3 || parse_target(argv[1], argv[2], &t) < 0) {
		fprintf(stderr, "usage: acceptor ADDR PORT\n");
		return 2;
	}
	fd = socket(t.family, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (void *)&t.ss, t.len) || listen(fd, 4096)) {
		perror("acceptor");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int c = accept(fd, NULL, NULL);
		if (c >= 0)
			close(c);
	}
}
