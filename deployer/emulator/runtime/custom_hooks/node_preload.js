// Preloaded into a custom runtime's server when it runs on node (NODE_OPTIONS=--require, set by
// custom_supervisor.py): the function's SDK calls are routed to the emulator and its network
// rules apply, as in the Node.js runtime (nodejs_routing.js). The settings come in
// _FC_LOCAL_ROUTING (JSON: endpoint, hosts pattern, internetAccess); without it, nothing.
'use strict';

const path = require('path');

const raw = process.env._FC_LOCAL_ROUTING;
if (raw) {
  const settings = JSON.parse(raw);
  require(path.join(__dirname, '..', 'nodejs_routing.js')).installRouting(
    settings.endpoint, settings.hosts, settings.internetAccess !== false);
}
