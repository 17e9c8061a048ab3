/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * embedded.S - data files compiled into egret: the registry catalog and
 * the built-in default policy. Each is NUL-terminated text.
 */
	.section .rodata

	.global egret_catalog_yaml
	.type egret_catalog_yaml, @object
egret_catalog_yaml:
	.incbin "user/policy/catalog.yaml"
	.byte 0

	.global egret_default_policy_yaml
	.type egret_default_policy_yaml, @object
egret_default_policy_yaml:
	.incbin "user/policy/default-policy.yaml"
	.byte 0

	.section .note.GNU-stack,"",@progbits
