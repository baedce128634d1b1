#!/usr/bin/env python3
"""Snapshots of a synced tree, for the sync clients' suite (55-sync-clients).

tree.py snap DIR [--no-mtime]: one line a file or folder, sorted, of
    path (NFC: the server stores names so), SHA-256 and modification time of
    files; the clients' own files (journal, logs), conflict copies and the
    virtual folder Shared with me are left out.
tree.py conflicts DIR: the conflict copies the clients made, one path a line.
"""
import hashlib
import os
import re
import sys
import unicodedata

SKIP = re.compile(r'^(\.sync_.*\.db.*|\._sync_.*|\.owncloudsync\.log|\.sync_journal\.db.*|\.csync_journal\.db.*)$')
CONFLICT = re.compile(r'(\(conflicted copy .*\)|_conflict-\d{8}-\d{6})')


def walk(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel == '.':
            dirs[:] = [x for x in dirs if not x.startswith('Shared with me')]
        for name in sorted(dirs):
            yield os.path.join(rel, name), True
        for name in sorted(files):
            if not SKIP.match(name):
                yield os.path.join(rel, name), False


def snap(root, mtime=True):
    out = []
    for rel, is_dir in walk(root):
        if CONFLICT.search(rel):
            continue
        p = os.path.join(root, rel)
        name = unicodedata.normalize('NFC', os.path.normpath(rel))
        if is_dir:
            out.append(name + '/')
            continue
        with open(p, 'rb') as f:
            h = hashlib.sha256(f.read()).hexdigest()[:16]
        line = '%s\t%s' % (name, h)
        if mtime:
            line += '\t%d' % int(os.stat(p).st_mtime)
        out.append(line)
    return sorted(out)


def main():
    cmd, root = sys.argv[1], sys.argv[2]
    if cmd == 'snap':
        print('\n'.join(snap(root, '--no-mtime' not in sys.argv)))
    elif cmd == 'conflicts':
        print('\n'.join(rel for rel, d in walk(root) if not d and CONFLICT.search(rel)))
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main()
