// FC's Node.js runtime, locally: one function instance (docs/runtime.md, "Node.js").
//
// The Python worker (bootstrap.py) enters the sandbox, cleans the environment and then becomes
// `node nodejs_runtime.js REQUEST_FD RESPONSE_FD CONFIG_FD`: the instance config comes through
// CONFIG_FD, requests and answers travel as frames over the two pipes (>II header/body lengths,
// JSON header, raw body; frames.py), stdout and stderr are the function's log.
//
// Per request: `invoke` calls handler(event: Buffer, context, callback), `initializer` calls
// initialize(context, callback), `pre_stop` calls preStop(context, callback). The answer is the
// first of: the callback called, the returned promise settled, an exception. Results: a Buffer
// or a string as is, anything else JSON.stringify'd; errors {errorMessage, errorType,
// stackTrace}. Logs: console.* lines with time, request id and level; FC's markers around each
// request. SDK calls to the emulated endpoints are routed to the emulator, other Alibaba Cloud
// hosts refused, as the Python worker does (nodejs_routing.js; routing.py, cloud_access.py).
'use strict';

const fs = require('fs');
const net = require('net');
const path = require('path');
const util = require('util');
const { pathToFileURL } = require('url');

const [REQUEST_FD, RESPONSE_FD, CONFIG_FD] = process.argv.slice(2).map(Number);
const config = JSON.parse(fs.readFileSync(CONFIG_FD, 'utf8'));
fs.closeSync(CONFIG_FD);
const SELF = __filename;
const CODE_ROOT = process.cwd();
const MAJOR = Number(/^nodejs(\d+)$/.exec(config.runtime)[1]);
const MODERN = MAJOR >= 18; // Debian 10 runtimes: new log format, ES modules, ALIYUN_FC_LOG_LEVEL
const ERROR_SUFFIX = ', Error: Unhandled function error';

// ---------------------------------------------------------------- frames

function writeAll(fd, buffer) {
  let offset = 0;
  while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset);
}

function encodeFrame(header, body = Buffer.alloc(0)) {
  const raw = Buffer.from(JSON.stringify(header), 'utf8');
  const lengths = Buffer.alloc(8);
  lengths.writeUInt32BE(raw.length, 0);
  lengths.writeUInt32BE(body.length, 4);
  return Buffer.concat([lengths, raw, body]);
}

function readFrames(fd, onFrame) {
  const input = new net.Socket({ fd, readable: true, writable: false });
  let pending = Buffer.alloc(0);
  let busy = Promise.resolve();
  input.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const headerSize = pending.readUInt32BE(0);
      const end = 8 + headerSize + pending.readUInt32BE(4);
      if (pending.length < end) break;
      const header = JSON.parse(pending.subarray(8, 8 + headerSize).toString('utf8'));
      const body = Buffer.from(pending.subarray(8 + headerSize, end));
      pending = pending.subarray(end);
      busy = busy.then(() => onFrame(header, body));
    }
  });
  input.on('end', () => busy.then(() => process.exit(0)));
}

// ---------------------------------------------------------------- virtual time

const RealDate = Date;
let offsetMs = 0;

function installVirtualTime() {
  class VirtualDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(Math.floor(RealDate.now() + offsetMs));
      else super(...args);
    }

    static now() { return Math.floor(RealDate.now() + offsetMs); }

    static [Symbol.hasInstance](value) { return value instanceof RealDate; }
  }
  globalThis.Date = new Proxy(VirtualDate, {
    apply() { return new VirtualDate().toString(); },
  });
}

// ---------------------------------------------------------------- logging

const LEVELS = ['debug', 'info', 'warn', 'error'];
const threshold = MODERN ? Math.max(0, LEVELS.indexOf(
  String(process.env.ALIYUN_FC_LOG_LEVEL || 'debug').toLowerCase())) : 0;
let requestId = '';

function pad(n, width = 2) { return String(n).padStart(width, '0'); }

function stamp() {
  const d = new Date();
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
    + `.${pad(d.getUTCMilliseconds(), 3)}`;
  return MODERN ? `${date} ${time}` : `${date}T${time}Z`;
}

function writeLog(text) { writeAll(1, Buffer.from(text, 'utf8')); }

function logAt(level, args, id = requestId) {
  if (MODERN && LEVELS.indexOf(level) >= 0 && LEVELS.indexOf(level) < threshold) return;
  writeLog(`${stamp()} ${id} [${level}] ${util.format(...args)}\n`);
}

function installConsole() {
  const plain = MODERN ? 'info' : 'silly';
  console.log = (...args) => logAt(plain, args);
  console.info = (...args) => logAt('info', args);
  console.debug = (...args) => logAt('debug', args);
  console.warn = (...args) => logAt('warn', args);
  console.error = (...args) => logAt('error', args);
  console.trace = (...args) => logAt('error', [util.format(...args), new Error().stack]);
}

function loggerFor(id) {
  const logger = {};
  for (const level of LEVELS) logger[level] = (...args) => logAt(level, args, id);
  logger.log = (...args) => logAt('info', args, id);
  return logger;
}

// ---------------------------------------------------------------- results and errors

function ownFrame(line) { return line.includes(SELF); }

function errorBody(err) {
  if (err instanceof Error) {
    const stack = String(err.stack || `${err.name}: ${err.message}`).split('\n')
      .filter((line) => !ownFrame(line));
    return { errorMessage: err.message, errorType: err.name, stackTrace: stack };
  }
  if (typeof err === 'string') return { errorMessage: err };
  try {
    return { errorMessage: JSON.stringify(err) };
  } catch (_) {
    return { errorMessage: String(err) };
  }
}

function resultBody(value) {
  if (value === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.length);
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  const text = JSON.stringify(value);
  return Buffer.from(text === undefined ? '' : text, 'utf8');
}

class RuntimeFailure extends Error {
  constructor(type, message) {
    super(message);
    this.name = type;
    this.stack = `${type}: ${message}`;
  }
}

// ---------------------------------------------------------------- handlers

const loaded = new Map();

function moduleFile(modulePath) {
  const base = path.resolve(CODE_ROOT, modulePath);
  const extensions = MODERN ? ['.js', '.mjs', '.cjs'] : ['.js'];
  return extensions.map((ext) => base + ext).find((file) => fs.existsSync(file));
}

async function importModule(file) {
  if (!file.endsWith('.mjs')) {
    try {
      return require(file);
    } catch (err) {
      if (!MODERN || !['ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE'].includes(err.code)) throw err;
    }
  }
  return import(pathToFileURL(file).href);
}

async function resolve(handler) {
  if (loaded.has(handler)) return loaded.get(handler);
  const dot = handler.lastIndexOf('.');
  if (dot <= 0) throw new RuntimeFailure('InvalidHandleName', `Invalid handler '${handler}'`);
  const modulePath = handler.slice(0, dot);
  const name = handler.slice(dot + 1);
  const file = moduleFile(modulePath);
  if (file === undefined) {
    throw new RuntimeFailure('ImportModuleError', `Cannot find module '${modulePath}' in the code `
      + `directory (looked for ${modulePath}.js${MODERN ? ', .mjs, .cjs' : ''})`);
  }
  const mod = await importModule(file);
  const fn = mod && typeof mod[name] === 'function' ? mod[name]
    : (mod && mod.default && typeof mod.default[name] === 'function' ? mod.default[name] : null);
  if (fn === null) {
    throw new RuntimeFailure('HandlerNotFound',
      `Handler '${name}' is missing on module '${modulePath}'`);
  }
  loaded.set(handler, fn);
  return fn;
}

let current = null; // { settle } of the request running now

function callHandler(fn, args) {
  return new Promise((settle) => {
    let done = false;
    const finish = (outcome) => {
      if (done) return;
      done = true;
      current = null;
      settle(outcome);
    };
    current = { finish };
    const callback = (err, data) => finish(err ? { error: err } : { value: data });
    let returned;
    try {
      returned = fn(...args, callback);
    } catch (err) {
      finish({ error: err });
      return;
    }
    if (returned && typeof returned.then === 'function') {
      returned.then((value) => finish({ value }), (err) => finish({ error: err || 'rejected' }));
    }
  });
}

process.on('uncaughtException', (err) => {
  if (current) current.finish({ error: err, discard: true });
  else logAt('error', [err]);
});
process.on('unhandledRejection', (reason) => {
  if (current) current.finish({ error: reason, discard: true });
  else logAt('error', ['Unhandled promise rejection:', reason]);
});

// ---------------------------------------------------------------- context and credentials

let credentials = null;

function useCredentials(creds) {
  if (!creds) return;
  const mode = config.disable_inject_credentials || 'None';
  if (mode !== 'Env' && mode !== 'All') {
    process.env.ALIBABA_CLOUD_ACCESS_KEY_ID = creds.access_key_id || '';
    process.env.ALIBABA_CLOUD_ACCESS_KEY_SECRET = creds.access_key_secret || '';
    process.env.ALIBABA_CLOUD_SECURITY_TOKEN = creds.security_token || '';
  }
  if (mode !== 'Request' && mode !== 'All') credentials = creds;
}

function makeContext(id) {
  const creds = credentials || {};
  return {
    requestId: id,
    credentials: {
      accessKeyId: creds.access_key_id || '',
      accessKeySecret: creds.access_key_secret || '',
      securityToken: creds.security_token || '',
    },
    function: {
      name: config.function_name, handler: config.handler,
      memory: config.memory_size, timeout: config.timeout,
      initializer: config.initializer || '',
      initializationTimeout: config.initializer ? config.initializer_timeout : 0,
    },
    service: {
      name: '', logProject: '', logStore: '',
      qualifier: config.qualifier, versionId: config.version_id,
    },
    region: config.region,
    accountId: config.account_id,
    retryCount: 0,
    tracing: { openTracingSpanContext: '', openTracingSpanBaggages: {}, jaegerEndpoint: '' },
    logger: loggerFor(id),
  };
}

// ---------------------------------------------------------------- one request

const PHASES = { invoke: 'Invoke', initializer: 'Initialize', pre_stop: 'PreStop' };
const sleep = (ms) => new Promise((wake) => { setTimeout(wake, ms); });

async function serve(header, event) {
  const kind = header.kind;
  const phase = PHASES[kind] || 'Invoke';
  requestId = header.request_id;
  useCredentials(header.credentials);
  const started = process.hrtime.bigint();
  let now = header.now; // seconds, virtual clock only
  if (now !== null && now !== undefined) offsetMs = now * 1000 - RealDate.now();
  writeLog(`FC ${phase} Start RequestId: ${requestId}\n`);
  const context = makeContext(requestId);
  let outcome;
  let waited = 0;
  try {
    const fn = await resolve(kind === 'invoke' ? config.handler : config[kind]);
    waited = Number(header.cold_start || 0);
    if (waited > 0 && (now === null || now === undefined)) await sleep(waited * 1000);
    else if (waited > 0) offsetMs += waited * 1000;
    outcome = await callHandler(fn, kind === 'invoke' ? [event, context] : [context]);
  } catch (err) {
    outcome = { error: err };
  }
  let ok = !('error' in outcome);
  let body = Buffer.alloc(0);
  if (ok && kind === 'invoke') {
    try {
      body = resultBody(outcome.value);
    } catch (err) {
      ok = false;
      outcome = { error: err };
    }
  }
  if (!ok) {
    body = Buffer.from(JSON.stringify(errorBody(outcome.error)), 'utf8');
    writeLog(`${body.toString('utf8')}\n`);
  }
  writeLog(`FC ${phase} End RequestId: ${requestId}${ok ? '' : ERROR_SUFFIX}\n`);
  offsetMs = 0;
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  const answer = { ok, duration_ms: Math.max(elapsed - waited * 1000, 0) };
  if (waited) answer.cold_start = waited;
  if (outcome.discard) answer.discard = true;
  writeAll(RESPONSE_FD, encodeFrame(answer, body));
}

// ---------------------------------------------------------------- start

function main() {
  installConsole();
  if (config.virtual_time) installVirtualTime();
  if (config.cloud_endpoint) {
    require(path.join(__dirname, 'nodejs_routing.js')).installRouting(
      config.cloud_endpoint, config.emulated_hosts, config.internet_access !== false);
  }
  useCredentials(config.credentials);
  writeAll(RESPONSE_FD, encodeFrame({ ok: true, sandbox: config.sandbox_report || [] }));
  readFrames(REQUEST_FD, serve);
}

process.on('SIGTERM', () => process.exit(143));
main();
