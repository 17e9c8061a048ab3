/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * egret.h - the ABI shared by the BPF programs (bpf/) and user space (user/).
 *
 * Only fixed-width types: the BPF side gets them from vmlinux.h (included
 * first, as BPF programs do), user space from <linux/types.h>. Every struct
 * here is a map key or value; the asserts at the end pin their sizes so both
 * compilers agree.
 *
 * Byte order: addresses are kept in network order exactly as the kernel
 * hands them to sock_addr programs (ctx->user_ip4, ctx->user_ip6[]); ports
 * in rules are host order.
 */
#ifndef EGRET_H
#define EGRET_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* How many port rules one allow entry holds. An address rarely needs more
 * than a couple (443 and 80); eight keeps a value at 136 bytes. */
#define EGRET_PORT_SLOTS	8

/* egret_port_rule.expires_ns: 0 marks an unused slot; NEVER a static rule. */
#define EGRET_EXPIRES_UNUSED	0ULL
#define EGRET_EXPIRES_NEVER	(~0ULL)

/* One allowed port range of an entry, with its own lifetime, so a static
 * "any port" rule and a DNS-learned "443 for 300 s" on the same address do
 * not bleed into each other. */
struct egret_port_rule {
	__u64 expires_ns;	/* CLOCK_MONOTONIC deadline; see EGRET_EXPIRES_* */
	__u16 port_lo;		/* host order, inclusive; 0..65535 = any port */
	__u16 port_hi;
	__u32 flags;		/* EGRET_RULE_* */
};

/* egret_port_rule.flags */
enum {
	/* TLS on the attempt's pinned ports (egret_attempt.pin_ports) must
	 * name a host whose DNS answer taught the address (egret_pins): set
	 * on rules learned for a pinned host, and on static rules the policy
	 * pins. A connection is pinned only if no live rule allowing its
	 * port lacks the flag (docs/SECURITY.md, "SNI pinning"). */
	EGRET_RULE_PINNED = 1U << 0,
};

/* egret_allow.flags */
enum {
	/* The operator named this address or prefix itself, inside a
	 * special range (loopback, unspecified, link-local, metadata,
	 * multicast, broadcast) or exactly (the host's own addresses). Only
	 * such entries open a special address: a broad CIDR like 0.0.0.0/0
	 * or a DNS answer never does. */
	EGRET_ALLOW_SPECIAL = 1U << 0,
};

/* egret_host4/6 values: what the local routing table of the attempt's
 * network namespace says an address (or prefix) is. */
enum {
	EGRET_HOST_LOCAL = 1U << 0,	/* the host's own: a source, a special destination */
	EGRET_HOST_BROADCAST = 1U << 1,	/* a subnet's broadcast address */
	EGRET_HOST_ANYCAST = 1U << 2,	/* an IPv6 anycast address of the host */
};

/*
 * One set of programs and maps serves every attempt (docs/ARCHITECTURE.md,
 * "One set of programs for every attempt"): each map key begins with the
 * attempt's key, its cgroup's id, which the programs read from the cgroup
 * storage of the attachment they run for (struct egret_attempt). A trie
 * key holds it as two words after prefixlen, so the prefix length of an
 * entry is EGRET_LPM_ATTEMPT_BITS plus that of its address prefix.
 */
#define EGRET_LPM_ATTEMPT_BITS	64

/* The value of every allow map (exact hashes and LPM tries alike). */
struct egret_allow {
	struct egret_port_rule rules[EGRET_PORT_SLOTS];
	__u32 flags;		/* EGRET_ALLOW_* */
	/* The destination (egret_dest_counts) its bytes are counted
	 * against: the learned name or static rule that last wrote the
	 * entry; 0 only in entries of no destination (never written now). */
	__u32 dest;
};

struct egret_key4 {
	__u64 attempt;
	__u32 addr;		/* network order */
	__u32 zero;		/* padding, always 0 */
};

struct egret_key6 {
	__u64 attempt;
	__u32 addr[4];		/* network order */
};

/* LPM trie keys: prefixlen first, as BPF_MAP_TYPE_LPM_TRIE requires; the
 * attempt as egret_lpm_attempt() (egret_match.h) writes it. */
struct egret_lpm_key4 {
	__u32 prefixlen;	/* EGRET_LPM_ATTEMPT_BITS + the address's */
	__u32 attempt[2];
	__u32 addr;
};

struct egret_lpm_key6 {
	__u32 prefixlen;
	__u32 attempt[2];
	__u32 addr[4];
};

/* egret_dns_orig: per socket, the resolver the process asked for before
 * its DNS query was redirected to egret's proxy (BPF_MAP_TYPE_SK_STORAGE). */
struct egret_dns_orig {
	__u32 ip6[4];		/* network order; ::ffff:a.b.c.d for IPv4 */
	__u32 ip4;		/* network order */
	__u16 port_be;		/* network order */
	__u16 valid;
};

/* egret_conn: per socket, the destination its connect() was allowed to
 * (BPF_MAP_TYPE_SK_STORAGE, written by connect4/6, and in --audit mode by
 * sendmsg4/6 for a datagram they let through). The egress backstop
 * lets that flow's packets pass even after the allow entry expires:
 * established connections are not cut. */
struct egret_conn {
	__u32 addr[4];		/* network order; IPv4 in addr[0] */
	__u16 port_be;		/* network order */
	__u8 family;		/* 4 or 6 (the wire family) */
	__u8 valid;
	__u32 dest;		/* egret_allow.dest of the entry that allowed it */
};

/* egret_names: which name's DNS answer taught an address (for status and
 * bpftool; written by egret, never read by BPF). Names longer than the
 * field are cut. */
struct egret_name_key {
	__u64 attempt;
	__u32 family;		/* 4 or 6 */
	__u32 addr[4];		/* network order; IPv4 in addr[0] */
	__u32 zero;		/* padding, always 0 */
};

struct egret_name {
	char name[128];
};

/* Why a destination was judged the way it was (every event carries one). */
enum egret_reason {
	EGRET_REASON_ALLOWED = 0,
	EGRET_REASON_NO_ENTRY,		/* no allow entry holds the address */
	EGRET_REASON_PORT,		/* entry exists, port not allowed */
	EGRET_REASON_EXPIRED,		/* entry's rule for the port expired */
	EGRET_REASON_SPECIAL,		/* loopback/link-local/... not named */
	EGRET_REASON_SOCKET,		/* socket type/protocol not enforced */
	EGRET_REASON_SOCKOPT,		/* option that redirects packets */
	EGRET_REASON_PACKET,		/* backstop: packet not allowed on the wire */
	EGRET_REASON_SOURCE,		/* a source address that is not the host's */
	EGRET_REASON_LISTENER,		/* a port others could tell it listens on */
	EGRET_REASON_SNI,		/* pinned: the TLS name did not teach the address */
	EGRET_REASON_NOT_TLS,		/* pinned: not one ClientHello egret can read */
	EGRET_REASON_NO_SNI,		/* pinned: a ClientHello without a name */
	EGRET_REASON_ECH,		/* pinned: an encrypted ClientHello */
	EGRET_REASON_QUIC,		/* pinned: UDP to a pinned port (QUIC) */
	EGRET_REASON_HOST,		/* pinned HTTP: the request's host did not
					 * teach the address */
	EGRET_REASON_NOT_HTTP,		/* pinned HTTP: a request egret cannot judge */
	EGRET_REASON_BUDGET,		/* the destination's upload budget is spent */
	EGRET_REASON_UNCOUNTED,		/* no accounting state: nothing is sent uncounted */
	EGRET_REASON_MAX,
};

/* Which program decided (events, counters). */
enum egret_hook {
	EGRET_HOOK_CONNECT = 0,
	EGRET_HOOK_SENDMSG,
	EGRET_HOOK_SOCKET,
	EGRET_HOOK_SOCKOPT,
	EGRET_HOOK_EGRESS,
	EGRET_HOOK_BIND,
	EGRET_HOOK_LISTEN,
	EGRET_HOOK_UNIX,	/* abstract unix sockets (bpf/unix.bpf.c) */
	EGRET_HOOK_TLS,		/* a pinned connection's ClientHello (lib/pin.h) */
	EGRET_HOOK_HTTP,	/* a pinned plain-HTTP request (lib/http.h) */
	EGRET_HOOK_MAX,
};

enum egret_verdict {
	EGRET_VERDICT_DENY = 0,
	EGRET_VERDICT_ALLOW,
	EGRET_VERDICT_WOULD_DENY,	/* --audit: denied by policy, let through */
	EGRET_VERDICT_MAX,
};

/* egret_counters (per-CPU array) index: one per hook and verdict, then
 * the events neither the ring buffer nor egret_repeats had room for. */
#define EGRET_COUNTER(hook, verdict)	((hook) * EGRET_VERDICT_MAX + (verdict))
#define EGRET_COUNTER_DROPPED		(EGRET_HOOK_MAX * EGRET_VERDICT_MAX)
#define EGRET_NCOUNTERS			(EGRET_COUNTER_DROPPED + 1)

/* One decision, through the egret_events ring buffer. */
struct egret_event {
	__u64 time_ns;		/* CLOCK_BOOTTIME */
	__u32 pid;		/* thread id; 0 when no task context (egress) */
	__u32 tgid;
	__u32 uid;
	__u32 addr[4];		/* destination, network order; IPv4 in addr[0] */
	__u16 port;		/* destination, host order */
	__u8 family;		/* 4, 6, or 0: no address (socket, listen, unix) */
	__u8 proto;		/* IPPROTO_*; for socket events the protocol asked */
	__u8 hook;		/* enum egret_hook */
	__u8 verdict;		/* enum egret_verdict */
	__u8 reason;		/* enum egret_reason */
	__u8 sock_type;		/* socket events: SOCK_* */
	char comm[16];
	__s32 level;		/* sockopt events */
	__s32 optname;
};

/* How many ports an attempt pins, of each kind (`pinning: ports:` and
 * `http_ports:` in the policy). */
#define EGRET_PIN_PORTS		4

/*
 * egret_attempt: the cgroup storage of every attachment - per attempt, as
 * the kernel hands each program the storage of the cgroup it was attached
 * to. egret writes it once its programs are attached, before anything runs
 * in the cgroup; until then it is zero, and key 0 matches no entry: every
 * destination is refused.
 */
struct egret_attempt {
	__u64 key;		/* the attempt's cgroup id: its entries' key */
	__u32 dns_proxy_ip6[4];	/* network order: ::1 or ::ffff:127.0.0.1 */
	__u16 dns_proxy_port_be;	/* 0: no proxy, DNS is judged as any */
	__u8 log_allowed;	/* --log-allowed */
	__u8 audit;		/* --audit */
	__s32 deny_errno;	/* refused connect/sendmsg; 0: EPERM */
	__u32 slot;		/* its ring buffer and repeat counts; 0: none */
	__u32 zero;		/* padding, always 0 */
	/* TCP ports whose TLS is pinned to names (0: unused); UDP to them
	 * is refused on pinned addresses (QUIC cannot be read here). */
	__u16 pin_ports[EGRET_PIN_PORTS];
	/* TCP ports whose plain HTTP requests are pinned to names. */
	__u16 http_ports[EGRET_PIN_PORTS];
};

/*
 * egret_repeats: a denial already sent through the ring buffer, by what
 * was denied (struct egret_event without its time and process). Later
 * ones with the same key are only counted in the value (__u64), as is a
 * first one the ring had no room for; egret reads the counts every
 * second (user/observe/repeats.c). The key is zeroed before it is
 * filled: no padding holds stack garbage.
 */
#define EGRET_REPEATS_MAX	4096

struct egret_repeat_key {
	__u32 addr[4];		/* as egret_event */
	__u16 port;
	__u8 family;
	__u8 proto;
	__u8 hook;
	__u8 verdict;
	__u8 reason;
	__u8 sock_type;
	__s32 level;
	__s32 optname;
	/* The command that was refused (its task's comm; "" without a task):
	 * each distinct command's first refusal is an event of its own, so
	 * a request names every command that asked, not only the first. */
	char comm[16];
};

/*
 * SNI pinning (bpf/lib/pin.h, docs/SECURITY.md "SNI pinning").
 *
 * egret_pins: (attempt, address, name) for every name whose DNS answer in
 * the attempt held the address, with the rules it was learned with (an
 * egret_allow value: ports and deadlines, as the address's own entry).
 * The whole name is the key, never a hash of it: a hash collision would
 * be a name an attacker can choose. Lower case, no trailing dot, the rest
 * of name[] zero; len counts its bytes (1..EGRET_SNI_MAX).
 */
#define EGRET_SNI_MAX		253

struct egret_pin_key {
	__u64 attempt;
	__u32 family;		/* 4 or 6 */
	__u32 addr[4];		/* network order; IPv4 in addr[0] */
	__u32 len;
	char name[EGRET_SNI_MAX + 3];	/* 256: padded to the word */
};

/* A TLS or HTTP decision's record in the ring: the event, then the name
 * the ClientHello or the request asked for (NUL-terminated; "" when it
 * named none, or egret could not read one). */
struct egret_tls_event {
	struct egret_event e;
	char sni[EGRET_SNI_MAX + 3];
};

/* egret_tls_counts: per slot, the TLS verdicts (sk_msg programs have no
 * cgroup storage to count in). Zeroed when the slot is claimed. */
struct egret_tls_count {
	__u64 n[EGRET_VERDICT_MAX];
	__u64 lost;		/* events the ring had no room for */
};

/* egret_unix_allow: an abstract unix socket name the operator allows
 * (--allow-unix @NAME), without its leading NUL: at most 107 bytes
 * (sun_path's 108 less the NUL); the rest of name[] is zero. */
#define EGRET_UNIX_NAME_MAX	107

struct egret_unix_key {
	__u64 attempt;
	__u32 len;
	char name[EGRET_UNIX_NAME_MAX + 1];
};

#define EGRET_UNIX_ALLOW_MAX	64	/* per attempt */

/*
 * Bytes per destination (bpf/lib/account.h, docs/BUDGETS.md). A
 * destination is a name the attempt learned through egret's proxy, or a
 * static rule (its spec text); egret gives each an id per attempt (1..)
 * and writes its entry here before any allow entry carries the id, so
 * the programs always find it. The name is in the value for bpftool and
 * for an egretd that re-adopts the attempt.
 */
#define EGRET_DEST_NAME_MAX	255
#define EGRET_DESTS_DEFAULT	4096	/* per attempt: --max-destinations */

struct egret_dest_key {
	__u64 attempt;
	__u32 dest;
	__u32 zero;		/* padding, always 0 */
};

struct egret_dest_count {
	__u64 sent;		/* transport payload sent; a retransmission once */
	__u64 received;		/* TCP payload received */
	__u64 conns;		/* TCP connections opened */
	__u64 budget;		/* bytes it may be sent; 0: no budget */
	__u32 over;		/* a send was refused: later connects are too */
	__u32 zero;
	char name[EGRET_DEST_NAME_MAX + 1];	/* NUL-terminated */
};

/*
 * egret_dest_tally: the same destination's counts that no budget needs
 * at the send, one copy per CPU (BPF_MAP_TYPE_PERCPU_HASH, same key):
 * every CPU adds to its own, so no cache line travels between CPUs per
 * packet. egret makes the entry with the counts entry and sums the CPUs
 * when it reads them: a destination's figures are its counts entry's
 * plus its tally's (user/enforce/dests.c). Only the bytes of a
 * destination with a budget are reserved in the counts entry itself.
 */
struct egret_dest_tally {
	__u64 sent;
	__u64 received;
	__u64 conns;
	__u64 zero;
};

/* Address classes that are denied unless named explicitly. */
enum egret_addr_class {
	EGRET_ADDR_NORMAL = 0,
	EGRET_ADDR_UNSPECIFIED,		/* 0.0.0.0/8, :: */
	EGRET_ADDR_LOOPBACK,		/* 127.0.0.0/8, ::1 */
	EGRET_ADDR_LINK_LOCAL,		/* 169.254.0.0/16, fe80::/10 */
	EGRET_ADDR_METADATA,		/* 169.254.169.254, fd00:ec2::254 */
	EGRET_ADDR_MULTICAST,		/* 224.0.0.0/4, ff00::/8 */
	EGRET_ADDR_BROADCAST,		/* 255.255.255.255 */
};

/* What one attempt may hold (user/enforce/allow.c counts): `egret run
 * --max-entries` overrides the exact entries per family (and the names,
 * EGRET_NAMES_PER_ENTRY times that), `--max-cidrs` the prefixes. */
#define EGRET_DEFAULT_MAX_ENTRIES	65536
/* egret_names holds a name for each address of egret_allow4 and
 * egret_allow6: this many times their max_entries. */
#define EGRET_NAMES_PER_ENTRY		2
#define EGRET_DEFAULT_MAX_CIDRS		4096

/*
 * What all attempts of one set of programs hold together: the maps' own
 * sizes. Not preallocated: a hash pins 16 bytes of buckets per entry up
 * front (4 MiB for egret_allow4), a trie nothing; both grow with use.
 * A full map fails closed: a learned name answers SERVFAIL (map-full).
 */
#define EGRET_SHARED_ENTRIES		(1U << 18)
#define EGRET_SHARED_CIDRS		(1U << 16)
#define EGRET_SHARED_HOSTS		(1U << 16)
#define EGRET_SHARED_UNIX		(1U << 12)
#define EGRET_SHARED_DESTS		(1U << 17)
/* Each attempt takes a slot: a ring buffer and repeat counts, made once
 * and reused by the attempts after it (registering a new one costs the
 * kernel an RCU grace period, ~10 ms here). Slot 0 is never handed out. */
#define EGRET_SLOTS_MAX			4096	/* attempts per set at once */
#define EGRET_RING_BYTES		(1U << 17)	/* each slot's events */

/* egret_counters: the per-CPU cgroup storage value. */
struct egret_counts {
	__u64 n[EGRET_NCOUNTERS];
};

/* Both compilers (clang -target bpf, gcc) must lay these out alike. */
_Static_assert(sizeof(struct egret_port_rule) == 16, "egret_port_rule layout");
_Static_assert(sizeof(struct egret_allow) == 136, "egret_allow layout");
_Static_assert(sizeof(struct egret_key4) == 16, "egret_key4 layout");
_Static_assert(sizeof(struct egret_key6) == 24, "egret_key6 layout");
_Static_assert(sizeof(struct egret_lpm_key4) == 16, "egret_lpm_key4 layout");
_Static_assert(sizeof(struct egret_lpm_key6) == 28, "egret_lpm_key6 layout");
_Static_assert(sizeof(struct egret_attempt) == 56, "egret_attempt layout");
_Static_assert(sizeof(struct egret_pin_key) == 288, "egret_pin_key layout");
_Static_assert(sizeof(struct egret_tls_event) == 328, "egret_tls_event layout");
_Static_assert(sizeof(struct egret_dns_orig) == 24, "egret_dns_orig layout");
_Static_assert(sizeof(struct egret_conn) == 24, "egret_conn layout");
_Static_assert(sizeof(struct egret_dest_key) == 16, "egret_dest_key layout");
_Static_assert(sizeof(struct egret_dest_count) == 296, "egret_dest_count layout");
_Static_assert(sizeof(struct egret_dest_tally) == 32, "egret_dest_tally layout");
_Static_assert(sizeof(struct egret_event) == 72, "egret_event layout");
_Static_assert(sizeof(struct egret_name_key) == 32, "egret_name_key layout");
_Static_assert(sizeof(struct egret_repeat_key) == 48, "egret_repeat_key layout");
_Static_assert(sizeof(struct egret_unix_key) == 120, "egret_unix_key layout");

/* One live task, as the task iterator (bpf/tasks.bpf.c) writes it:
 * pids as the kernel's initial namespace numbers them. */
struct egret_task_ids {
	__u32 tgid, pid;
	__u32 uid, euid, suid, fsuid;
};

_Static_assert(sizeof(struct egret_task_ids) == 24, "egret_task_ids layout");

#endif /* EGRET_H */
