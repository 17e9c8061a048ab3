/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lib/log.h - every message egret prints goes through here, libbpf's included. */
#ifndef EGRET_LOG_H
#define EGRET_LOG_H

enum log_level {
	LOG_ERR = 0,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

#include <stdbool.h>

void log_set_level(enum log_level level);

/* Lines end in CR LF while egret's terminal is raw (terminal.c). */
void log_set_crlf(bool on);
enum log_level log_get_level(void);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Log "egret: <message>: <strerror(err)>" and return -|err|, so callers can
 * `return log_errno(LOG_ERR, r, "...")` in one step. */
int log_errno(enum log_level level, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(...)		log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)		log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)		log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)		log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_error_errno(err, ...) log_errno(LOG_ERR, (err), __VA_ARGS__)

/* Route libbpf's output through log_msg: warnings at --verbose, debug at -vv. */
void log_setup_libbpf(void);

#endif
