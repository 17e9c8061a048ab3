// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// egret-spawn.js - how a miner starts its agent through egret: the one
// change is the command, `egret run [--repo R] -- AGENT...` in place of
// `AGENT...` (docs/DEPLOYMENT.md, "The miner's spawn call"). As a non-root
// user, egret run goes through egretd; stdio, the exit code and signals
// behave as the agent's own would.
'use strict';
const { spawn } = require('child_process');

// spawnAgent(argv, { repo, egret, via, ...spawnOptions }): the ChildProcess
// of `egret run`, as child_process.spawn(argv[0], argv.slice(1)) would give
// for the agent itself.
function spawnAgent(argv, opts = {}) {
	const { repo, egret = 'egret', via, ...spawnOpts } = opts;
	const args = ['run'];
	if (via)
		args.push('--via', via);
	if (repo)
		args.push('--repo', repo);	// the miner picks the policy section
	args.push('--', ...argv);
	return spawn(egret, args, spawnOpts);
}

// The same, awaited: { code, signal } as Node's 'exit' event gives them.
function runAgent(argv, opts = {}) {
	return new Promise((resolve, reject) => {
		const child = spawnAgent(argv, opts);
		child.on('error', reject);
		child.on('exit', (code, signal) => resolve({ code, signal, child }));
		if (opts.onSpawn)
			opts.onSpawn(child);
	});
}

module.exports = { spawnAgent, runAgent };
