// The commands the documentation shows, run as written: every ```sh block of the README's
// "60-second demo" and "Quick start" and of docs/cli.md, in order, as one reader would type them
// in one terminal (what a block exports, the next one has), with bash and the real curl, against
// the real programs the blocks start. So a documented command that breaks, or prints something
// else than the page says, fails here.
//
// How a page is read:
// - A line that ends in `&`, or whose comment says it serves "until Ctrl-C", starts a server: it
//   is run in the background (bash, its own process group) and the page goes on once the server
//   answers /healthz; every server of a page is stopped with SIGTERM (by its process group) when
//   the page is done.
// - `# =>` lines after a command are output it must print: each, in order, a part of what the
//   commands since the last `# =>` printed (stdout and stderr).
// - Every other line runs under `set -e`: a command that exits non-zero fails the page.
// - Ports: 8080, 9090 and 9091 (the public, operations and admin listeners of config/gateway.yaml
//   and config/demo.yaml) become free ports, in commands and `# =>` lines alike, and the
//   environment names them (GATEWAY_PORT, METRICS_PORT, ADMIN_PORT, DEMO_PORT, ...). A server's
//   embedded store goes to a temporary folder (GATEWAY_DATA), not to data/.
// - `explorer-gateway` is the package's bin: `node --import tsx src/cli.ts`, no build needed.
// - `npm ci` is not run: it would replace node_modules under every other test.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort } from '../support/gateway.js';
import { until } from '../support/wait.js';

const ROOT = new URL('../..', import.meta.url).pathname;

interface Block {
  file: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  text: string;
}

/** The ```sh blocks of `file`, only those under the `## ` headings named when `sections` is given. */
function shBlocks(file: string, sections?: string[]): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('## ')) heading = line.slice(3).trim();
    if (!line.startsWith('```')) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that does not end`);
    if (line.trim() === '```sh' && (sections === undefined || sections.includes(heading))) {
      blocks.push({ file, line: i + 1, text: lines.slice(i + 1, end).join('\n') });
    }
    i = end;
  }
  return blocks;
}

/** The ```text block right after the first ```sh block under `section` (the README's sample of what the demo prints). */
function sampleAfter(file: string, section: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const from = text.indexOf(`\n## ${section}\n`);
  const block = /```text\n([\s\S]*?)\n```/.exec(text.slice(from))![1]!;
  return block.split('\n');
}

/** A command of a block: its lines, the output they must print, or a server to start. */
type Step = { kind: 'run'; script: string; expect: string[]; at: number } | { kind: 'serve'; command: string; at: number };

/** Strips a trailing `# comment` (outside quotes) from a shell line. */
function code(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

function steps(block: Block): Step[] {
  const out: Step[] = [];
  let script: string[] = [];
  let expect: string[] = [];
  let at = block.line + 1;
  let heredoc: string | undefined;
  const flush = (next: number) => {
    if (script.some((l) => l.trim() !== '') || expect.length > 0) out.push({ kind: 'run', script: script.join('\n'), expect, at });
    script = [];
    expect = [];
    at = next;
  };
  block.text.split('\n').forEach((line, i) => {
    const n = block.line + 2 + i;
    if (heredoc !== undefined) {
      script.push(line);
      if (line === heredoc) heredoc = undefined;
      return;
    }
    const expected = /^# => ?(.*)$/.exec(line);
    if (expected) {
      expect.push(expected[1]!);
      return;
    }
    if (expect.length > 0) flush(n);
    const body = code(line);
    heredoc = /<<-?\s*'?"?(\w+)'?"?/.exec(body)?.[1];
    if (body.endsWith('&') && !body.endsWith('&&')) {
      flush(n);
      out.push({ kind: 'serve', command: body.slice(0, -1).trim(), at: n });
      at = n + 1;
    } else if (/until ctrl-c/i.test(line.slice(body.length))) {
      flush(n);
      out.push({ kind: 'serve', command: body, at: n });
      at = n + 1;
    } else {
      script.push(line);
    }
  });
  flush(0);
  return out;
}

/** `npm ci` is left out: it would replace node_modules under the other tests. */
const withoutNpmCi = (script: string) => script.replace(/^npm ci( &&\s*|\s*$)/gm, '');

/** One reader's terminal: the environment the blocks build up, the servers they started. */
class Terminal {
  private readonly dir = mkdtempSync(join(tmpdir(), 'egw-docs-'));
  private readonly envFile = join(this.dir, 'env.sh');
  readonly servers: { child: ChildProcess; output: () => string; command: string }[] = [];
  private constructor(
    readonly ports: { public: number; ops: number; admin: number },
    private readonly env: NodeJS.ProcessEnv,
  ) {
    writeFileSync(this.envFile, '');
  }

  static async open(): Promise<Terminal> {
    const ports = { public: await closedPort(), ops: await closedPort(), admin: await closedPort() };
    const env: NodeJS.ProcessEnv = { ...process.env };
    // What a reader's shell would not have set, or this run must not inherit.
    for (const name of Object.keys(env)) {
      if (/^(DEMO_|GATEWAY_|METRICS_|ADMIN_|EGW_|ETH_UPSTREAM_KEY$|DATABASE_URL$|NODE_OPTIONS$|npm_)/.test(name)) delete env[name];
    }
    const t = new Terminal(ports, env);
    const bin = join(t.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'explorer-gateway'), `#!/bin/sh\nexec "${process.execPath}" --import tsx "${join(ROOT, 'src/cli.ts')}" "$@"\n`);
    chmodSync(join(bin, 'explorer-gateway'), 0o755);
    Object.assign(env, {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      GATEWAY_PORT: String(ports.public),
      METRICS_PORT: String(ports.ops),
      ADMIN_PORT: String(ports.admin),
      DEMO_PORT: String(ports.public),
      DEMO_METRICS_PORT: String(ports.ops),
      DEMO_ADMIN_PORT: String(ports.admin),
    });
    return t;
  }

  /** The documented ports made this terminal's. */
  rewrite(text: string): string {
    return text
      .replace(/\b8080\b/g, String(this.ports.public))
      .replace(/\b9090\b/g, String(this.ports.ops))
      .replace(/\b9091\b/g, String(this.ports.admin));
  }

  /** Runs one step's lines in bash, with what the steps before exported; its exit code and output. */
  run(script: string): { code: number | null; all: string } {
    const body = [
      'set -a', // a variable a block sets is there in the next block, as in one terminal
      `. '${this.envFile}'`,
      'set -e',
      'exec 2>&1',
      script,
      `export -p > '${this.envFile}'`,
    ].join('\n');
    const r = spawnSync('bash', ['-c', body], { cwd: ROOT, env: this.env, encoding: 'utf8', timeout: 60_000 });
    return { code: r.status, all: (r.stdout ?? '') + (r.stderr ?? '') };
  }

  /** Starts a server line in the background and waits until it answers /healthz. */
  async serve(command: string): Promise<void> {
    const data = join(this.dir, `data-${this.servers.length}`, 'gateway.db');
    const child = spawn('bash', ['-c', `set -a; . '${this.envFile}'; set +a; exec ${command}`], {
      cwd: ROOT,
      env: { ...this.env, GATEWAY_DATA: data },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: npm and what it starts are stopped together
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    this.servers.push({ child, output: () => output, command });
    const deadline = Date.now() + 90_000; // npm start builds dist/ first
    for (;;) {
      if (child.exitCode !== null) throw new Error(`\`${command}\` exited with ${child.exitCode}:\n${output}`);
      const ok = await fetch(`http://127.0.0.1:${this.ports.public}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`\`${command}\` did not answer /healthz in 90 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // config/gateway.yaml's claims, the README's quick start among them: the operations listener
    // answers, and the embedded store is made where GATEWAY_DATA (by default data/gateway.db) says.
    if (/npm start|config\/gateway\.yaml/.test(command)) {
      expect((await fetch(`http://127.0.0.1:${this.ports.ops}/healthz`)).status).toBe(200);
      expect(existsSync(data), `${command} made its store at GATEWAY_DATA`).toBe(true);
    }
  }

  /** Stops every server it started: SIGTERM to its process group, SIGKILL past 20 s. */
  async close(): Promise<void> {
    await Promise.all(
      this.servers.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        const signal = (s: NodeJS.Signals) => {
          try {
            process.kill(-child.pid!, s);
          } catch {
            // the group is gone already
          }
        };
        signal('SIGTERM');
        const timer = setTimeout(() => signal('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    this.servers.length = 0;
  }

  /** Runs every block of a page in order, failing on the first command that fails or prints something else. */
  async runPage(blocks: Block[]): Promise<void> {
    for (const block of blocks) {
      for (const step of steps({ ...block, text: this.rewrite(block.text) })) {
        const where = `${block.file}:${step.at}`;
        if (step.kind === 'serve') {
          await this.serve(withoutNpmCi(step.command));
          continue;
        }
        const script = withoutNpmCi(step.script);
        const r = this.run(script === '' ? ':' : script);
        expect(r.code, `${where}: exited ${r.code}:\n${script}\n---\n${r.all}`).toBe(0);
        let from = 0;
        for (const want of step.expect) {
          const found = r.all.indexOf(want, from);
          expect(found, `${where}: expected output\n  ${want}\nin\n${r.all}`).toBeGreaterThanOrEqual(0);
          from = found + want.length;
        }
      }
    }
  }
}

const open: Terminal[] = [];
afterAll(async () => {
  await Promise.all(open.map((t) => t.close()));
}, 30_000);

/** Port numbers taken out, for text printed by a run against text a page shows. */
const anyPort = (s: string) => s.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');

describe('the documented commands', () => {
  it('README: the 60-second demo and the quick start, as printed', async () => {
    const readme = shBlocks('README.md', ['60-second demo', 'Quick start']);
    expect(readme.length).toBeGreaterThanOrEqual(4);
    const demo = shBlocks('README.md', ['60-second demo']);
    const t = await Terminal.open();
    open.push(t);
    await t.runPage(demo);
    // What the demo printed is what the README shows (the ports aside; `…` stands for lines left out),
    // once it has printed it: it sells at start through its admin API, after it answers /healthz.
    await until(() => t.servers[0]!.output().includes('Ctrl-C stops both.'), 'the demo to print its commands', 60_000);
    const printed = anyPort(t.servers[0]!.output());
    for (const line of sampleAfter('README.md', '60-second demo')) {
      if (line.trim() === '…') continue;
      expect(printed, `README's demo sample line\n${line}`).toContain(anyPort(line));
    }
    await t.close();
    await t.runPage(shBlocks('README.md', ['Quick start']));
    await t.close();
  }, 300_000);

  it('docs/cli.md, every block in order', async () => {
    const blocks = shBlocks('docs/cli.md');
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    const t = await Terminal.open();
    open.push(t);
    await t.runPage(blocks);
    await t.close();
  }, 300_000);
});
