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

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	int fd, one = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: acceptor ADDR PORT\n");
		return 2;
	}
	if (strchr(argv[1], ':')) {
		struct sockaddr_in6 *s6 = (void *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(atoi(argv[2]));
		if (inet_pton(AF_INET6, argv[1], &s6->sin6_addr) != 1)
			return 2;
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (void *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(atoi(argv[2]));
		if (inet_pton(AF_INET, argv[1], &s4->sin_addr) != 1)
			return 2;
		len = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (void *)&ss, len) || listen(fd, 4096)) {
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
