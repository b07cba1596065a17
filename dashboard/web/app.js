// tunefleet's web dashboard: the fleet, jobs and job pages, drawn from the
// JSON API of dashboard/http_server.h with the bearer token this tab keeps
// in sessionStorage (entered in the sign-in form; never taken from the
// address, where it would stay in the browser's history), polled every
// POLL_MS while a page is open. In a report
// (`tunefleet report`) the same pages are drawn once from
// window.TUNEFLEET_REPORT, with no requests.
// Note: this file is inlined into <script> elements by the report; it must
// never hold the two characters that close an element ("<" then "/").
(function () {
  'use strict';

  const REPORT = window.TUNEFLEET_REPORT || null;
  const TOKEN_KEY = 'tunefleet.token';
  const POLL_MS = 1500;
  const TRIAL_PAGE = 5000;
  const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c',
                   '#0891b2', '#ca8a04', '#db2777', '#4b5563', '#65a30d',
                   '#7c3aed', '#0d9488'];
  const ERROR_COLORS = {
    OK: '#2563eb', COMPILE_ERROR: '#dc2626', WRONG_ANSWER: '#ea580c',
    RUNTIME_ERROR: '#9333ea', TIMEOUT: '#ca8a04', DEVICE_LOST: '#4b5563',
    INVALID_CONFIG: '#db2777', CANCELLED: '#94a3b8',
  };
  const FINAL = ['JOB_STATE_DONE', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED'];

  let whoami = null;
  let pollTimer = null;
  let charts = [];

  // ---- small helpers ----

  // An element: el('td', {class: 'num'}, 'text', child, ...).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function num(v) { return v === undefined || v === null ? 0 : Number(v); }
  function stateName(s) {
    return String(s || '').replace('JOB_STATE_', '').toLowerCase();
  }
  function stateTag(s) {
    const n = stateName(s);
    return el('span', {class: 'state ' + n}, n);
  }
  function isFinal(job) { return FINAL.includes(job.state); }
  function fmtTime(ns) {
    ns = num(ns);
    if (!(ns > 0)) return '-';
    if (ns >= 1e9) return (ns / 1e9).toPrecision(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toPrecision(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toPrecision(3) + ' \u00b5s';
    return ns.toPrecision(3) + ' ns';
  }
  function fmtGflops(g) {
    g = num(g);
    return g > 0 ? g.toPrecision(4) + ' GFLOP/s' : '-';
  }
  function fmtAge(ms) {
    ms = num(ms);
    if (!(ms > 0)) return '-';
    const s = Math.max(0, (Date.now() - ms) / 1000);
    if (s < 120) return s.toFixed(1) + ' s ago';
    if (s < 7200) return (s / 60).toFixed(0) + ' min ago';
    return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
  }
  function configText(config) {
    return Object.entries(config || {}).map(([k, v]) => k + '=' + v).join(',');
  }
  // A trial row's config_text "MWG=64,NWG=64" as {MWG: 64, NWG: 64}, in order.
  function parseConfig(text) {
    const out = {};
    for (const kv of String(text || '').split(',')) {
      const i = kv.indexOf('=');
      if (i > 0) out[kv.slice(0, i)] = Number(kv.slice(i + 1));
    }
    return out;
  }
  function withConfigs(trials) {
    for (const t of trials) if (t.config === undefined) t.config = parseConfig(t.config_text);
    return trials;
  }
  function jobTitle(job) {
    if (job.model && job.model.model_name) return 'model ' + job.model.model_name;
    return job.workload_key || '';
  }
  function card(label, value, attrs) {
    return el('div', Object.assign({class: 'card'}, attrs || {}),
              el('div', {class: 'label'}, label),
              el('div', {class: 'value'}, value));
  }
  function errorsText(errors) {
    const bad = Object.entries(errors || {}).filter(([k]) => k !== 'OK');
    if (!bad.length) return '';
    return bad.map(([k, v]) => k + ' ' + v).join(', ');
  }
  // Replaces `parent`'s children with the given ones, skipping null.
  function put(parent, ...children) {
    parent.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  }
  function stopPage() {
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = null;
    for (const c of charts) c.destroy();
    charts = [];
  }
  // Calls `step` now and every POLL_MS after it settles, while `alive()`.
  function poll(step, alive) {
    const run = async () => {
      try { await step(); } catch (e) { showError(e); }
      if (alive()) pollTimer = setTimeout(run, POLL_MS);
    };
    run();
  }

  // ---- the API ----

  function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
  class Unauthorized extends Error {}
  async function api(path, method) {
    const headers = {};
    if (token()) headers.Authorization = 'Bearer ' + token();
    const init = {method: method || 'GET', headers: headers, cache: 'no-store'};
    if (init.method !== 'GET') {
      // The server takes a state change only as JSON from this page's own
      // origin (no other site's form can send it).
      headers['Content-Type'] = 'application/json';
      init.body = '{}';
    }
    const res = await fetch(path, init);
    let body = {};
    try { body = await res.json(); } catch (e) { body = {}; }
    if (res.status === 401) throw new Unauthorized(body.error || 'unauthorized');
    if (!res.ok) throw new Error(body.error || ('HTTP ' + res.status));
    return body;
  }
  // Every trial of a job with an id above `after`, in pages.
  async function trialsAfter(jobId, after) {
    let out = [];
    while (true) {
      const page = await api('api/jobs/' + jobId + '/trials?after=' + after +
                             '&limit=' + TRIAL_PAGE);
      out = out.concat(withConfigs(page.trials));
      if (page.trials.length < TRIAL_PAGE) return out;
      after = page.trials[page.trials.length - 1].trial_id;
    }
  }

  // ---- frame: header, navigation, login ----

  function frame(active) {
    const app = document.getElementById('app');
    app.replaceChildren();
    const nav = el('nav', {});
    if (!REPORT) {
      nav.append(el('a', {href: '#/fleet', class: active === 'fleet' && 'active'}, 'Fleet'),
                 el('a', {href: '#/jobs', class: active === 'jobs' && 'active'}, 'Jobs'));
    }
    const title = REPORT ? REPORT.title : (whoami ? whoami.title : 'tunefleet');
    const who = REPORT
        ? 'report generated ' + new Date(num(REPORT.generated_ms)).toISOString()
        : (whoami ? 'role: ' + whoami.role : '');
    app.append(el('header', {}, el('h1', {}, title), nav,
                  el('span', {class: 'who'}, who)));
    const main = el('main', {});
    app.append(main);
    return main;
  }
  function showError(e) {
    if (e instanceof Unauthorized) { login(e.message); return; }
    const main = document.querySelector('main') || frame('');
    let box = document.getElementById('error');
    if (!box) {
      box = el('p', {id: 'error', class: 'bad'});
      main.prepend(box);
    }
    box.textContent = 'Error: ' + e.message;
  }
  function login(message) {
    stopPage();
    whoami = null;
    const main = frame('');
    const input = el('input', {type: 'password', id: 'token', autocomplete: 'off',
                               placeholder: 'token of role reader or tuner'});
    const form = el('form', {class: 'login'},
        el('h2', {}, 'Sign in'),
        el('p', {class: 'muted'},
           'Paste a token of role reader or tuner (tunefleet token add). ' +
           'It stays in this browser tab only (sessionStorage).'),
        message && token() ? el('p', {class: 'bad'}, 'Token refused: ' + message) : null,
        input, el('button', {type: 'submit'}, 'Sign in'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      start();
    });
    main.append(form);
  }

  // ---- fleet page ----

  // The page of route #/`name`: a heading `title` over a <div id=`name`>
  // that `render(div, answer)` fills with the answer of GET `path`, again
  // every POLL_MS while the route is shown.
  function polledPage(name, title, path, render) {
    const main = frame(name);
    const body = el('div', {id: name});
    main.append(el('h2', {}, title), body);
    poll(async () => {
      render(body, await api(path));
    }, () => location.hash.startsWith('#/' + name));
  }

  function fleetPage() {
    polledPage('fleet', 'Fleet', 'api/fleet', renderFleet);
  }
  function renderFleet(body, fleet) {
    const devices = el('table', {id: 'devices'},
        el('tr', {}, el('th', {}, 'device key'), el('th', {}, 'device'),
           el('th', {}, 'vendor / driver'), el('th', {class: 'num'}, 'compute units'),
           el('th', {class: 'num'}, 'agents connected')));
    for (const d of fleet.devices) {
      const info = d.device || {};
      devices.append(el('tr', {},
          el('td', {}, d.device_key), el('td', {}, info.device_name || ''),
          el('td', {}, [info.vendor, info.driver_version].filter(Boolean).join(' / ')),
          el('td', {class: 'num'}, info.compute_units || ''),
          el('td', {class: 'num'}, fleet.live ? d.connected_agents : '-')));
    }
    // A key's driver revisions, where it has more than one, with what
    // the re-validation found on each (docs/DRIVER_DRIFT.md).
    const revisions = el('table', {id: 'driver-revisions'},
        el('tr', {}, el('th', {}, 'device key'), el('th', {class: 'num'}, 'revision'),
           el('th', {}, 'driver'), el('th', {}, 'first seen'),
           el('th', {class: 'num'}, 'same'), el('th', {class: 'num'}, 'slower'),
           el('th', {class: 'num'}, 'wrong'), el('th', {class: 'num'}, 'failed'),
           el('th', {class: 'num'}, 'pending'), el('th', {}, 're-validation jobs')));
    let drifted = 0;
    for (const d of fleet.devices) {
      const revs = d.driver_revisions || [];
      if (revs.length < 2) continue;
      ++drifted;
      for (const r of revs) {
        const jobs = (r.revalidation_job_ids || []).map((id) => REPORT
            ? String(id) : el('a', {href: '#/job/' + id}, String(id)));
        revisions.append(el('tr', {},
            el('td', {}, d.device_key), el('td', {class: 'num'}, r.revision),
            el('td', {}, r.driver_version), el('td', {}, fmtAge(num(r.first_seen_unix_ms))),
            el('td', {class: 'num'}, r.revalidated_same || 0),
            el('td', {class: 'num' + (num(r.revalidated_slower) ? ' bad' : '')},
               r.revalidated_slower || 0),
            el('td', {class: 'num' + (num(r.revalidated_wrong) ? ' bad' : '')},
               r.revalidated_wrong || 0),
            el('td', {class: 'num' + (num(r.revalidated_failed) ? ' bad' : '')},
               r.revalidated_failed || 0),
            el('td', {class: 'num'}, r.revalidation_pending || 0),
            el('td', {}, jobs.flatMap((a, i) => i ? [', ', a] : [a]))));
      }
    }
    const agents = el('table', {id: 'agents'},
        el('tr', {}, el('th', {}, 'agent'), el('th', {}, 'device key'),
           el('th', {}, 'connected'),
           el('th', {}, fleet.live ? 'last heartbeat' : 'last trial'),
           el('th', {class: 'num'}, 'in flight'), el('th', {class: 'num'}, 'measured'),
           el('th', {class: 'num'}, 'errors'), el('th', {}, 'errors by code')));
    for (const a of fleet.agents) {
      const errs = Object.values(a.errors || {}).reduce((x, y) => x + num(y), 0);
      agents.append(el('tr', {},
          el('td', {}, a.name), el('td', {}, a.device_key),
          el('td', {class: a.connected ? 'ok' : 'muted'},
             fleet.live ? (a.connected ? 'yes' : 'no') : '-'),
          el('td', {}, fmtAge(a.last_seen_ms)),
          el('td', {class: 'num'}, a.in_flight),
          el('td', {class: 'num'}, a.measured),
          el('td', {class: 'num' + (errs ? ' bad' : '')}, errs),
          el('td', {class: 'muted'}, errorsText(a.errors))));
    }
    put(body,
        fleet.live ? null : el('p', {class: 'muted'},
            'From a database file: no live agents; last trial times as stored.'),
        el('h3', {}, 'Device keys'), devices,
        drifted ? el('h3', {}, 'Driver revisions') : null,
        drifted ? revisions : null,
        el('h3', {}, 'Agents'), agents);
  }

  // ---- jobs page ----

  function jobsPage() {
    polledPage('jobs', 'Jobs', 'api/jobs', (body, jobs) => {
      body.replaceChildren(jobsTable(jobs.jobs, (id) => '#/job/' + id));
    });
  }
  function jobsTable(jobs, link) {
    const table = el('table', {class: 'jobs'},
        el('tr', {}, el('th', {}, 'job'), el('th', {}, 'kind'),
           el('th', {}, 'workload / model'), el('th', {}, 'template'),
           el('th', {}, 'device key'), el('th', {}, 'strategy'), el('th', {}, 'state'),
           el('th', {}, 'progress'), el('th', {class: 'num'}, 'best'),
           el('th', {class: 'num'}, 'requeues'), el('th', {}, 'errors'),
           whoami && whoami.can_cancel ? el('th', {}, '') : null));
    for (const j of jobs) {
      const done = num(j.trials_done), total = num(j.trials_total);
      const pct = total > 0 ? Math.min(100, 100 * done / total) : 0;
      // A model job's best is its measured latency, else its estimate.
      const measured = j.model && j.model.measured && num(j.model.measured.median_ns) > 0
          ? j.model.measured : null;
      const best = measured
          ? fmtTime(measured.median_ns) + ' (est ' + fmtTime(measured.estimate_ns) +
            (num(measured.device_buffers_median_ns) > 0
                ? ', on device ' + fmtTime(measured.device_buffers_median_ns) : '') + ')'
          : j.model && num(j.model.latency_ns) > 0
          ? 'est ' + fmtTime(j.model.latency_ns)
          : (j.best && num(j.best.gflops) > 0 ? fmtGflops(j.best.gflops) : '-');
      let cancel = null;
      if (whoami && whoami.can_cancel) {
        cancel = el('td', {}, isFinal(j) ? '' : el('button', {
          class: 'cancel', onclick: async () => {
            if (!confirm('Cancel job ' + j.job_id + '?')) return;
            try { await api('api/jobs/' + j.job_id + '/cancel', 'POST'); }
            catch (e) { showError(e); }
          }}, 'cancel'));
      }
      table.append(el('tr', {'data-job-id': j.job_id},
          el('td', {}, el('a', {href: link(j.job_id)}, j.job_id)),
          el('td', {}, j.model ? 'model' : 'single'),
          el('td', {class: 'config'}, jobTitle(j)),
          el('td', {}, j.template_name || ''), el('td', {}, j.device_key),
          el('td', {}, String(j.strategy || '').replace('STRATEGY_', '').toLowerCase()),
          el('td', {}, stateTag(j.state)),
          el('td', {}, el('span', {class: 'bar'}, el('span', {style: 'width:' + pct + '%'})),
             ' ' + done + ' / ' + total),
          el('td', {class: 'num'}, best),
          el('td', {class: 'num'}, num(j.trials_requeued)),
          el('td', {class: 'bad'}, errorsText(j.errors)),
          cancel));
    }
    return table;
  }

  // ---- one job ----

  // Marks a chart's canvas once Chart.js has drawn it (for tests and
  // screenshots): data-rendered="true" and data-points=N.
  const renderedMark = {
    id: 'tunefleetRendered',
    afterRender(chart) {
      let n = 0;
      for (const d of chart.data.datasets) if (!d.tunefleetLine) n += d.data.length;
      chart.canvas.dataset.rendered = 'true';
      chart.canvas.dataset.points = String(n);
    },
  };

  // A job's section: cards, the trials chart with its controls, the error
  // breakdown, a model job's latency and tasks, the best configs. Returns
  // update(job, newTrials) to feed it live.
  function jobSection(job, trials) {
    const id = job.job_id;
    const section = el('section', {class: 'job', id: 'job-' + id, 'data-job-id': id});
    const cards = el('div', {class: 'cards'});
    const heading = el('h2', {});
    const notes = el('div', {});
    const xSel = el('select', {class: 'x-axis'});
    const ySel = el('select', {class: 'y-axis'},
        el('option', {value: 'gflops'}, 'GFLOP/s'),
        el('option', {value: 'time'}, 'time (\u00b5s)'));
    const cSel = el('select', {class: 'colour'});
    const trialsCanvas = el('canvas', {class: 'trials-chart', 'data-job-id': id});
    const errorsCanvas = el('canvas', {class: 'errors-chart', 'data-job-id': id});
    const latencyCanvas = el('canvas', {class: 'latency-chart', 'data-job-id': id});
    const tasks = el('div', {class: 'tasks'});
    const layers = el('div', {class: 'layers'});
    // A model job's tasks are of different ops: its trials are plotted as
    // each task's speedup over its workload's naive reference kernel.
    if (job.model) {
      ySel.prepend(el('option', {value: 'speedup'}, 'speedup over naive'));
      ySel.value = 'speedup';
    }
    function naiveOf(jobId) {
      const tp = ((job.model || {}).task_progress || [])
          .find((t) => String((t.job || {}).job_id) === String(jobId));
      if (!tp) return 0;
      const key = tp.job.workload_key;
      let ref = 0;
      for (const t of job.model.task_progress || []) {
        if ((t.job || {}).workload_key === key && num(t.job.reference_time_ns) > 0) {
          ref = num(t.job.reference_time_ns);
        }
      }
      return ref;
    }
    const bestTable = el('div', {class: 'best'});
    put(section, heading, notes, cards,
        el('div', {class: 'grid'},
           el('div', {class: 'panel'},
              el('div', {class: 'controls'},
                 el('label', {}, 'x', xSel), el('label', {}, 'y', ySel),
                 el('label', {}, 'colour', cSel)),
              el('div', {class: 'chart-box'}, trialsCanvas)),
           el('div', {class: 'panel'}, el('h3', {}, 'Errors'),
              el('div', {class: 'chart-box small'}, errorsCanvas))),
        job.model ? el('div', {class: 'panel'}, el('h3', {}, 'Model latency'),
                       el('div', {class: 'chart-box small'}, latencyCanvas)) : null,
        tasks, layers, el('h3', {}, 'Best configs'), bestTable);

    let knobs = [];
    function refreshSelectors() {
      const seen = new Set(knobs);
      for (const t of trials) for (const k of Object.keys(t.config)) seen.add(k);
      if (seen.size === knobs.length && xSel.options.length) return;
      knobs = Array.from(seen);
      const keepX = xSel.value || 'trial', keepC = cSel.value || 'error';
      xSel.replaceChildren(el('option', {value: 'trial'}, 'trial'),
          ...knobs.map((k) => el('option', {value: 'knob:' + k}, k)));
      put(cSel, el('option', {value: 'error'}, 'error code'),
          job.model ? el('option', {value: 'task'}, 'task (job)') : null,
          ...knobs.map((k) => el('option', {value: 'knob:' + k}, k)));
      xSel.value = keepX; cSel.value = keepC;
    }

    function yOf(t) {
      if (ySel.value === 'speedup') {
        const ref = naiveOf(t.job_id);
        return ref > 0 && num(t.time_ns) > 0 ? ref / num(t.time_ns) : 0;
      }
      return ySel.value === 'time' ? num(t.time_ns) / 1e3 : num(t.gflops);
    }
    function yTitle() {
      return ySel.value === 'time' ? 'time (\u00b5s)'
          : ySel.value === 'speedup' ? 'speedup over naive (x)' : 'GFLOP/s';
    }
    function groupOf(t) {
      const c = cSel.value;
      if (c === 'error') return t.error;
      if (c === 'task') return 'job ' + t.job_id;
      return c.slice(5) + '=' + t.config[c.slice(5)];
    }
    function trialDatasets() {
      const x = xSel.value;
      const groups = new Map();
      trials.forEach((t, i) => {
        const g = groupOf(t);
        if (!groups.has(g)) groups.set(g, []);
        const xv = x === 'trial' ? i + 1 : num(t.config[x.slice(5)]);
        groups.get(g).push({x: xv, y: yOf(t), t: t, i: i + 1});
      });
      const keys = Array.from(groups.keys()).sort();
      const sets = keys.map((k, i) => {
        const color = cSel.value === 'error'
            ? (ERROR_COLORS[k] || PALETTE[i % PALETTE.length])
            : PALETTE[i % PALETTE.length];
        return {label: k, data: groups.get(k), backgroundColor: color,
                borderColor: color, pointRadius: 3};
      });
      if (x === 'trial') {
        // Best so far: the highest GFLOP/s (or lowest time) after each trial.
        const best = [];
        let b = null;
        trials.forEach((t, i) => {
          if (t.error === 'OK') {
            const y = yOf(t);
            if (b === null || (ySel.value === 'time' ? y < b : y > b)) b = y;
          }
          if (b !== null) best.push({x: i + 1, y: b});
        });
        sets.push({label: 'best so far', data: best, type: 'line', stepped: true,
                   showLine: true, pointRadius: 0, borderWidth: 2,
                   borderColor: '#111827', backgroundColor: '#111827',
                   tunefleetLine: true});
      }
      return sets;
    }

    const trialsChart = new Chart(trialsCanvas, {
      type: 'scatter',
      data: {datasets: []},
      plugins: [renderedMark],
      options: {
        animation: false, maintainAspectRatio: false,
        scales: {x: {title: {display: true, text: 'trial'}},
                 y: {title: {display: true, text: 'GFLOP/s'}, beginAtZero: true}},
        plugins: {
          legend: {position: 'bottom'},
          tooltip: {callbacks: {label(ctx) {
            const p = ctx.raw;
            if (!p.t) return ctx.dataset.label + ': ' + p.y;
            const t = p.t;
            return ['trial ' + t.trial_id + ' (#' + p.i + ', job ' + t.job_id + ')',
                    t.error + (t.error_message ? ': ' + t.error_message.slice(0, 80) : ''),
                    fmtGflops(t.gflops) + ', ' + fmtTime(t.time_ns),
                    configText(t.config), 'agent ' + t.agent_name];
          }}},
        },
      },
    });
    charts.push(trialsChart);
    const errorsChart = new Chart(errorsCanvas, {
      type: 'bar', data: {labels: [], datasets: [{label: 'trials', data: [],
                                                  backgroundColor: []}]},
      plugins: [renderedMark],
      options: {animation: false, maintainAspectRatio: false, indexAxis: 'y',
                plugins: {legend: {display: false}}},
    });
    charts.push(errorsChart);
    let latencyChart = null;
    if (job.model) {
      latencyChart = new Chart(latencyCanvas, {
        type: 'line', data: {datasets: [
          {label: 'estimated latency (ms)', data: [], borderColor: '#2563eb', stepped: true},
          {label: 'measured median (ms), p10-p90', data: [], borderColor: '#dc2626',
           backgroundColor: '#dc2626', showLine: false, pointRadius: 5},
          {label: 'on the device, median (ms)', data: [], borderColor: '#16a34a',
           backgroundColor: '#16a34a', showLine: false, pointRadius: 5,
           pointStyle: 'triangle'}]},
        plugins: [renderedMark],
        options: {animation: false, maintainAspectRatio: false, parsing: false,
                  scales: {x: {type: 'linear', title: {display: true, text: 'trials done'}},
                           y: {title: {display: true, text: 'ms'}}}},
      });
      charts.push(latencyChart);
    }

    function redrawTrials() {
      refreshSelectors();
      trialsChart.data.datasets = trialDatasets();
      trialsChart.options.scales.x.title.text =
          xSel.value === 'trial' ? 'trial' : xSel.value.slice(5);
      trialsChart.options.scales.y.title.text = yTitle();
      trialsChart.update('none');
      const ok = trials.filter((t) => t.error === 'OK')
          .sort((a, b) => num(b.gflops) - num(a.gflops)).slice(0, 10);
      const table = el('table', {},
          el('tr', {}, el('th', {}, 'trial'), el('th', {class: 'num'}, 'GFLOP/s'),
             el('th', {class: 'num'}, 'time'), el('th', {}, 'config'),
             el('th', {}, 'agent')));
      for (const t of ok) {
        table.append(el('tr', {}, el('td', {}, t.trial_id),
            el('td', {class: 'num'}, num(t.gflops).toPrecision(4)),
            el('td', {class: 'num'}, fmtTime(t.time_ns)),
            el('td', {class: 'config'}, configText(t.config)), el('td', {}, t.agent_name)));
      }
      bestTable.replaceChildren(ok.length ? table : el('p', {class: 'muted'}, 'none yet'));
    }
    xSel.addEventListener('change', redrawTrials);
    ySel.addEventListener('change', redrawTrials);
    cSel.addEventListener('change', redrawTrials);

    function update(newJob, newTrials) {
      job = newJob;
      trials = trials.concat(newTrials);
      heading.replaceChildren('Job ', el('span', {class: 'job-id'}, id), ' ',
                              stateTag(job.state), ' ',
                              el('span', {class: 'muted config'}, jobTitle(job)));
      const best = job.best && num(job.best.gflops) > 0 ? job.best : null;
      const requeues = num(job.trials_requeued);
      const model = job.model || null;
      const measured = model && model.measured ? model.measured : null;
      const measuredOk = measured && !measured.missing_reason && num(measured.median_ns) > 0;
      // The runs with inputs and outputs in device buffers (0: not measured).
      const onDevice = measuredOk && num(measured.device_buffers_median_ns) > 0;
      cards.replaceChildren(
          card('trials', el('span', {class: 'trial-count', 'data-count': num(job.trials_done)},
                            num(job.trials_done) + ' / ' + num(job.trials_total))),
          ...(model ? [
            card('measured latency', el('span', {class: 'measured-latency'},
                measuredOk ? fmtTime(measured.median_ns) + ' (p10 ' + fmtTime(measured.p10_ns) +
                             ', p90 ' + fmtTime(measured.p90_ns) + ')'
                           : measured ? 'missing' : '-')),
            ...(onDevice ? [card('on the device (device buffers)',
                el('span', {class: 'device-buffers-latency'},
                   fmtTime(measured.device_buffers_median_ns) + ' (p10 ' +
                   fmtTime(measured.device_buffers_p10_ns) + ', p90 ' +
                   fmtTime(measured.device_buffers_p90_ns) + ')'))] : []),
            card('estimated latency', el('span', {class: 'estimated-latency'},
                fmtTime(model.latency_ns))),
            card('naive latency', el('span', {class: 'naive-latency'},
                fmtTime(model.naive_latency_ns))),
          ] : [
            card('best', best ? fmtGflops(best.gflops) : '-'),
            card('best time', best ? fmtTime(best.time_ns) : '-'),
            card('naive reference', fmtTime(job.reference_time_ns)),
          ]),
          card('in flight', (job.in_flight_trial_ids || []).length),
          card('requeues', requeues),
          card('device key', job.device_key || '-'),
          card('template', job.template_name || (job.model ? 'per task' : '-')),
          card('search space', num(job.space_size) || '-'));
      put(notes, 
          best ? el('p', {class: 'config'}, 'best config: ' +
                    configText(Object.fromEntries(((best.config || {}).knobs || [])
                        .map((k) => [k.name, num(k.value)])))) : null,
          job.message ? el('p', {class: 'muted'}, job.message) : null,
          measured && measured.missing_reason
              ? el('p', {class: 'bad measured-missing'},
                   'measured latency missing: ' + measured.missing_reason) : null,
          job.waiting_reason ? el('p', {class: 'bad'}, job.waiting_reason) : null);
      redrawTrials();
      const errs = Object.entries(job.errors || {}).sort();
      errorsChart.data.labels = errs.map(([k]) => k);
      errorsChart.data.datasets[0].data = errs.map(([, v]) => num(v));
      errorsChart.data.datasets[0].backgroundColor =
          errs.map(([k], i) => ERROR_COLORS[k] || PALETTE[i % PALETTE.length]);
      errorsChart.update('none');
      if (latencyChart) {
        const history = job.model.latency_history || [];
        latencyChart.data.datasets[0].data = history
            .map((p) => ({x: num(p.trials_done), y: num(p.latency_ns) / 1e6}));
        // The measured run (median, p10 and p90) after the last trial.
        const m = job.model.measured;
        const atX = history.length ? num(history[history.length - 1].trials_done)
                                   : num(job.trials_done);
        latencyChart.data.datasets[1].data = m && num(m.median_ns) > 0
            ? [{x: atX, y: num(m.p10_ns) / 1e6}, {x: atX, y: num(m.median_ns) / 1e6},
               {x: atX, y: num(m.p90_ns) / 1e6}] : [];
        // The median of the runs with inputs and outputs in device buffers.
        latencyChart.data.datasets[2].data = m && num(m.median_ns) > 0 &&
            num(m.device_buffers_median_ns) > 0
            ? [{x: atX, y: num(m.device_buffers_median_ns) / 1e6}] : [];
        latencyChart.update('none');
        const table = el('table', {},
            el('tr', {}, el('th', {}, 'task'), el('th', {}, 'job'),
               el('th', {}, 'workload'), el('th', {}, 'template'),
               el('th', {class: 'num'}, 'weight'), el('th', {class: 'num'}, 'granted'),
               el('th', {class: 'num'}, 'done'), el('th', {class: 'num'}, 'best'),
               el('th', {class: 'num'}, 'speedup over naive'),
               el('th', {}, 'stopped')));
        for (const t of job.model.task_progress || []) {
          const tj = t.job || {};
          table.append(el('tr', {}, el('td', {}, t.task_index),
              el('td', {}, REPORT ? tj.job_id : el('a', {href: '#/job/' + tj.job_id}, tj.job_id)),
              el('td', {class: 'config'}, tj.workload_key), el('td', {}, tj.template_name),
              el('td', {class: 'num'}, t.weight), el('td', {class: 'num'}, t.trials_granted),
              el('td', {class: 'num'}, num(tj.trials_done)),
              el('td', {class: 'num'}, tj.best ? fmtTime(tj.best.time_ns) : '-'),
              el('td', {class: 'num'}, tj.best && naiveOf(tj.job_id) > 0
                  ? (naiveOf(tj.job_id) / num(tj.best.time_ns)).toFixed(2) + 'x' : '-'),
              el('td', {class: 'muted'}, t.stopped_reason || '')));
        }
        tasks.replaceChildren(el('h3', {},
            'Tasks (estimated latency ' + fmtTime(job.model.latency_ns) + ', naive ' +
            fmtTime(job.model.naive_latency_ns) + ')'), table);
        layers.replaceChildren(...layerTable(job));
      }
    }
    const initial = trials;
    trials = [];
    return {section: section, update: update,
            start: () => update(job, initial),
            lastId: () => (trials.length ? trials[trials.length - 1].trial_id : 0)};
  }

  // A model job's measured run, layer by layer: share of the time, its
  // workload's trials and speedup over naive, the chosen entry.
  function layerTable(job) {
    const m = job.model.measured;
    if (!m || !(m.layers || []).length) return [];
    const byWorkload = new Map();
    for (const t of job.model.task_progress || []) {
      const tj = t.job || {};
      const f = byWorkload.get(tj.workload_key) || {trials: 0, best: 0, naive: 0};
      f.trials += num(tj.trials_done);
      const b = tj.best ? num(tj.best.time_ns) : 0;
      if (b > 0 && (f.best === 0 || b < f.best)) f.best = b;
      if (num(tj.reference_time_ns) > 0) f.naive = num(tj.reference_time_ns);
      byWorkload.set(tj.workload_key, f);
    }
    const total = m.layers.reduce((a, l) => a + Math.max(0, num(l.measured_ns)), 0);
    const table = el('table', {class: 'layer-table'},
        el('tr', {}, el('th', {}, 'layer'), el('th', {}, 'nodes'), el('th', {}, 'entry'),
           el('th', {class: 'num'}, 'measured'), el('th', {class: 'num'}, 'share'),
           el('th', {class: 'num'}, 'estimate'), el('th', {class: 'num'}, 'trials'),
           el('th', {class: 'num'}, 'speedup over naive'), el('th', {}, 'workload')));
    m.layers.forEach((l, i) => {
      const f = byWorkload.get(l.workload);
      table.append(el('tr', {}, el('td', {}, i), el('td', {class: 'config'}, l.label),
          el('td', {}, l.entry), el('td', {class: 'num'}, fmtTime(l.measured_ns)),
          el('td', {class: 'num'}, total > 0
              ? (100 * Math.max(0, num(l.measured_ns)) / total).toFixed(1) + '%' : '-'),
          el('td', {class: 'num'}, num(l.estimate_ns) >= 0 ? fmtTime(l.estimate_ns) : '-'),
          el('td', {class: 'num'}, f ? f.trials : '-'),
          el('td', {class: 'num'}, f && f.best > 0 && f.naive > 0
              ? (f.naive / f.best).toFixed(2) + 'x' : '-'),
          el('td', {class: 'config'}, l.workload)));
    });
    return [el('h3', {}, 'Layers (measured end to end: median ' + fmtTime(m.median_ns) +
                         ', p10 ' + fmtTime(m.p10_ns) + ', p90 ' + fmtTime(m.p90_ns) +
                         (num(m.device_buffers_median_ns) > 0
                             ? '; on the device ' + fmtTime(m.device_buffers_median_ns) : '') +
                         '; estimated ' + fmtTime(m.estimate_ns) + ', ' + num(m.runs) +
                         ' runs on ' + (m.agent_name || 'an agent') + ')'), table];
  }

  function jobPage(id) {
    const main = frame('jobs');
    let view = null;
    let ended = false;
    poll(async () => {
      const job = (await api('api/jobs/' + id)).job;
      const fresh = await trialsAfter(id, view ? view.lastId() : 0);
      if (!view) {
        view = jobSection(job, []);
        main.append(view.section);
        view.start();
      }
      view.update(job, fresh);
      // One more round after the job ends picks up the last results.
      if (isFinal(job)) ended = ended === false ? 1 : true;
    }, () => ended !== true && location.hash === '#/job/' + id);
  }

  // ---- report ----

  function reportPage() {
    const main = frame('');
    main.append(el('h2', {}, 'Jobs'),
                jobsTable(REPORT.jobs, (id) => '#job-' + id));
    for (const d of REPORT.details) {
      const view = jobSection(d.job, withConfigs(d.trials));
      main.append(view.section);
      view.start();
    }
    document.body.dataset.ready = 'true';
  }

  // ---- routing ----

  function route() {
    stopPage();
    const hash = location.hash || '#/jobs';
    const m = /^#\/job\/(\d+)$/.exec(hash);
    if (m) jobPage(m[1]);
    else if (hash.startsWith('#/fleet')) fleetPage();
    else jobsPage();
  }

  async function start() {
    // Anything after '?' in the address (an old link's ?token=...) is
    // dropped unread: a token is entered in the sign-in form only.
    const q = location.hash.indexOf('?');
    if (q >= 0) history.replaceState(null, '', location.pathname + location.hash.slice(0, q));
    if (!location.hash) history.replaceState(null, '', location.pathname + '#/jobs');
    try {
      whoami = await api('api/whoami');
    } catch (e) {
      if (e instanceof Unauthorized) { login(e.message); return; }
      showError(e);
      return;
    }
    document.title = whoami.title;
    route();
  }

  if (REPORT) {
    reportPage();
  } else {
    window.addEventListener('hashchange', () => { if (whoami) route(); });
    start();
  }
})();
