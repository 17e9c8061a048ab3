// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * observe/dns_words.c - why the DNS proxy refused or failed a name, in the
 * log's words and in people's (observe/dns_words.h).
 */
#include "observe/dns_words.h"

static const char *const dns_why_names_[DNS_WHY_MAX] = {
	[DNS_WHY_NOT_ALLOWED] = "not-allowed", [DNS_WHY_CLASS] = "class",
	[DNS_WHY_TIMEOUT] = "upstream-timeout", [DNS_WHY_UPSTREAM] = "upstream-error",
	[DNS_WHY_MALFORMED] = "malformed-answer", [DNS_WHY_TOO_MANY] = "too-many-addresses",
	[DNS_WHY_MAP_FULL] = "map-full", [DNS_WHY_BUSY] = "busy",
	[DNS_WHY_QUIET] = "quiet",
};

const char *dns_why_name(enum dns_why why)
{
	return why < DNS_WHY_MAX && dns_why_names_[why] ? dns_why_names_[why] : "unknown";
}

static const char *const dns_why_texts_[DNS_WHY_MAX] = {
	[DNS_WHY_NOT_ALLOWED] = "not allowed by the policy",
	[DNS_WHY_CLASS] = "a class other than IN",
	[DNS_WHY_TIMEOUT] = "the upstream resolver did not answer",
	[DNS_WHY_UPSTREAM] = "the upstream resolver failed",
	[DNS_WHY_MALFORMED] = "the upstream answer did not parse",
	[DNS_WHY_TOO_MANY] = "more addresses than egret learns from one answer",
	[DNS_WHY_MAP_FULL] = "the allow map is full (raise --max-entries)",
	[DNS_WHY_BUSY] = "too many questions upstream at once",
	[DNS_WHY_QUIET] = "an agent's known noise (its profile's quiet list)",
};

const char *dns_why_text(enum dns_why why)
{
	return why < DNS_WHY_MAX && dns_why_texts_[why] ? dns_why_texts_[why] : "unknown";
}
