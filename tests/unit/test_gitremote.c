// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_gitremote.c - --git-remote URL forms. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "policy/gitremote.h"

static void assert_remote(const char *url, const char *host, unsigned int port,
			  const char *scheme, bool is_ip)
{
	struct git_remote r;
	char err[160] = "";

	if (git_remote_parse(url, &r, err, sizeof(err)) != 0)
		fail_msg("'%s' rejected: %s", url, err);
	assert_string_equal(r.host, host);
	assert_int_equal(r.port, port);
	assert_string_equal(r.scheme, scheme);
	assert_int_equal(r.is_ip, is_ip);
}

static void assert_refused(const char *url)
{
	struct git_remote r;
	char err[160] = "";

	if (git_remote_parse(url, &r, err, sizeof(err)) == 0)
		fail_msg("'%s' accepted", url);
	assert_true(err[0] != '\0');
}

static void forms(void **state)
{
	assert_remote("https://github.com/owner/repo.git", "github.com", 443, "https", false);
	assert_remote("HTTPS://GitHub.com/owner/repo", "github.com", 443, "https", false);
	assert_remote("https://user:token@git.example.org:8443/o/r", "git.example.org", 8443, "https", false);
	assert_remote("http://git.example.org/o/r", "git.example.org", 80, "http", false);
	assert_remote("ssh://git@github.com/owner/repo.git", "github.com", 22, "ssh", false);
	assert_remote("ssh://git@ssh.github.com:443/owner/repo.git", "ssh.github.com", 443, "ssh", false);
	assert_remote("git+ssh://git@gitlab.com/o/r", "gitlab.com", 22, "ssh", false);
	assert_remote("git@github.com:owner/repo.git", "github.com", 22, "ssh", false);
	assert_remote("github.com:owner/repo", "github.com", 22, "ssh", false);
	assert_remote("git://git.kernel.org/pub/scm/git/git.git", "git.kernel.org", 9418, "git", false);
	assert_remote("https://203.0.113.7/o/r", "203.0.113.7", 443, "https", true);
	assert_remote("ssh://git@[2001:db8::7]:2222/o/r", "2001:db8::7", 2222, "ssh", true);
	assert_remote("git@[2001:db8::7]:o/r", "2001:db8::7", 22, "ssh", true);
	assert_remote("https://github.com", "github.com", 443, "https", false);
}

static void refused(void **state)
{
	assert_refused("/srv/git/repo.git");
	assert_refused("./repo");
	assert_refused("file:///srv/git/repo.git");
	assert_refused("ext::ssh -o ProxyCommand=x host");
	assert_refused("https://bad host/o/r");
	assert_refused("https://github.com:0/o/r");
	assert_refused("https://github.com:65536/o/r");
	assert_refused("https://*.github.com/o/r");
	assert_refused("https:///o/r");
	assert_refused(":owner/repo");
	assert_refused("");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forms),
		cmocka_unit_test(refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
