/*
 * Atrium API reference: renders an OpenAPI 3.x document in the browser.
 *
 * Vanilla ES2017, no dependencies, no build step. The only network request
 * is the fetch of the OpenAPI document itself. Text taken from the document
 * is only ever inserted with createTextNode/textContent; markup is never
 * built from strings.
 */
(function () {
  'use strict';

  const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'];
  const PARAM_ORDER = { path: 0, query: 1, header: 2, cookie: 3 };
  const MAX_DEPTH = 16; // deepest schema level rendered
  const OPEN_DEPTH = 0; // nested schema levels expanded initially
  const RESERVED_IDS = ['docs-app', 'docs-sidebar', 'docs-search', 'docs-nav', 'docs-main', 'docs-status'];

  let spec = {};

  /* ---------------------------------------------------------------- DOM */

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') node.className = v;
        else node.setAttribute(k, v === true ? '' : String(v));
      }
    }
    add(node, kids);
    return node;
  }

  function add(node, kids) {
    for (const k of kids) {
      if (k === undefined || k === null || k === false || k === '') continue;
      if (Array.isArray(k)) add(node, k);
      else if (typeof k === 'string' || typeof k === 'number') node.appendChild(document.createTextNode(String(k)));
      else node.appendChild(k);
    }
    return node;
  }

  function isObj(v) {
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  }

  function has(o, k) {
    return (isObj(o) || Array.isArray(o)) && Object.prototype.hasOwnProperty.call(o, k);
  }

  function str(v) {
    return typeof v === 'string' ? v : '';
  }

  function json(v, max) {
    let s;
    try {
      s = JSON.stringify(v);
    } catch (e) {
      s = String(v);
    }
    if (s === undefined) s = String(v);
    max = max || 160;
    return s.length > max ? s.slice(0, max - 1) + '\u2026' : s;
  }

  /* ----------------------------------------------------------- rich text */

  // Renders a description: paragraphs, line breaks, bullet and numbered
  // lists, fenced code blocks, inline `code` and **bold**. Nothing else of
  // Markdown is interpreted; everything is inserted as text.
  function richText(src, cls) {
    if (typeof src !== 'string' || !src.trim()) return null;
    const box = el('div', { class: 'md' + (cls ? ' ' + cls : '') });
    const segs = src.replace(/\r\n?/g, '\n').split(/^[ \t]*```[^\n]*$/m);
    segs.forEach((seg, i) => {
      if (i % 2 === 1) {
        box.appendChild(el('pre', null, el('code', null, seg.replace(/^\n/, '').replace(/\n$/, ''))));
        return;
      }
      for (const block of seg.split(/\n[ \t]*\n/)) {
        const lines = block.split('\n').filter((l) => l.trim() !== '');
        if (!lines.length) continue;
        if (lines.every((l) => /^\s*[-*+]\s+/.test(l))) {
          box.appendChild(el('ul', null, lines.map((l) => el('li', null, inline(l.replace(/^\s*[-*+]\s+/, ''))))));
        } else if (lines.every((l) => /^\s*\d+[.)]\s+/.test(l))) {
          box.appendChild(el('ol', null, lines.map((l) => el('li', null, inline(l.replace(/^\s*\d+[.)]\s+/, ''))))));
        } else if (lines.length === 1 && /^#{1,6}\s+/.test(lines[0])) {
          box.appendChild(el('p', { class: 'md-heading' }, inline(lines[0].replace(/^#{1,6}\s+/, ''))));
        } else {
          const p = el('p');
          lines.forEach((l, j) => {
            if (j) p.appendChild(el('br'));
            add(p, inline(l.trim()));
          });
          box.appendChild(p);
        }
      }
    });
    return box;
  }

  function inline(s) {
    const out = [];
    const parts = s.split('`');
    parts.forEach((part, i) => {
      if (i % 2 === 1 && i < parts.length - 1) {
        out.push(el('code', null, part));
        return;
      }
      const t = (i % 2 === 1 ? '`' : '') + part;
      t.split(/\*\*(.+?)\*\*/).forEach((b, j) => {
        if (j % 2 === 1) out.push(el('strong', null, b));
        else if (b) out.push(b);
      });
    });
    return out;
  }

  /* ---------------------------------------------------------- references */

  function unescapePointer(p) {
    try {
      p = decodeURIComponent(p);
    } catch (e) {
      /* keep the raw segment */
    }
    return p.replace(/~1/g, '/').replace(/~0/g, '~');
  }

  // refTarget resolves a local JSON pointer reference ("#/components/...").
  function refTarget(ref) {
    if (typeof ref !== 'string' || ref.charAt(0) !== '#') return undefined;
    if (ref === '#') return spec;
    const parts = ref.slice(1).split('/');
    if (parts[0] !== '') return undefined;
    let cur = spec;
    for (let i = 1; i < parts.length; i++) {
      const key = unescapePointer(parts[i]);
      if (!has(cur, key)) return undefined;
      cur = cur[key];
    }
    return cur;
  }

  function refName(ref) {
    const i = ref.lastIndexOf('/');
    return unescapePointer(i >= 0 ? ref.slice(i + 1) : ref) || ref;
  }

  // deref follows $ref chains of non-schema objects (parameters, request
  // bodies, responses, security schemes). OpenAPI 3.1 lets the reference
  // override summary and description.
  function deref(o) {
    for (let hops = 0; isObj(o) && typeof o.$ref === 'string'; hops++) {
      const t = hops < 32 ? refTarget(o.$ref) : undefined;
      if (!isObj(t)) return { description: 'Unresolved reference ' + o.$ref };
      const extra = {};
      if (typeof o.summary === 'string') extra.summary = o.summary;
      if (typeof o.description === 'string') extra.description = o.description;
      o = Object.keys(extra).length ? Object.assign({}, t, extra) : t;
    }
    return isObj(o) ? o : {};
  }

  // resolveSchema follows the $ref chain of a schema. stack holds the refs
  // currently being expanded on this branch of the tree; meeting one of them
  // again means the schema is recursive and must not be expanded.
  function resolveSchema(raw, stack) {
    const refs = [];
    let s = raw;
    let name = '';
    while (isObj(s) && typeof s.$ref === 'string') {
      const ref = s.$ref;
      name = refName(ref);
      if (stack.indexOf(ref) >= 0 || refs.indexOf(ref) >= 0) {
        return { s: {}, name: name, refs: refs, cyclic: true };
      }
      refs.push(ref);
      const t = refTarget(ref);
      if (t === undefined) {
        return { s: { description: 'Unresolved reference ' + ref }, name: name, refs: refs, cyclic: false, broken: true };
      }
      const siblings = Object.keys(s).filter((k) => k !== '$ref');
      if (siblings.length && isObj(t)) {
        const merged = Object.assign({}, t);
        for (const k of siblings) merged[k] = s[k];
        s = merged;
      } else {
        s = t;
      }
    }
    if (s === true || s === undefined || s === null) s = {};
    if (s === false) s = { not: {} };
    if (!isObj(s)) s = {};
    return { s: s, name: name, refs: refs, cyclic: false };
  }

  // flatten merges allOf members into a single schema, the way the common
  // "base object + extension" pattern is meant to be read.
  function flatten(s, stack, depth) {
    depth = depth || 0;
    if (!isObj(s) || !Array.isArray(s.allOf) || depth > 8) return s;
    const out = Object.assign({}, s);
    delete out.allOf;
    const props = Object.assign({}, isObj(s.properties) ? s.properties : {});
    const required = Array.isArray(s.required) ? s.required.slice() : [];
    for (const part of s.allOf) {
      const r = resolveSchema(part, stack);
      if (r.cyclic) continue;
      const p = flatten(r.s, stack.concat(r.refs), depth + 1);
      if (isObj(p.properties)) {
        for (const k of Object.keys(p.properties)) if (!has(props, k)) props[k] = p.properties[k];
      }
      if (Array.isArray(p.required)) for (const k of p.required) if (required.indexOf(k) < 0) required.push(k);
      for (const k of Object.keys(p)) {
        if (k !== 'properties' && k !== 'required' && !has(out, k)) out[k] = p[k];
      }
    }
    if (Object.keys(props).length) out.properties = props;
    if (required.length) out.required = required;
    return out;
  }

  function typesOf(s) {
    if (Array.isArray(s.type)) return s.type.filter((t) => typeof t === 'string');
    if (typeof s.type === 'string') return [s.type];
    if (isObj(s.properties) || isObj(s.additionalProperties)) return ['object'];
    if (s.items !== undefined) return ['array'];
    return [];
  }

  function isType(s, t) {
    return typesOf(s).indexOf(t) >= 0;
  }

  function typeLabel(s, name, stack, depth) {
    depth = depth || 0;
    let types = typesOf(s);
    let label;
    if (!types.length) {
      const alt = Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : null;
      if (name) label = name;
      else if (alt) {
        const names = alt.map((v) => (isObj(v) && typeof v.$ref === 'string' ? refName(v.$ref) : typeLabel(resolveSchema(v, stack).s, '', stack, depth + 1)));
        label = names.join(' | ');
      } else if (has(s, 'const')) label = 'const ' + json(s.const, 40);
      else if (Array.isArray(s.enum) && s.enum.length) label = s.enum[0] === null ? 'null' : typeof s.enum[0];
      else if (has(s, 'not')) label = 'not';
      else label = 'any';
    } else {
      if (s.nullable === true && types.indexOf('null') < 0) types = types.concat('null');
      label = types
        .map((t) => {
          if (t === 'array') {
            if (s.items === undefined || depth > 4) return 'array';
            const r = resolveSchema(s.items, stack);
            if (r.cyclic) return 'array of ' + r.name + ' (recursive)';
            const inner = r.name || typeLabel(flatten(r.s, stack.concat(r.refs)), '', stack.concat(r.refs), depth + 1);
            return 'array of ' + inner;
          }
          if (t === 'object' && name) return name;
          return t;
        })
        .join(' | ');
      if (name && label.indexOf(name) < 0) label = name + ' \u00b7 ' + label;
    }
    return label;
  }

  function hasChildren(s, stack, depth) {
    if (!isObj(s) || depth > 8) return false;
    if (isObj(s.properties) && Object.keys(s.properties).length) return true;
    if (isObj(s.additionalProperties) && Object.keys(s.additionalProperties).length) return true;
    if (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) return true;
    if (isType(s, 'array') && s.items !== undefined) {
      const r = resolveSchema(s.items, stack);
      if (r.cyclic) return false;
      const st = stack.concat(r.refs);
      const it = flatten(r.s, st);
      return hasChildren(it, st, depth + 1);
    }
    return false;
  }

  /* ------------------------------------------------------- schema facts */

  // facts lists the validation keywords of a schema as label/value chips.
  function facts(s, prefix) {
    const out = [];
    if (!isObj(s)) return out;
    const p = prefix || '';
    const val = (v) => el('code', null, json(v));
    const push = (k, v) => out.push(el('span', { class: 'fact' }, el('span', { class: 'fact-k' }, p + k), ' ', v));
    if (Array.isArray(s.enum)) {
      push('enum', s.enum.map((v, i) => [i ? ' ' : '', val(v)]));
    }
    if (has(s, 'const')) push('const', val(s.const));
    if (has(s, 'default')) push('default', val(s.default));
    if (typeof s.minimum === 'number') push(s.exclusiveMinimum === true ? 'minimum (exclusive)' : 'minimum', val(s.minimum));
    if (typeof s.exclusiveMinimum === 'number') push('exclusive minimum', val(s.exclusiveMinimum));
    if (typeof s.maximum === 'number') push(s.exclusiveMaximum === true ? 'maximum (exclusive)' : 'maximum', val(s.maximum));
    if (typeof s.exclusiveMaximum === 'number') push('exclusive maximum', val(s.exclusiveMaximum));
    if (typeof s.multipleOf === 'number') push('multiple of', val(s.multipleOf));
    if (typeof s.minLength === 'number') push('min length', val(s.minLength));
    if (typeof s.maxLength === 'number') push('max length', val(s.maxLength));
    if (typeof s.pattern === 'string') push('pattern', el('code', null, s.pattern));
    if (typeof s.minItems === 'number') push('min items', val(s.minItems));
    if (typeof s.maxItems === 'number') push('max items', val(s.maxItems));
    if (s.uniqueItems === true) push('unique items', val(true));
    if (typeof s.minProperties === 'number') push('min properties', val(s.minProperties));
    if (typeof s.maxProperties === 'number') push('max properties', val(s.maxProperties));
    if (has(s, 'example')) push('example', val(s.example));
    else if (Array.isArray(s.examples) && s.examples.length) push('example', val(s.examples[0]));
    return out;
  }

  // allFacts adds the facts of array items (e.g. an enum of allowed values).
  function allFacts(s, stack) {
    const out = facts(s);
    if (isType(s, 'array') && s.items !== undefined) {
      const r = resolveSchema(s.items, stack);
      if (!r.cyclic && !r.name) out.push(...facts(flatten(r.s, stack.concat(r.refs)), 'items '));
    }
    return out;
  }

  function factsNode(list) {
    return list.length ? el('span', { class: 'facts' }, list) : null;
  }

  function flags(s) {
    return [
      s.readOnly === true && el('span', { class: 'flag' }, 'read-only'),
      s.writeOnly === true && el('span', { class: 'flag' }, 'write-only'),
      s.deprecated === true && el('span', { class: 'flag flag-warn' }, 'deprecated'),
    ];
  }

  /* -------------------------------------------------------- schema tree */

  // lazy builds the body of a <details> element the first time it is opened,
  // which keeps large or heavily shared schemas cheap to render.
  function lazy(details, build, open) {
    let built = false;
    const ensure = () => {
      if (built) return;
      built = true;
      details.appendChild(build());
    };
    if (open) {
      details.open = true;
      ensure();
    }
    details.addEventListener('toggle', () => {
      if (details.open) ensure();
    });
  }

  function propRow(name, raw, required, stack, depth, nameClass) {
    const r = resolveSchema(raw, stack);
    const st = stack.concat(r.refs);
    const s = r.cyclic ? {} : flatten(r.s, st);
    const label = r.cyclic ? r.name + ' (recursive)' : typeLabel(s, r.name, st);
    const head = el(
      'span',
      { class: 'prop-head' },
      el('span', { class: 'prop-name' + (nameClass ? ' ' + nameClass : '') }, name),
      el('span', { class: 'prop-type' + (r.cyclic ? ' prop-cyclic' : '') }, label),
      typeof s.format === 'string' && el('span', { class: 'prop-format' }, s.format),
      required ? el('span', { class: 'req' }, 'required') : null,
      flags(s)
    );
    const body = [typeof s.title === 'string' && !r.name ? el('span', { class: 'prop-title' }, s.title) : null, richText(s.description, 'prop-desc'), factsNode(allFacts(s, st))];
    const li = el('li', { class: 'prop' });
    if (!r.cyclic && depth < MAX_DEPTH && hasChildren(s, st, 0)) {
      const d = el('details', { class: 'prop-details' }, el('summary', null, head, body));
      lazy(d, () => el('ul', { class: 'tree' }, childRows(s, st, depth + 1)), depth < OPEN_DEPTH);
      li.appendChild(d);
    } else {
      li.appendChild(el('div', { class: 'prop-leaf' }, head, body));
    }
    return li;
  }

  function variantName(raw, i) {
    if (isObj(raw) && typeof raw.title === 'string' && raw.title) return raw.title;
    return 'option ' + (i + 1);
  }

  function childRows(s, stack, depth) {
    const rows = [];
    if (isType(s, 'array') && s.items !== undefined) {
      const r = resolveSchema(s.items, stack);
      const st = stack.concat(r.refs);
      const it = r.cyclic ? null : flatten(r.s, st);
      if (it && !isType(it, 'array') && (isObj(it.properties) || isObj(it.additionalProperties))) {
        rows.push(el('li', { class: 'tree-note' }, 'Each item:'));
        rows.push(...childRows(it, st, depth));
      } else {
        rows.push(propRow('[items]', s.items, false, stack, depth, 'prop-pseudo'));
      }
    }
    if (isObj(s.properties)) {
      const req = Array.isArray(s.required) ? s.required : [];
      for (const k of Object.keys(s.properties)) rows.push(propRow(k, s.properties[k], req.indexOf(k) >= 0, stack, depth));
    }
    if (isObj(s.additionalProperties) && Object.keys(s.additionalProperties).length) {
      rows.push(propRow('[key: string]', s.additionalProperties, false, stack, depth, 'prop-pseudo'));
    } else if (s.additionalProperties === true && !isObj(s.properties)) {
      rows.push(propRow('[key: string]', {}, false, stack, depth, 'prop-pseudo'));
    }
    for (const kw of ['oneOf', 'anyOf']) {
      if (!Array.isArray(s[kw])) continue;
      let note = kw === 'oneOf' ? 'Exactly one of:' : 'Any of:';
      if (isObj(s.discriminator) && typeof s.discriminator.propertyName === 'string') {
        note += ' (selected by ' + s.discriminator.propertyName + ')';
      }
      rows.push(el('li', { class: 'tree-note' }, note));
      s[kw].forEach((v, i) => rows.push(propRow(variantName(v, i), v, false, stack, depth, 'prop-pseudo')));
    }
    return rows;
  }

  // schemaBlock renders a top-level schema (request or response body).
  function schemaBlock(raw) {
    const r = resolveSchema(raw, []);
    const s = flatten(r.s, r.refs);
    const box = el(
      'div',
      { class: 'schema' },
      el(
        'div',
        { class: 'schema-head' },
        el('span', { class: 'prop-type' }, typeLabel(s, r.name, r.refs)),
        typeof s.format === 'string' && el('span', { class: 'prop-format' }, s.format),
        flags(s)
      ),
      richText(s.description, 'prop-desc'),
      factsNode(allFacts(s, r.refs))
    );
    if (hasChildren(s, r.refs, 0)) box.appendChild(el('ul', { class: 'tree tree-root' }, childRows(s, r.refs, 0)));
    return box;
  }

  function contentBlock(content) {
    if (!isObj(content) || !Object.keys(content).length) return null;
    return Object.keys(content).map((mt) => {
      const m = isObj(content[mt]) ? content[mt] : {};
      let example;
      if (has(m, 'example')) example = m.example;
      else if (isObj(m.examples)) {
        const first = Object.keys(m.examples)[0];
        const ex = first === undefined ? undefined : deref(m.examples[first]);
        if (ex && has(ex, 'value')) example = ex.value;
      }
      return el(
        'div',
        { class: 'media' },
        el('div', { class: 'media-type' }, el('span', { class: 'label' }, 'Content type'), ' ', el('code', null, mt)),
        m.schema !== undefined ? schemaBlock(m.schema) : null,
        example !== undefined
          ? el('details', { class: 'example' }, el('summary', null, 'Example'), el('pre', null, el('code', null, prettyJSON(example))))
          : null
      );
    });
  }

  function prettyJSON(v) {
    if (typeof v === 'string') return v;
    try {
      return JSON.stringify(v, null, 2);
    } catch (e) {
      return String(v);
    }
  }

  /* ---------------------------------------------------------- operations */

  function methodBadge(m) {
    const known = METHODS.indexOf(m) >= 0 ? m : 'other';
    return el('span', { class: 'method method-' + known }, m.toUpperCase());
  }

  function pathNode(p, cls) {
    return el(
      'code',
      { class: 'path' + (cls ? ' ' + cls : '') },
      p.split(/(\{[^}]*\})/).map((part, i) => {
        if (i % 2 === 1) return el('span', { class: 'path-param' }, part);
        // Allow line breaks before slashes only, never inside a segment.
        return part.split(/(?=\/)/).map((seg, j) => (j ? [el('wbr'), seg] : seg));
      })
    );
  }

  function schemeSummary(s) {
    const t = str(s.type);
    if (t === 'http') {
      const scheme = str(s.scheme).toLowerCase();
      if (scheme === 'bearer') return 'HTTP bearer token' + (s.bearerFormat ? ' (' + s.bearerFormat + ')' : '');
      if (scheme === 'basic') return 'HTTP basic authentication';
      return 'HTTP ' + (s.scheme || 'authentication');
    }
    if (t === 'apiKey') return 'API key in ' + str(s.in) + (s.name ? ' ' + JSON.stringify(s.name) : '');
    if (t === 'oauth2') return 'OAuth 2.0' + (isObj(s.flows) ? ' (' + Object.keys(s.flows).join(', ') + ')' : '');
    if (t === 'openIdConnect') return 'OpenID Connect';
    if (t === 'mutualTLS') return 'Mutual TLS';
    return t || 'unknown scheme';
  }

  function securityBlock(op) {
    const req = Array.isArray(op.security) ? op.security : Array.isArray(spec.security) ? spec.security : null;
    if (!req) return null;
    const schemes = isObj(spec.components) && isObj(spec.components.securitySchemes) ? spec.components.securitySchemes : {};
    let body;
    if (!req.length || req.every((r) => isObj(r) && !Object.keys(r).length)) {
      body = el('p', { class: 'muted' }, 'None \u2014 this operation does not require authentication.');
    } else {
      body = el(
        'ul',
        { class: 'security' },
        req.map((alt, i) => {
          if (!isObj(alt) || !Object.keys(alt).length) return el('li', null, i ? el('span', { class: 'or' }, 'or') : null, 'no authentication');
          return el(
            'li',
            null,
            i ? el('span', { class: 'or' }, 'or') : null,
            Object.keys(alt).map((name, j) => {
              const scopes = Array.isArray(alt[name]) ? alt[name] : [];
              const sch = has(schemes, name) ? deref(schemes[name]) : null;
              return [
                j ? el('span', { class: 'and' }, 'and') : null,
                el('span', { class: 'scheme' }, el('strong', null, name), sch ? el('span', { class: 'muted' }, ' \u2014 ' + schemeSummary(sch)) : null),
                scopes.length ? el('span', { class: 'scopes' }, el('span', { class: 'fact-k' }, 'scopes'), scopes.map((sc) => el('code', null, String(sc)))) : null,
              ];
            })
          );
        })
      );
    }
    return el('div', { class: 'block' }, el('h4', null, 'Authorization'), body);
  }

  function paramsBlock(params) {
    if (!params.length) return null;
    const rows = params.map((p) => {
      let raw = p.schema;
      if (raw === undefined && isObj(p.content)) {
        const first = Object.keys(p.content)[0];
        if (first !== undefined && isObj(p.content[first])) raw = p.content[first].schema;
      }
      const r = resolveSchema(raw, []);
      const s = flatten(r.s, r.refs);
      const f = allFacts(s, r.refs);
      if (has(p, 'example') && !has(s, 'example')) f.push(el('span', { class: 'fact' }, el('span', { class: 'fact-k' }, 'example'), ' ', el('code', null, json(p.example))));
      return el(
        'tr',
        null,
        el(
          'td',
          { class: 'param-name' },
          el('code', null, str(p.name)),
          p.required === true ? el('span', { class: 'req' }, 'required') : null,
          p.deprecated === true ? el('span', { class: 'flag flag-warn' }, 'deprecated') : null
        ),
        el('td', null, str(p.in)),
        el('td', null, el('span', { class: 'prop-type' }, typeLabel(s, r.name, r.refs)), typeof s.format === 'string' ? el('span', { class: 'prop-format' }, s.format) : null),
        el('td', null, richText(p.description || s.description, 'prop-desc'), factsNode(f))
      );
    });
    return el(
      'div',
      { class: 'block' },
      el('h4', null, 'Parameters'),
      el(
        'div',
        { class: 'table-wrap' },
        el(
          'table',
          { class: 'params' },
          el('thead', null, el('tr', null, el('th', { scope: 'col' }, 'Name'), el('th', { scope: 'col' }, 'In'), el('th', { scope: 'col' }, 'Type'), el('th', { scope: 'col' }, 'Description'))),
          el('tbody', null, rows)
        )
      )
    );
  }

  function bodyBlock(raw) {
    if (raw === undefined) return null;
    const b = deref(raw);
    return el(
      'div',
      { class: 'block' },
      el('h4', null, 'Request body', b.required === true ? el('span', { class: 'req' }, 'required') : el('span', { class: 'flag' }, 'optional')),
      richText(b.description),
      contentBlock(b.content) || el('p', { class: 'muted' }, 'No content described.')
    );
  }

  function statusClass(code) {
    const c = String(code).charAt(0);
    return /^[1-5]$/.test(c) ? 'resp-code-' + c + 'xx' : 'resp-code-default';
  }

  function responsesBlock(responses) {
    if (!isObj(responses) || !Object.keys(responses).length) return null;
    const codes = Object.keys(responses).sort((a, b) => {
      const ka = a === 'default' ? 'zzz' : a.toUpperCase();
      const kb = b === 'default' ? 'zzz' : b.toUpperCase();
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
    return el(
      'div',
      { class: 'block' },
      el('h4', null, 'Responses'),
      codes.map((code) => {
        const resp = deref(responses[code]);
        const headers = isObj(resp.headers) ? Object.keys(resp.headers) : [];
        const line = [
          el('span', { class: 'resp-code ' + statusClass(code) }, code),
          el('span', { class: 'response-desc' }, firstLine(resp.description) || (code === 'default' ? 'Default response' : '')),
        ];
        const hasContent = isObj(resp.content) && Object.keys(resp.content).length > 0;
        if (!hasContent && !headers.length && !moreLines(resp.description)) {
          return el('div', { class: 'response response-empty' }, el('div', { class: 'response-line' }, line, el('span', { class: 'muted response-note' }, 'no body')));
        }
        const d = el('details', { class: 'response' }, el('summary', { class: 'response-line' }, line));
        lazy(
          d,
          () =>
            el(
              'div',
              { class: 'response-body' },
              moreLines(resp.description),
              headers.length
                ? el(
                    'div',
                    { class: 'headers' },
                    el('div', { class: 'label' }, 'Headers'),
                    el(
                      'ul',
                      { class: 'tree' },
                      headers.map((h) => {
                        const hd = deref(resp.headers[h]);
                        return propRow(h, Object.assign({}, hd.schema || {}, hd.description ? { description: hd.description } : {}), hd.required === true, [], MAX_DEPTH);
                      })
                    )
                  )
                : null,
              contentBlock(resp.content) || el('p', { class: 'muted' }, 'No response body.')
            ),
          /^2/.test(code)
        );
        return d;
      })
    );
  }

  function firstLine(s) {
    if (typeof s !== 'string') return '';
    return s.trim().split(/\n/)[0];
  }

  function moreLines(s) {
    if (typeof s !== 'string') return null;
    const i = s.trim().indexOf('\n');
    return i < 0 ? null : richText(s.trim().slice(i + 1));
  }

  function renderOperation(op) {
    const o = op.op;
    const titleId = op.id + '--title';
    return el(
      'section',
      { class: 'op', id: op.id, 'aria-labelledby': titleId },
      el('h3', { class: 'op-title', id: titleId }, op.summary || op.method.toUpperCase() + ' ' + op.path, o.deprecated === true ? el('span', { class: 'flag flag-warn' }, 'deprecated') : null),
      el(
        'div',
        { class: 'endpoint' },
        methodBadge(op.method),
        pathNode(op.path),
        el('a', { class: 'anchor', href: '#' + encodeURIComponent(op.id), title: 'Link to this operation', 'aria-label': 'Link to this operation' }, '#')
      ),
      typeof o.operationId === 'string' ? el('div', { class: 'op-id muted' }, 'operationId ', el('code', null, o.operationId)) : null,
      richText(o.description),
      securityBlock(o),
      paramsBlock(op.params),
      bodyBlock(o.requestBody),
      responsesBlock(o.responses)
    );
  }

  /* ------------------------------------------------------------ the page */

  function slug(s) {
    return String(s)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '');
  }

  // collect groups the operations by their first tag, in the order of the
  // top-level tags list followed by tags only used on operations.
  function collect() {
    const used = new Set(RESERVED_IDS);
    const uniqueId = (want) => {
      let id = want.replace(/\s+/g, '-') || 'operation';
      if (used.has(id)) {
        let n = 2;
        while (used.has(id + '-' + n)) n++;
        id = id + '-' + n;
      }
      used.add(id);
      return id;
    };
    const groups = new Map();
    const tagInfo = {};
    if (Array.isArray(spec.tags)) {
      for (const t of spec.tags) {
        if (isObj(t) && typeof t.name === 'string' && !groups.has(t.name)) {
          groups.set(t.name, []);
          tagInfo[t.name] = t;
        }
      }
    }
    const paths = isObj(spec.paths) ? spec.paths : {};
    for (const p of Object.keys(paths)) {
      const item = deref(paths[p]);
      const shared = Array.isArray(item.parameters) ? item.parameters : [];
      for (const m of METHODS) {
        if (!isObj(item[m])) continue;
        const o = item[m];
        const params = [];
        const seen = new Map();
        for (const raw of shared.concat(Array.isArray(o.parameters) ? o.parameters : [])) {
          const prm = deref(raw);
          const key = str(prm.in) + ':' + str(prm.name);
          if (seen.has(key)) params[seen.get(key)] = prm;
          else {
            seen.set(key, params.length);
            params.push(prm);
          }
        }
        params.sort((a, b) => (PARAM_ORDER[a.in] !== undefined ? PARAM_ORDER[a.in] : 9) - (PARAM_ORDER[b.in] !== undefined ? PARAM_ORDER[b.in] : 9));
        const tag = Array.isArray(o.tags) && typeof o.tags[0] === 'string' ? o.tags[0] : 'Other';
        if (!groups.has(tag)) groups.set(tag, []);
        groups.get(tag).push({
          id: uniqueId(typeof o.operationId === 'string' && o.operationId ? o.operationId : m + '-' + slug(p)),
          method: m,
          path: p,
          summary: str(o.summary),
          op: o,
          params: params,
        });
      }
    }
    const out = [];
    for (const [name, ops] of groups) {
      if (ops.length) out.push({ name: name, id: uniqueId('tag-' + (slug(name) || 'other')), info: tagInfo[name] || {}, ops: ops });
    }
    return out;
  }

  function safeLink(href, label) {
    let u;
    try {
      u = new URL(href, document.baseURI);
    } catch (e) {
      return el('span', null, label);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return el('span', null, label);
    return el('a', { href: u.href, rel: 'noopener noreferrer' }, label);
  }

  function renderIntro() {
    const info = isObj(spec.info) ? spec.info : {};
    const servers = Array.isArray(spec.servers) ? spec.servers.filter(isObj) : [];
    const comps = isObj(spec.components) ? spec.components : {};
    const schemes = isObj(comps.securitySchemes) ? comps.securitySchemes : {};
    const meta = [];
    if (servers.length) {
      meta.push(
        el('div', { class: 'meta' }, el('h2', null, 'Servers'), el('ul', { class: 'plain' }, servers.map((s) => el('li', null, el('code', null, str(s.url)), s.description ? el('span', { class: 'muted' }, ' \u2014 ' + s.description) : null))))
      );
    }
    if (Object.keys(schemes).length) {
      meta.push(
        el(
          'div',
          { class: 'meta' },
          el('h2', null, 'Authentication'),
          el(
            'ul',
            { class: 'plain' },
            Object.keys(schemes).map((name) => {
              const s = deref(schemes[name]);
              return el('li', null, el('strong', null, name), el('span', { class: 'muted' }, ' \u2014 ' + schemeSummary(s)), richText(s.description, 'prop-desc'));
            })
          )
        )
      );
    }
    const ext = isObj(spec.externalDocs) && typeof spec.externalDocs.url === 'string' ? spec.externalDocs : null;
    return el(
      'header',
      { class: 'intro' },
      el(
        'h1',
        null,
        str(info.title) || 'API reference',
        info.version !== undefined && info.version !== null && String(info.version) !== '' ? el('span', { class: 'pill' }, 'v' + String(info.version).replace(/^v/, '')) : null,
        typeof spec.openapi === 'string' ? el('span', { class: 'pill pill-muted' }, 'OpenAPI ' + spec.openapi) : null
      ),
      typeof info.summary === 'string' ? el('p', { class: 'lead' }, info.summary) : null,
      richText(info.description),
      ext ? el('p', null, safeLink(ext.url, ext.description || 'External documentation')) : null,
      meta.length ? el('div', { class: 'meta-grid' }, meta) : null
    );
  }

  function renderNav(groups, nav) {
    const items = [];
    const lists = groups.map((g) => {
      const lis = g.ops.map((op) => {
        const a = el('a', { href: '#' + encodeURIComponent(op.id), class: op.op.deprecated === true ? 'deprecated' : null }, methodBadge(op.method), el('span', { class: 'nav-text' }, pathNode(op.path, 'nav-path'), op.summary ? el('span', { class: 'nav-summary' }, op.summary) : null));
        const li = el('li', null, a);
        items.push({ li: li, a: a, id: op.id, hay: [op.method, op.path, op.summary, str(op.op.operationId)].join(' ').toLowerCase() });
        return li;
      });
      const group = el('div', { class: 'nav-group' }, el('a', { class: 'nav-tag', href: '#' + encodeURIComponent(g.id) }, g.name), el('ul', null, lis));
      return { group: group, lis: lis };
    });
    const empty = el('p', { class: 'nav-empty muted', hidden: true }, 'No matching operations.');
    add(nav, [lists.map((l) => l.group), empty]);

    const search = document.getElementById('docs-search');
    const filter = () => {
      const terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      let any = false;
      for (const it of items) it.li.hidden = !terms.every((t) => it.hay.indexOf(t) >= 0);
      for (const l of lists) {
        const visible = l.lis.some((li) => !li.hidden);
        l.group.hidden = !visible;
        any = any || visible;
      }
      empty.hidden = any;
    };
    search.disabled = false;
    search.addEventListener('input', filter);
    search.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        search.value = '';
        filter();
      }
    });
    document.addEventListener('keydown', (e) => {
      if (e.key === '/' && !e.ctrlKey && !e.metaKey && !e.altKey && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) {
        e.preventDefault();
        search.focus();
      }
    });
    return items;
  }

  // revealInSidebar scrolls only the sidebar (never the page) so that the
  // current operation's link is visible.
  function revealInSidebar(li) {
    const side = document.getElementById('docs-sidebar');
    if (!side || li.hidden || side.scrollHeight <= side.clientHeight) return;
    const r = li.getBoundingClientRect();
    const sr = side.getBoundingClientRect();
    const search = side.querySelector('.search');
    const top = sr.top + (search ? search.offsetHeight : 0);
    if (r.top < top || r.bottom > sr.bottom) side.scrollTop += r.top - top - (sr.bottom - top) / 3;
  }

  function markCurrent(items) {
    let id = '';
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (e) {
      id = location.hash.slice(1);
    }
    for (const it of items) {
      if (it.id === id) {
        it.a.setAttribute('aria-current', 'location');
        revealInSidebar(it.li);
      } else it.a.removeAttribute('aria-current');
    }
    return id;
  }

  function render(doc) {
    if (!isObj(doc)) throw new Error('the document is not a JSON object');
    spec = doc;
    const main = document.getElementById('docs-main');
    const nav = document.getElementById('docs-nav');
    const status = document.getElementById('docs-status');
    const groups = collect();
    const frag = document.createDocumentFragment();
    frag.appendChild(renderIntro());
    for (const g of groups) {
      frag.appendChild(
        el(
          'section',
          { class: 'tag', id: g.id, 'aria-labelledby': g.id + '--title' },
          el('h2', { class: 'tag-title', id: g.id + '--title' }, g.name),
          richText(g.info.description),
          g.ops.map(renderOperation)
        )
      );
    }
    if (!groups.length) frag.appendChild(el('p', { class: 'muted' }, 'This API description contains no operations.'));
    if (status) status.remove();
    main.appendChild(frag);
    const items = renderNav(groups, nav);
    const onHash = () => {
      const id = markCurrent(items);
      const target = id && document.getElementById(id);
      if (target) target.scrollIntoView();
    };
    window.addEventListener('hashchange', () => markCurrent(items));
    onHash();
  }

  function fail(err) {
    const status = document.getElementById('docs-status');
    if (!status) return;
    status.className = 'load-status load-error';
    status.textContent = 'Could not load the API description: ' + (err && err.message ? err.message : String(err));
  }

  function start() {
    const app = document.getElementById('docs-app');
    const url = app && app.getAttribute('data-spec-url');
    if (!url) {
      fail(new Error('no document URL configured'));
      return;
    }
    fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then((res) => {
        if (!res.ok) throw new Error('HTTP ' + res.status + ' from ' + url);
        return res.json();
      })
      .then(render)
      .catch(fail);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
