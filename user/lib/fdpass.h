/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/fdpass.h - one fd over a unix socket (SCM_RIGHTS), with one byte
 * of data so that a SOCK_SEQPACKET message carries it.
 */
#ifndef EGRET_FDPASS_H
#define EGRET_FDPASS_H

/* 0 or -errno. */
int fd_send(int sock, int fd);

/* The fd received (close-on-exec), or -errno: -EPIPE for no message,
 * -EPROTO for a message without exactly one fd. */
int fd_recv(int sock);

#define FDS_MAX	4

/* @n (1..FDS_MAX) fds in one message: 0 or -errno. */
int fds_send(int sock, const int *fds, int n);

/* Up to @max (..FDS_MAX) fds of one message into @fds (close-on-exec):
 * their number (>= 1), or -errno (-EPIPE: no message; -EPROTO: none, or
 * more than @max, all closed). */
int fds_recv(int sock, int *fds, int max);

#endif
