/* The HTML report's script (report/html.py inlines it; its SHA-256 is in the page's
   Content-Security-Policy). It adds filters, search by eval id, paging and deep links, and
   shows the evidence of cases the page packs as gzip-compressed JSON (unpacked with the
   browser's DecompressionStream when a case is opened). Text from data is only ever set as
   text nodes: nothing is parsed as HTML. The evidence it builds is the same as
   templates/_case.html.j2 makes for the cases the page holds as HTML. */
(function () {
  'use strict';
  var section = document.getElementById('cases');
  var list = document.getElementById('case-list');
  if (!section || !list) { return; }
  var pageSize = parseInt(section.getAttribute('data-page-size'), 10) || 100;
  var labels = { expected: 'Expected', base: 'Baseline', head: 'Head' };
  var items = [];
  var byId = {};
  Array.prototype.forEach.call(list.children, function (el) {
    if (el.tagName !== 'DETAILS') { return; }
    var item = { el: el, flags: (el.getAttribute('data-flags') || '').split(' '),
      id: el.getAttribute('data-id') || '' };
    items.push(item);
    byId[el.id] = item;
  });
  var state = { filter: 'all', query: '', page: 0, matches: items };

  // --- building elements (text only) ---------------------------------------------------
  function add(parent, kids) {
    (Array.isArray(kids) ? kids : [kids]).forEach(function (kid) {
      if (kid === null || kid === undefined || kid === false || kid === '') { return; }
      parent.appendChild(typeof kid === 'string' ? document.createTextNode(kid) : kid);
    });
    return parent;
  }
  function h(tag, cls, kids) {
    var el = document.createElement(tag);
    if (cls) { el.className = cls; }
    return add(el, kids === undefined ? [] : kids);
  }
  function each(values, fn) { return (values || []).map(fn); }
  function status(value) {
    return value ? h('span', 'st st-' + value, value.replace(/_/g, ' '))
      : h('span', 'st st-none', '\u2014');
  }
  function calls(list) {
    if (!list || !list.length) { return h('p', 'none', 'no tool calls'); }
    return h('ul', 'calls', each(list, function (call) {
      var args = h('span', 'args');
      (call.args || []).forEach(function (a, i) {
        add(args, h('span', 'arg' + (a.mark ? ' ' + a.mark : ''), [
          h('span', 'k', a.key), '=',
          h('span', 'v', a.value !== undefined ? a.value : '\u2205'),
          a.expected !== undefined ? h('span', 'exp', 'expected ' + a.expected) : null]));
        if (i < call.args.length - 1) { add(args, ', '); }
      });
      return h('li', 'call' + (call.mark ? ' ' + call.mark : ''), [
        h('code', 'fn', call.name), '(', args, ')',
        call.mark ? h('span', 'mark', call.mark === 'missing' ? 'not called' : 'not expected')
          : null]);
    }));
  }
  function named(list, label, cls) {
    if (!list || !list.length) { return null; }
    return h('div', cls, [h('span', 'lbl', label), h('ul', null, each(list, function (item) {
      return h('li', null, [h('code', null, item.name), h('pre', 'text', item.text)]);
    }))]);
  }
  function rubrics(list) {
    if (!list || !list.length) { return null; }
    return h('ul', 'rubrics', each(list, function (r) {
      return h('li', 'rb ok-' + r.ok, [
        h('span', 'vd', r.verdict), h('code', null, r.rubric_id),
        r.text ? h('span', 'rtext', r.text) : null, h('span', 'rmetric', r.metric),
        r.rationale ? h('div', 'rationale', 'judge: ' + r.rationale) : null,
        r.reason ? h('div', 'reason', r.reason) : null]);
    }));
  }
  function turnColumn(v) {
    if (!v) { return [h('p', 'absent', '\u2014')]; }
    return [calls(v.calls), named(v.responses, 'Tool responses', 'responses'),
      named(v.steps, 'Intermediate responses', 'steps'),
      h('div', 'final' + (v.final_mark ? ' ' + v.final_mark : ''), [
        h('span', 'lbl', 'Final response'),
        h('pre', 'text', v.final !== undefined ? v.final : '\u2014')]),
      v.scores && v.scores.length ? h('p', 'scores', each(v.scores, function (s) {
        return h('span', 'score st-' + s.status, [h('code', null, s.metric), ' ' + s.score]);
      })) : null,
      rubrics(v.rubrics),
      v.more ? h('p', 'more', v.more + ' more left out') : null];
  }
  function metricCell(m) {
    if (!m) { return ['\u2014']; }
    return [h('span', 'mscore', m.score), status(m.status),
      m.threshold ? h('span', 'thr', m.threshold) : null,
      m.judge ? h('span', 'judge', 'judge ' + m.judge) : null,
      m.reason ? h('div', 'reason', m.reason) : null];
  }
  function runPair(p, columns) {
    var sides = columns.filter(function (c) { return c !== 'expected'; });
    var summary = h('summary', null, 'Run ' + p.run);
    sides.forEach(function (side) {
      add(summary, [h('span', 'side', labels[side]), status(p[side + '_status'])]);
    });
    var run = h('details', 'run', summary);
    if (p.opened) { run.open = true; }
    sides.forEach(function (side) {
      if (p[side + '_error']) {
        add(run, h('p', 'run-error', labels[side] + ' error: ' + p[side + '_error']));
      }
    });
    (p.turns || []).forEach(function (t) {
      add(run, h('div', 'turn', [
        h('p', 'user', [h('span', 'lbl', 'Turn ' + t.turn + ' \u00b7 user'),
          h('span', 'text', t.user !== undefined ? t.user : '\u2014')]),
        h('div', 'cols n' + columns.length, columns.map(function (c) {
          return h('div', 'col col-' + c, [h('h5', null, labels[c])].concat(turnColumn(t[c])));
        }))]));
    });
    if (p.more_turns) { add(run, h('p', 'more', p.more_turns + ' more turns left out')); }
    if (p.metrics && p.metrics.length) {
      add(run, h('table', 'rm', [
        h('thead', null, h('tr', null, [h('th', null, 'Metric')].concat(
          sides.map(function (side) { return h('th', null, labels[side]); })))),
        h('tbody', null, p.metrics.map(function (m) {
          return h('tr', null, [h('td', null, h('code', null, m.metric))].concat(
            sides.map(function (side) { return h('td', null, metricCell(m[side])); })));
        }))]));
    }
    if ((p.base_rubrics && p.base_rubrics.length) || (p.head_rubrics && p.head_rubrics.length)) {
      add(run, h('div', 'cols n' + sides.length, sides.map(function (side) {
        return h('div', 'col col-' + side, [h('h5', null, labels[side] + ': rubrics'),
          rubrics(p[side + '_rubrics'])]);
      })));
    }
    return run;
  }
  function body(b) {
    var out = h('div', 'body');
    if (b.where) { add(out, h('p', 'where', ['Eval set file: ', h('code', null, b.where)])); }
    if (b.errors && b.errors.length) {
      add(out, h('ul', 'errors', each(b.errors, function (e) {
        return h('li', null, [h('span', 'kind', e.kind), e.message,
          e.where ? h('code', null, e.where) : null, e.hint ? h('span', 'hint', e.hint) : null]);
      })));
    }
    if (b.flaky && b.flaky.length) { add(out, h('p', 'flaky', 'Flaky: ' + b.flaky.join('; '))); }
    if (b.metrics && b.metrics.length) {
      var head = ['Metric', 'Baseline', 'Head', '\u0394', 'Head status', 'Reason'];
      add(out, h('table', 'cm', [
        h('thead', null, h('tr', null, head.map(function (t) { return h('th', null, t); }))),
        h('tbody', null, b.metrics.map(function (m) {
          return h('tr', m.worse ? 'worse' : null, [h('td', null, h('code', null, m.metric)),
            h('td', null, m.base), h('td', null, m.head), h('td', null, m.delta),
            h('td', null, status(m.status)), h('td', null, m.reason || '')]);
        }))]));
    }
    if (b.note) { add(out, h('p', 'note', b.note)); }
    (b.runs || []).forEach(function (p) { add(out, runPair(p, b.columns || [])); });
    return out;
  }

  // --- packed evidence ------------------------------------------------------------------
  var chunks = {};
  function unpack(n) {
    if (!chunks[n]) {
      var block = document.getElementById('chunk-' + n);
      var bytes = Uint8Array.from(atob(block.textContent.trim()), function (c) {
        return c.charCodeAt(0);
      });
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
      chunks[n] = new Response(stream).text().then(JSON.parse);
    }
    return chunks[n];
  }
  function fill(el) {
    var pending = el.querySelector(':scope > .body.pending');
    if (!pending || pending.getAttribute('data-loading')) { return Promise.resolve(); }
    pending.setAttribute('data-loading', '1');
    add(pending, h('p', 'note', 'Unpacking\u2026'));
    return unpack(el.getAttribute('data-chunk')).then(function (data) {
      pending.replaceWith(body(data[el.getAttribute('data-index')]));
    }, function (error) {
      pending.replaceWith(h('div', 'body', h('p', 'errors',
        'This browser could not unpack the evidence (' + error + '); it is in the results file.')));
    });
  }
  list.addEventListener('toggle', function (event) {
    var el = event.target;
    if (el.classList && el.classList.contains('case') && el.open) { fill(el); }
  }, true);

  // --- filters, search, paging ------------------------------------------------------------
  var info = document.getElementById('page-info');
  var empty = document.getElementById('no-match');
  function pages() { return Math.max(1, Math.ceil(state.matches.length / pageSize)); }
  function show() {
    var start = state.page * pageSize;
    var shown = {};
    state.matches.slice(start, start + pageSize).forEach(function (item) { shown[item.el.id] = 1; });
    items.forEach(function (item) {
      var hide = !shown[item.el.id];
      if (item.el.hidden !== hide) { item.el.hidden = hide; }
    });
    info.textContent = state.matches.length ? 'page ' + (state.page + 1) + ' of ' + pages() +
      ' (' + state.matches.length + ' eval case' + (state.matches.length === 1 ? '' : 's') + ')'
      : '';
    empty.hidden = state.matches.length > 0;
  }
  function apply() {
    var query = state.query;
    state.matches = items.filter(function (item) {
      return (state.filter === 'all' || item.flags.indexOf(state.filter) >= 0) &&
        (!query || item.id.indexOf(query) >= 0);
    });
    state.page = Math.min(state.page, pages() - 1);
    show();
  }
  function setFilter(name) {
    state.filter = name;
    Array.prototype.forEach.call(section.querySelectorAll('.filter'), function (button) {
      button.setAttribute('aria-pressed', String(button.getAttribute('data-filter') === name));
    });
  }
  section.querySelector('.toolbar').addEventListener('click', function (event) {
    var button = event.target.closest('button');
    if (!button) { return; }
    if (button.hasAttribute('data-filter')) {
      setFilter(button.getAttribute('data-filter'));
      state.page = 0;
      apply();
    } else if (button.hasAttribute('data-page')) {
      state.page = Math.max(0, Math.min(pages() - 1,
        state.page + parseInt(button.getAttribute('data-page'), 10)));
      show();
    }
  });
  var search = document.getElementById('case-search');
  var timer = null;
  search.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      state.query = search.value.trim().toLowerCase();
      state.page = 0;
      apply();
    }, 80);
  });

  // --- deep links -------------------------------------------------------------------------
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var item = byId[id];
    if (!item) { return; }
    var at = state.matches.indexOf(item);
    if (at < 0) {
      setFilter('all');
      state.query = '';
      search.value = '';
      apply();
      at = state.matches.indexOf(item);
    }
    state.page = Math.floor(at / pageSize);
    show();
    items.forEach(function (other) { other.el.classList.remove('target'); });
    item.el.classList.add('target');
    item.el.open = true;
    item.el.scrollIntoView({ block: 'start' });
  }
  window.addEventListener('hashchange', reveal);
  window.addEventListener('beforeprint', function () {
    items.forEach(function (item) {
      if (!item.el.hidden && !item.el.querySelector(':scope > .body.pending')) { item.el.open = true; }
    });
  });
  apply();
  document.documentElement.classList.add('ready');
  if (location.hash) { reveal(); }
}());
