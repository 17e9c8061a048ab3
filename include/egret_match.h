/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * egret_match.h - the decision logic shared by BPF and user space.
 *
 * The BPF programs (through bpf/lib/) compile exactly these functions, and
 * the unit tests (tests/unit/test_match.c) run the very same code in user
 * space. Keep them free of helpers and globals: plain loads, bounded loops,
 * byte access to network-order words so host endianness never matters.
 */
#ifndef EGRET_MATCH_H
#define EGRET_MATCH_H

#include "egret.h"

#define EGRET_INLINE static inline __attribute__((always_inline))

/* Byte @i (0 = first on the wire) of a network-order 32-bit word. */
EGRET_INLINE __u8 egret_wire_byte(__u32 word, int i)
{
	return ((const __u8 *)&word)[i];
}

/* The attempt's key as trie keys hold it (egret.h): the same 8 bytes as
 * the __u64 in memory, so one comparison finds an attempt's entries in a
 * trie and in a hash alike. */
EGRET_INLINE void egret_lpm_attempt(__u32 dst[2], __u64 attempt)
{
	__builtin_memcpy(dst, &attempt, sizeof(attempt));
}

EGRET_INLINE enum egret_addr_class egret_classify4(__u32 addr)
{
	__u8 a = egret_wire_byte(addr, 0), b = egret_wire_byte(addr, 1);

	if (a == 0)
		return EGRET_ADDR_UNSPECIFIED;
	if (a == 127)
		return EGRET_ADDR_LOOPBACK;
	if ((a & 0xf0) == 0xe0)
		return EGRET_ADDR_MULTICAST;
	if (addr == 0xffffffffU)
		return EGRET_ADDR_BROADCAST;
	if (a == 169 && b == 254) {
		if (egret_wire_byte(addr, 2) == 169 &&
		    egret_wire_byte(addr, 3) == 254)
			return EGRET_ADDR_METADATA;
		return EGRET_ADDR_LINK_LOCAL;
	}
	return EGRET_ADDR_NORMAL;
}

/* ::ffff:a.b.c.d - the kernel routes it as IPv4, so it is judged as IPv4. */
EGRET_INLINE int egret_is_v4mapped(const __u32 addr[4])
{
	return addr[0] == 0 && addr[1] == 0 &&
	       egret_wire_byte(addr[2], 0) == 0 &&
	       egret_wire_byte(addr[2], 1) == 0 &&
	       egret_wire_byte(addr[2], 2) == 0xff &&
	       egret_wire_byte(addr[2], 3) == 0xff;
}

EGRET_INLINE enum egret_addr_class egret_classify6(const __u32 addr[4])
{
	__u8 b0 = egret_wire_byte(addr[0], 0), b1 = egret_wire_byte(addr[0], 1);

	if (addr[0] == 0 && addr[1] == 0 && addr[2] == 0) {
		if (addr[3] == 0)
			return EGRET_ADDR_UNSPECIFIED;
		if (egret_wire_byte(addr[3], 0) == 0 &&
		    egret_wire_byte(addr[3], 1) == 0 &&
		    egret_wire_byte(addr[3], 2) == 0 &&
		    egret_wire_byte(addr[3], 3) == 1)
			return EGRET_ADDR_LOOPBACK;
	}
	if (b0 == 0xfe && (b1 & 0xc0) == 0x80)
		return EGRET_ADDR_LINK_LOCAL;
	if (b0 == 0xff)
		return EGRET_ADDR_MULTICAST;
	/* fd00:ec2::254, the IPv6 instance-metadata endpoint of EC2. */
	if (b0 == 0xfd && b1 == 0x00 && egret_wire_byte(addr[0], 2) == 0x0e &&
	    egret_wire_byte(addr[0], 3) == 0xc2 && addr[1] == 0 && addr[2] == 0 &&
	    egret_wire_byte(addr[3], 0) == 0 && egret_wire_byte(addr[3], 1) == 0 &&
	    egret_wire_byte(addr[3], 2) == 0x02 && egret_wire_byte(addr[3], 3) == 0x54)
		return EGRET_ADDR_METADATA;
	return EGRET_ADDR_NORMAL;
}

/* egret_allow_match @port: any live rule will do (a packet without ports,
 * such as a later IP fragment). */
#define EGRET_PORT_ANY	0x10000U

/*
 * Judge @port (host order, or EGRET_PORT_ANY) at monotonic-clock time @now
 * against one allow entry. A special address needs an entry flagged
 * EGRET_ALLOW_SPECIAL. Returns EGRET_REASON_ALLOWED or the most specific
 * reason for a denial.
 */
EGRET_INLINE enum egret_reason
egret_allow_match(const struct egret_allow *allow, __u32 port, __u64 now,
		  int special)
{
	enum egret_reason reason = EGRET_REASON_PORT;
	int i;

	if (special && !(allow->flags & EGRET_ALLOW_SPECIAL))
		return EGRET_REASON_SPECIAL;

	for (i = 0; i < EGRET_PORT_SLOTS; i++) {
		const struct egret_port_rule *rule = &allow->rules[i];

		if (rule->expires_ns == EGRET_EXPIRES_UNUSED)
			continue;
		if (port != EGRET_PORT_ANY &&
		    (port < rule->port_lo || port > rule->port_hi))
			continue;
		if (rule->expires_ns != EGRET_EXPIRES_NEVER &&
		    rule->expires_ns <= now) {
			reason = EGRET_REASON_EXPIRED;
			continue;
		}
		return EGRET_REASON_ALLOWED;
	}
	return reason;
}

/*
 * Does a rule that never expires (a static entry) allow @port? Then no
 * flow to it needs remembering: the entry outlives every connection.
 */
EGRET_INLINE int egret_allow_lasting(const struct egret_allow *allow, __u32 port)
{
	int i;

	for (i = 0; i < EGRET_PORT_SLOTS; i++) {
		const struct egret_port_rule *rule = &allow->rules[i];

		if (rule->expires_ns == EGRET_EXPIRES_NEVER &&
		    port >= rule->port_lo && port <= rule->port_hi)
			return 1;
	}
	return 0;
}

/*
 * Which kinds of live rule of @allow allow @port at @now: EGRET_PIN_MASK_PINNED
 * (a rule flagged EGRET_RULE_PINNED), EGRET_PIN_MASK_OPEN (one that is not).
 * A connection is pinned only when the masks of every entry that allows
 * it add up to EGRET_PIN_MASK_PINNED alone: an address the operator also
 * opened by address keeps that.
 */
#define EGRET_PIN_MASK_PINNED	1
#define EGRET_PIN_MASK_OPEN	2

/* One rule's part of the mask (bpf/lib/pin.h runs it from a bpf_loop). */
EGRET_INLINE int egret_rule_pin_mask(const struct egret_port_rule *rule, __u32 port,
				     __u64 now)
{
	if (rule->expires_ns == EGRET_EXPIRES_UNUSED ||
	    port < rule->port_lo || port > rule->port_hi)
		return 0;
	if (rule->expires_ns != EGRET_EXPIRES_NEVER && rule->expires_ns <= now)
		return 0;
	return (rule->flags & EGRET_RULE_PINNED) ? EGRET_PIN_MASK_PINNED : EGRET_PIN_MASK_OPEN;
}

EGRET_INLINE int egret_allow_pin_mask(const struct egret_allow *allow, __u32 port,
				      __u64 now)
{
	int mask = 0, i;

	for (i = 0; i < EGRET_PORT_SLOTS; i++)
		mask |= egret_rule_pin_mask(&allow->rules[i], port, now);
	return mask;
}

/* Of two denial reasons from two maps, the one that tells the operator more. */
EGRET_INLINE enum egret_reason egret_reason_pick(enum egret_reason a,
						 enum egret_reason b)
{
	return a > b ? a : b;
}

#endif /* EGRET_MATCH_H */
