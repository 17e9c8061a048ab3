// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// miner-check.js - what tests/integration (t_egretd_node_miner) asks of
// egret-spawn.js, run as the miner would: node miner-check.js EGRET SOCKET
// DIR. Prints one "KEY: VALUE" line per check.
'use strict';
const { spawnAgent, runAgent } = require('./egret-spawn.js');
const fs = require('fs');
const [egret, via, dir] = process.argv.slice(2);
const base = { egret, via, repo: 'octo/app' };

function waitFor(path, ms) {
	return new Promise((resolve) => {
		const t0 = Date.now();
		const tick = () => fs.existsSync(path) || Date.now() - t0 > ms ?
			resolve() : setTimeout(tick, 50);
		tick();
	});
}

async function main() {
	// Piped stdio: the agent reads what Node writes, Node reads what it
	// writes on stdout and stderr, and sees its exit code.
	// An egret that ends before it reads stdin (a refusal) makes the
	// write fail with EPIPE: reported as a check's value, never a crash.
	let out = '', err = '', stdinErr = 'ok';
	const piped = await runAgent(['sh', '-c', 'read -r x; echo "in:$x"; echo to-err >&2; exit 7'],
		{ ...base, stdio: ['pipe', 'pipe', 'pipe'], onSpawn: (c) => {
			c.stdout.on('data', (d) => { out += d; });
			c.stderr.on('data', (d) => { err += d; });
			c.stdin.on('error', (e) => { stdinErr = e.code || String(e); });
			c.stdin.end('hello\n');
		} });
	console.log(`piped-code: ${piped.code}`);
	console.log(`piped-stdin: ${stdinErr}`);
	console.log(`piped-out: ${out.trim()}`);
	console.log(`piped-err: ${err.includes('to-err') ? 'to-err' : err.trim()}`);

	// A kill from Node reaches the attempt: the agent's trap runs, and
	// its status is what Node sees.
	const ready = `${dir}/node.ready`;
	const killed = spawnAgent(['sh', '-c',
		`trap 'echo got-term >"${dir}/node.term"; exit 9' TERM; touch "${ready}"; ` +
		'i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done'],
		{ ...base, stdio: 'ignore' });
	const exited = new Promise((resolve) => killed.on('exit', (code, signal) => resolve({ code, signal })));
	await waitFor(ready, 20000);
	killed.kill('SIGTERM');
	const k = await exited;
	console.log(`killed-code: ${k.code}`);
	let term = '';
	try { term = fs.readFileSync(`${dir}/node.term`, 'utf8').trim(); } catch (e) { term = 'none'; }
	console.log(`killed-trap: ${term}`);

	// A repository the miner may not select: egret's one line and 125.
	let ferr = '';
	const foreign = await runAgent(['true'], { ...base, repo: 'octo/other',
		stdio: ['ignore', 'ignore', 'pipe'],
		onSpawn: (c) => c.stderr.on('data', (d) => { ferr += d; }) });
	console.log(`foreign-code: ${foreign.code}`);
	console.log(`foreign-said: ${ferr.includes('callers.repos') ? 'callers.repos' : ferr.trim()}`);
}

main().catch((e) => { console.log(`error: ${e}`); process.exit(1); });
