// SDK traffic of Node.js function code, routed as the Python worker routes it (routing.py,
// cloud_access.py; docs/runtime.md, "Cloud calls from handlers"):
//
// * `http.request`/`https.request` (and `get`) to an emulated endpoint (FC, CloudFlow, RAM, STS,
//   Log Service: the host pattern the emulator passes in) go to the emulator over plain HTTP,
//   with the method, path, headers (the signed `host` included) and body unchanged: the
//   official Node.js SDKs send through these modules;
// * any other Alibaba Cloud host and the ECS metadata address are refused
//   (CloudEndpointNotEmulated), and with internetAccess false every other non-loopback host
//   (InternetAccessDisabled);
// * a guard on `net.Socket.prototype.connect` applies the same decision to clients that bypass
//   those modules (fetch, raw sockets, TLS): nothing reaches those hosts from the function.
//
// Used by nodejs_runtime.js, and preloaded (`NODE_OPTIONS=--require`) into the servers of custom
// runtimes that run on node (custom_hooks/node_preload.js).
'use strict';

const net = require('net');

const ALIBABA = /(^|\.)(aliyuncs|aliyun|aliyun-inc)\.com$/;
const METADATA = '100.100.100.200';

class UnmockedRequestError extends Error {
  constructor(message) { super(message); this.name = this.constructor.name; this.code = 'ECONNREFUSED'; }
}
class CloudEndpointNotEmulated extends UnmockedRequestError {}
class InternetAccessDisabled extends UnmockedRequestError {}

function isLoopback(host) {
  return host === 'localhost' || /^127\./.test(host) || host === '::1' || host === '[::1]';
}

function serviceOf(host) {
  const labels = host.toLowerCase().split('.').slice(0, -2);
  for (let i = labels.length - 1; i >= 0; i -= 1) {
    const name = labels[i].replace(/-(?:[a-z]{2}-[a-z0-9-]+|internal|vpc)$/, '');
    if (!/^(?:[a-z]{2}-[a-z0-9]+(?:-[a-z0-9]+)*|\d+|vpc|internal|share)$/.test(name)) return name;
  }
  return labels[0] || host;
}

function installRouting(endpoint, pattern, internetAccess) {
  const emulated = new RegExp(`^(?:${pattern})$`);
  const split = endpoint.lastIndexOf(':');
  const local = { hostname: endpoint.slice(0, split), port: Number(endpoint.slice(split + 1)) };
  const refusal = (host, url) => {
    const prefix = url ? `request to ${url} blocked: ` : '';
    if (host === METADATA) {
      return new CloudEndpointNotEmulated(`${prefix}${METADATA} (the ECS instance metadata `
        + 'service) is not available locally; credentials come from ALIBABA_CLOUD_ACCESS_KEY_ID/'
        + '_SECRET/_SECURITY_TOKEN (in a function: the role credentials FC injects)');
    }
    if (ALIBABA.test(host)) {
      return new CloudEndpointNotEmulated(`${prefix}the local emulator does not serve the `
        + `Alibaba Cloud service '${serviceOf(host)}' (${host}); only Function Compute, `
        + 'CloudFlow, RAM, STS and Log Service are emulated, and nothing leaves this machine '
        + 'for other Alibaba Cloud endpoints');
    }
    if (!internetAccess) {
      return new InternetAccessDisabled(
        `the function has internetAccess disabled: ${url || host} cannot be reached`);
    }
    return null;
  };
  const http = require('http');
  const https = require('https');
  const plainRequest = http.request;
  for (const mod of [http, https]) {
    const original = mod.request;
    const secure = mod === https;
    mod.request = function request(...args) {
      const { options, callback } = requestOptions(args, secure);
      const host = String(options.hostname || options.host || 'localhost')
        .replace(/:\d+$/, '').toLowerCase();
      if (isLoopback(host)) return original.apply(this, args);
      if (emulated.test(host)) {
        const headers = { ...(options.headers || {}) };
        if (!Object.keys(headers).some((k) => k.toLowerCase() === 'host')) headers.host = host;
        const routed = { ...options, ...local, host: local.hostname, protocol: 'http:', headers };
        delete routed.agent;
        delete routed.createConnection;
        return plainRequest(routed, callback);
      }
      const refused = refusal(host, `${secure ? 'https' : 'http'}://${host}${options.path || ''}`);
      if (refused) throw refused;
      return original.apply(this, args);
    };
    mod.get = function get(...args) {
      const req = mod.request(...args);
      req.end();
      return req;
    };
  }
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guarded(...args) {
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const host = typeof first === 'object' && first !== null ? first.host
      : (typeof args[1] === 'string' ? args[1] : undefined);
    if (typeof host === 'string' && host && !isLoopback(host.toLowerCase())) {
      const name = host.toLowerCase();
      if (emulated.test(name)) {
        throw new CloudEndpointNotEmulated(`${name} was looked up by an HTTP client the local `
          + 'emulator does not route; clients built on the http and https modules reach the '
          + 'emulator, other clients (fetch) cannot');
      }
      const refused = refusal(name, null);
      if (refused) throw refused;
    }
    return connect.apply(this, args);
  };
}

function requestOptions(args, secure) {
  let options = {};
  let callback;
  for (const arg of args) {
    if (typeof arg === 'function') callback = arg;
    else if (typeof arg === 'string' || arg instanceof URL) {
      const url = new URL(arg);
      options = { ...options, protocol: url.protocol, hostname: url.hostname,
        port: url.port || undefined, path: `${url.pathname}${url.search}` };
    } else if (arg && typeof arg === 'object') options = { ...options, ...arg };
  }
  if (!options.protocol) options.protocol = secure ? 'https:' : 'http:';
  return { options, callback };
}

module.exports = { installRouting };
