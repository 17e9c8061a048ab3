// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// miner.js - the example miner image's stand-in for a miner: each line
// of its input is one attempt, `REPO COMMAND...`, started the way the
// miner starts its agent (egret-spawn.js); it prints each attempt's exit
// code. With no input it waits, as a service does.
'use strict';
const readline = require('readline');
const { runAgent } = require('./egret-spawn.js');

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (line) => {
	const [repo, ...argv] = line.trim().split(/\s+/);
	if (!repo || !argv.length)
		return;
	const { code, signal } = await runAgent(argv, { repo, stdio: 'inherit' });
	console.log(`attempt ${repo}: exit ${code}${signal ? ` signal ${signal}` : ''}`);
});
