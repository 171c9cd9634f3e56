// gecko_process.js - runs the Firefox Profiler's own processGeckoProfile
// (what profiler.firefox.com does when it opens a Gecko profile) on a file,
// and prints per thread its samples and, per function ("name @ file"), the
// samples it is on the stack in and running in, as the processed profile
// has them.  test_gecko.py runs it where SONDE_FIREFOX_PROFILER names a
// checkout of github.com/firefox-devtools/profiler.
//
//   node gecko_process.js PROFILER_CHECKOUT TYPESCRIPT_MODULE FILE
//
// The Profiler's TypeScript sources are transpiled as they are loaded
// (types stripped, no type checking); the npm packages it imports that
// processing a profile does not call are stubbed.
const Module = require('module');
const path = require('path');
const fs = require('fs');
const os = require('os');
const [SRC_ROOT, TS_MODULE, FILE] = process.argv.slice(2);
const ts = require(TS_MODULE);
const SRC = path.join(SRC_ROOT, 'src');
const stub = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gecko-process-')), 'stub.js');
fs.writeFileSync(stub, 'module.exports = new Proxy(function () {}, { get: (t, k) => ' +
                 '(k === "__esModule" ? true : k === "default" ? t : function () { return {}; }) });');
const missing = new Set();
const origResolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request.startsWith('firefox-profiler/')) request = path.join(SRC, request.slice(17));
  try {
    return origResolve.call(this, request, parent, ...rest);
  } catch (e) {
    for (const ext of ['.ts', '.tsx', '/index.ts']) {
      try { return origResolve.call(this, request + ext, parent, ...rest); } catch (e2) {}
    }
    if (!request.startsWith('.') && !request.startsWith('/')) { missing.add(request); return stub; }
    throw e;
  }
};
for (const ext of ['.ts', '.tsx']) {
  require.extensions[ext] = function (module, filename) {
    const out = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020,
                         jsx: ts.JsxEmit.React, esModuleInterop: true },
      fileName: filename });
    module._compile(out.outputText, filename);
  };
}
const { processGeckoProfile } = require(path.join(SRC, 'profile-logic/process-profile.ts'));
const geckoJson = JSON.parse(fs.readFileSync(FILE, 'utf8'));
const profile = processGeckoProfile(geckoJson);
const shared = profile.shared;
const strings = shared.stringArray;
const { stackTable, frameTable, funcTable } = shared;
const out = { version: profile.meta.version, threads: [], stubbed: [...missing] };
for (const th of profile.threads) {
  const inc = {}, self = {};
  let time = 0, sorted = true;
  for (let i = 0; i < th.samples.length; i++) {
    const dt = th.samples.timeDeltas[i];
    if (i > 0 && dt < 0) sorted = false;
    time += dt;
    let s = th.samples.stack[i];
    const seen = new Set();
    let leaf = true;
    while (s !== null) {
      const f = frameTable.func[stackTable.frame[s]];
      const src = funcTable.source[f];
      const fileIdx = src === null || src === undefined ? null : shared.sources.filename[src];
      const key = strings[funcTable.name[f]] + ' @ ' + (fileIdx === null ? '~' : strings[fileIdx]);
      if (leaf) self[key] = (self[key] || 0) + 1;
      leaf = false;
      seen.add(key);
      s = stackTable.prefixOffset[s] === 0 ? null : s - stackTable.prefixOffset[s];
    }
    for (const k of seen) inc[k] = (inc[k] || 0) + 1;
  }
  out.threads.push({ name: th.name, tid: th.tid, samples: th.samples.length, inc, self,
                     markers: th.markers.length, cpu: !!th.samples.threadCPUDelta, sorted });
}
console.log(JSON.stringify(out));
