/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/socks.h - the socket calls c-ares makes for dns/upstream.c.
 *
 * c-ares 1.18 makes a socket with three fcntl()s after it, and reads a UDP
 * socket one recvfrom() at a time until one fails with EAGAIN: on this
 * path a system call costs more than the work around it. Here sockets are
 * born non-blocking and close-on-exec, and a UDP socket's answers are
 * read DNS_RX_BATCH at a time with recvmmsg(): c-ares gets them one by
 * one, and the EAGAIN that ends its loop comes without a system call when
 * the batch came back short (the socket was empty then; the loop is
 * level-triggered, so what arrives after wakes it again).
 */
#ifndef EGRET_DNS_SOCKS_H
#define EGRET_DNS_SOCKS_H

#include <stdbool.h>
#include <ares.h>

#define DNS_RX_BATCH	16

struct dns_rx;

/* One batch buffer, shared by the channels that use it; NULL: no memory. */
struct dns_rx *dns_rx_new(void);
void dns_rx_free(struct dns_rx *rx);

/* Make @ch use these socket calls, reading through @rx. */
void dns_socks_use(ares_channel ch, struct dns_rx *rx);

/* Datagrams of @fd received and not yet handed to c-ares. */
bool dns_rx_pending(const struct dns_rx *rx, int fd);

/* Forget them (c-ares did not take them: it drops such answers too). */
void dns_rx_drop(struct dns_rx *rx);

#endif
