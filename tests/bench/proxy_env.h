/* proxy_env.h - the HTTP proxy a sandbox names in $HTTP_PROXY
 * (http://[USER:PASS@]HOST:PORT[/], as sandbox-runtime sets it, USER
 * percent-encoded), for httpbench.c and bulkbench.c: its address, and the
 * Proxy-Authorization line its credentials ask for ("" without any). */
#ifndef EGRET_BENCH_PROXY_ENV_H
#define EGRET_BENCH_PROXY_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../helpers/target.h"

static void pct_decode(char *s)
{
	char *w = s, hex[3] = { 0 };

	for (; *s; s++) {
		if (s[0] == '%' && s[1] && s[2]) {
			hex[0] = s[1];
			hex[1] = s[2];
			*w++ = (char)strtol(hex, NULL, 16);
			s += 2;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static void base64(const unsigned char *in, size_t n, char *out)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		*out++ = a[in[i] >> 2];
		*out++ = a[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		*out++ = a[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
		*out++ = a[in[i + 2] & 63];
	}
	if (i < n) {
		*out++ = a[in[i] >> 2];
		if (i + 1 < n) {
			*out++ = a[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
			*out++ = a[(in[i + 1] & 15) << 2];
		} else {
			*out++ = a[(in[i] & 3) << 4];
			*out++ = '=';
		}
		*out++ = '=';
	}
	*out = '\0';
}

/* 0, or -1 when $HTTP_PROXY is missing or not of that shape. @auth gets
 * "Proxy-Authorization: Basic ...\r\n" or "". */
static int proxy_from_env(struct target *t, char *auth, size_t authlen)
{
	const char *env = getenv("HTTP_PROXY");
	char buf[1024], user[512], b64[700], *host, *at, *colon, *slash;

	if (!env || strncmp(env, "http://", 7) || strlen(env) >= sizeof(buf))
		return -1;
	strcpy(buf, env + 7);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	at = strrchr(buf, '@');
	host = at ? at + 1 : buf;
	auth[0] = '\0';
	if (at) {
		*at = '\0';
		if (strlen(buf) >= sizeof(user))
			return -1;
		strcpy(user, buf);
		pct_decode(user);
		base64((const unsigned char *)user, strlen(user), b64);
		if ((size_t)snprintf(auth, authlen, "Proxy-Authorization: Basic %s\r\n", b64) >=
		    authlen)
			return -1;
	}
	colon = strrchr(host, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	return parse_target(strcmp(host, "localhost") ? host : "127.0.0.1", colon + 1, t);
}

/* A sandbox may start its proxy's listener beside COMMAND: wait (up to
 * 5 s; call it before the clock starts) until it takes connections. */
static void proxy_wait(const struct target *t)
{
	int i, fd, ok;

	for (i = 0; i < 500; i++) {
		fd = socket(t->family, SOCK_STREAM, 0);
		ok = fd >= 0 && !connect(fd, (const void *)&t->ss, t->len);
		if (fd >= 0)
			close(fd);
		if (ok)
			return;
		usleep(10000);
	}
}

#endif
