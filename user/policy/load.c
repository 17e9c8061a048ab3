// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "lib/trust.h"
#include "lib/util.h"
#include "policy/load.h"
#include "policy/yaml.h"

int policy_doc_load_file(struct policy_doc *doc, const char *path,
			 const struct catalog *cat, struct diag *d)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	memset(doc, 0, sizeof(*doc));
	r = trusted_file_read(path, "policy", POLICY_MAX_FILE_SIZE, &text, &len, d);
	if (r < 0)
		return r;
	return policy_doc_parse(doc, text, len, path, cat, d);
}

int policy_doc_load_default(struct policy_doc *doc, const struct catalog *cat,
			    struct diag *d)
{
	return policy_doc_parse(doc, egret_default_policy_yaml,
				strlen(egret_default_policy_yaml),
				"<built-in default policy>", cat, d);
}
