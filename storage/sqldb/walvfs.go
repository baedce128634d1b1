package sqldb

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	lib "modernc.org/sqlite/lib"
)

// The VFS every connection opens the database through (walVFSName) is
// SQLite's own unix VFS with one change: what SQLite writes to the
// write-ahead log is gathered in memory and handed to the file system in one
// write (in pieces of walWriteMax) when SQLite syncs the log, rather than as
// two writes a page (a frame's header, then its page). A commit of a few small
// files writes some 30 pages to the log: 60 system calls became 2, and a small
// WebDAV PUT got about a tenth faster end to end (docs/benchmarks.md).
//
// Durability is unchanged: SQLite counts a commit done only once its xSync of
// the log returned (synchronous=FULL), and the gathered bytes are written
// before that sync; bytes written and not yet synced may be lost in a crash
// with or without the VFS. Everything else reaches the gathered bytes first:
// reading a range of the log that they cover, its size, truncating it, a file
// control, closing it. Writing early is always safe; writing late is not:
//   - other connections read the log through files of their own, so they
//     must not learn of frames still in memory. SQLite publishes frames by
//     writing the log index's header in shared memory around a memory
//     barrier it asks of the main database file (xShmBarrier): the barrier
//     first writes out whatever is gathered. With synchronous=FULL, as Atrium
//     runs, the sync before it has already done so;
//   - another connection may write the same range of the log once this one
//     let go of the log's write lock (after a rollback of a transaction whose
//     pages spilled into the log): so gathered bytes are written out before
//     that lock is released (xShmLock), and no bytes are ever gathered by a
//     connection that does not hold it.
//
// A write that fails in the barrier or the unlock cannot be reported there:
// the connection's next write, sync or close returns it.
const walVFSName = "atrium-unix"

const (
	// walBufMax bounds what one log gathers: a larger transaction (an import,
	// pages spilled from the cache) writes every walBufMax bytes.
	walBufMax = 1 << 20
	// walBufCap is the size of a log's buffer (C memory, as SQLite's
	// pointers must be): walBufMax and one more write of the largest page.
	walBufCap = walBufMax + 64<<10
	// walWriteMax is the most the unix VFS writes in one call: it masks the
	// length of a write with 0x1ffff (its callers write a page at most).
	walWriteMax = 64 << 10
	// walFileHeader is what precedes the unix VFS's own file in the
	// sqlite3_file of a log: the methods pointer, then the walFile's handle.
	walFileHeader = 16
)

var (
	walVFSOnce sync.Once
	walVFSErr  error
	walVFS     lib.Tsqlite3_vfs // SQLite keeps a pointer to it: never moved, never freed
	unixVFS    uintptr          // SQLite's unix VFS
	unixOpen   uintptr          // its xOpen
	walMethods lib.Tsqlite3_io_methods

	walFiles sync.Map // handle (uintptr) -> *walFile
	// walWrites counts SQLite's writes to logs, walFlushed the writes handed
	// to the file system for them (tests read both).
	walWrites, walFlushed atomic.Int64
	walHandles            atomic.Uintptr
	walPending            atomic.Int32 // logs with gathered bytes

	dbTablesMu sync.Mutex
	// dbTables holds, by the unix VFS's methods of a main database file, ours
	// (in C memory, as SQLite's pointers must be, never freed: the unix VFS has
	// a handful of method tables), or 0 when they have no barrier to wrap.
	dbTables = map[uintptr]uintptr{}
)

// dbTable is the methods of a main database file: the unix VFS's, with
// xShmBarrier and xShmLock replaced by walBarrier and walShmLock; barrier and
// shmLock are the unix VFS's.
type dbTable struct {
	methods lib.Tsqlite3_io_methods // first: a file's pMethods points here
	barrier uintptr
	shmLock uintptr
}

// walFile is a log opened through the VFS: its unix file and the bytes
// written to it and not yet handed to the file system.
type walFile struct {
	inner   uintptr // the unix VFS's sqlite3_file, after walFileHeader
	methods *lib.Tsqlite3_io_methods

	mu  sync.Mutex
	mem uintptr // the buffer, walBufCap bytes, allocated on the first write
	n   int     // gathered bytes in it, for the file from off on
	off int64
	err int32 // a failed write found by a barrier, reported by the next write or sync
}

// buffer is the whole buffer; its first n bytes are the gathered ones.
func (f *walFile) buffer() []byte { return unsafe.Slice((*byte)(cmem(f.mem)), walBufCap) }

// The functions SQLite calls: a C function pointer in this SQLite is the
// address of a Go func value, held in these variables for the process's life.
var (
	fnOpen        = walOpen
	fnClose       = walClose
	fnRead        = walRead
	fnWrite       = walWrite
	fnTruncate    = walTruncate
	fnSync        = walSync
	fnFileSize    = walFileSize
	fnLock        = walLock
	fnUnlock      = walUnlock
	fnCheckRes    = walCheckReservedLock
	fnFileControl = walFileControl
	fnSectorSize  = walSectorSize
	fnDevChar     = walDeviceCharacteristics
	fnBarrier     = walBarrier
	fnShmLock     = walShmLock
)

// cfunc is the C function pointer of the Go func value *f.
func cfunc[F any](f *F) uintptr { return *(*uintptr)(unsafe.Pointer(f)) }

// gofunc calls back a C function pointer p as a Go func of type F.
func gofunc[F any](p uintptr) F { return *(*F)(unsafe.Pointer(&struct{ uintptr }{p})) }

// cmem is the C memory at address p.
func cmem(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func cfile(p uintptr) *lib.Tsqlite3_file { return (*lib.Tsqlite3_file)(cmem(p)) }

// registerWALVFS registers the VFS once per process.
func registerWALVFS() error {
	walVFSOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		unixVFS = lib.Xsqlite3_vfs_find(tls, 0)
		if unixVFS == 0 {
			walVFSErr = fmt.Errorf("sqlite: no default VFS")
			return
		}
		vfs := *(*lib.Tsqlite3_vfs)(cmem(unixVFS))
		name, err := libc.CString(walVFSName)
		if err != nil {
			walVFSErr = fmt.Errorf("sqlite: VFS name: %w", err)
			return
		}
		unixOpen = vfs.FxOpen
		vfs.FzName = name
		vfs.FpNext = 0
		vfs.FszOsFile += walFileHeader
		vfs.FxOpen = cfunc(&fnOpen)
		walVFS = vfs
		walMethods = lib.Tsqlite3_io_methods{
			FiVersion:               1, // a log has no shared memory and no memory map
			FxClose:                 cfunc(&fnClose),
			FxRead:                  cfunc(&fnRead),
			FxWrite:                 cfunc(&fnWrite),
			FxTruncate:              cfunc(&fnTruncate),
			FxSync:                  cfunc(&fnSync),
			FxFileSize:              cfunc(&fnFileSize),
			FxLock:                  cfunc(&fnLock),
			FxUnlock:                cfunc(&fnUnlock),
			FxCheckReservedLock:     cfunc(&fnCheckRes),
			FxFileControl:           cfunc(&fnFileControl),
			FxSectorSize:            cfunc(&fnSectorSize),
			FxDeviceCharacteristics: cfunc(&fnDevChar),
		}
		if rc := lib.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&walVFS)), 0); rc != lib.SQLITE_OK {
			walVFSErr = fmt.Errorf("sqlite: register VFS %s: code %d", walVFSName, rc)
		}
	})
	return walVFSErr
}

// walOpen opens a file with the unix VFS. A log gets the gathering methods,
// its unix file after the header; a main database file keeps its unix file
// and methods but for the barrier; any other file is the unix VFS's alone.
func walOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	open := gofunc[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32](unixOpen)
	if flags&lib.SQLITE_OPEN_WAL == 0 {
		rc := open(tls, unixVFS, zName, pFile, flags, pOutFlags)
		if rc == lib.SQLITE_OK && flags&lib.SQLITE_OPEN_MAIN_DB != 0 {
			if t := dbTableOf(tls, cfile(pFile).FpMethods); t != nil {
				cfile(pFile).FpMethods = uintptr(unsafe.Pointer(&t.methods))
			}
		}
		return rc
	}
	inner := pFile + walFileHeader
	if rc := open(tls, unixVFS, zName, inner, flags, pOutFlags); rc != lib.SQLITE_OK {
		cfile(pFile).FpMethods = 0 // nothing to close
		return rc
	}
	f := &walFile{inner: inner, methods: (*lib.Tsqlite3_io_methods)(cmem(cfile(inner).FpMethods))}
	h := walHandles.Add(1)
	walFiles.Store(h, f)
	*(*uintptr)(cmem(pFile + 8)) = h
	cfile(pFile).FpMethods = uintptr(unsafe.Pointer(&walMethods))
	return lib.SQLITE_OK
}

// dbTableOf is the methods for a main database file whose unix methods are at
// p; nil when they have no barrier to wrap.
func dbTableOf(tls *libc.TLS, p uintptr) *dbTable {
	dbTablesMu.Lock()
	defer dbTablesMu.Unlock()
	t, ok := dbTables[p]
	if !ok {
		m := *(*lib.Tsqlite3_io_methods)(cmem(p))
		if m.FiVersion >= 2 && m.FxShmBarrier != 0 && m.FxShmLock != 0 {
			t = libc.Xcalloc(tls, 1, types.Size_t(unsafe.Sizeof(dbTable{})))
		}
		if t != 0 {
			*(*dbTable)(cmem(t)) = dbTable{methods: m, barrier: m.FxShmBarrier, shmLock: m.FxShmLock}
			(*dbTable)(cmem(t)).methods.FxShmBarrier = cfunc(&fnBarrier)
			(*dbTable)(cmem(t)).methods.FxShmLock = cfunc(&fnShmLock)
		}
		dbTables[p] = t
	}
	if t == 0 {
		return nil
	}
	return (*dbTable)(cmem(t))
}

// walBarrier writes out every log's gathered bytes, then is the unix VFS's
// barrier: SQLite asks for it between the two copies of the log index's
// header it writes when it commits, so that no connection reads of frames
// that are not yet in the file.
func walBarrier(tls *libc.TLS, pFile uintptr) {
	flushAll(tls)
	t := (*dbTable)(cmem(cfile(pFile).FpMethods))
	gofunc[func(*libc.TLS, uintptr)](t.barrier)(tls, pFile)
}

// walShmLock is the unix VFS's xShmLock, but that every log's gathered bytes
// are written out before the log's write lock (slot 0) is let go.
func walShmLock(tls *libc.TLS, pFile uintptr, ofst, n, flags int32) int32 {
	if flags == lib.SQLITE_SHM_UNLOCK|lib.SQLITE_SHM_EXCLUSIVE && ofst == 0 && n > 0 {
		flushAll(tls)
	}
	t := (*dbTable)(cmem(cfile(pFile).FpMethods))
	return gofunc[func(*libc.TLS, uintptr, int32, int32, int32) int32](t.shmLock)(tls, pFile, ofst, n, flags)
}

// flushAll writes out the gathered bytes of every log that has any. Only the
// connection holding a log's write lock gathers bytes for it, and writing
// them early is always safe; a failed write is kept for the log's next call.
func flushAll(tls *libc.TLS) {
	if walPending.Load() == 0 {
		return
	}
	walFiles.Range(func(_, v any) bool {
		f := v.(*walFile)
		f.mu.Lock()
		if rc := f.flush(tls); rc != lib.SQLITE_OK && f.err == lib.SQLITE_OK {
			f.err = rc
		}
		f.mu.Unlock()
		return true
	})
}

func walOf(pFile uintptr) *walFile {
	v, _ := walFiles.Load(*(*uintptr)(cmem(pFile + 8)))
	return v.(*walFile)
}

// flush hands the gathered bytes to the file system; f.mu is held.
func (f *walFile) flush(tls *libc.TLS) int32 {
	if f.n == 0 {
		return lib.SQLITE_OK
	}
	write := gofunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxWrite)
	rc := int32(lib.SQLITE_OK)
	for done := 0; done < f.n && rc == lib.SQLITE_OK; {
		n := min(f.n-done, walWriteMax)
		rc = write(tls, f.inner, f.mem+uintptr(done), int32(n), f.off+int64(done))
		walFlushed.Add(1)
		done += n
	}
	f.n = 0
	walPending.Add(-1)
	return rc
}

// settle writes out the gathered bytes and returns the first failed write
// not yet reported; f.mu is held.
func (f *walFile) settle(tls *libc.TLS) int32 {
	rc := f.flush(tls)
	if f.err != lib.SQLITE_OK {
		rc, f.err = f.err, lib.SQLITE_OK
	}
	return rc
}

func walWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := walOf(pFile)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != lib.SQLITE_OK {
		return f.settle(tls)
	}
	walWrites.Add(1)
	if iAmt > walBufCap-walBufMax { // larger than any page: written as it comes
		if rc := f.flush(tls); rc != lib.SQLITE_OK {
			return rc
		}
		return gofunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxWrite)(tls, f.inner, zBuf, iAmt, iOfst)
	}
	data := unsafe.Slice((*byte)(cmem(zBuf)), iAmt)
	end := f.off + int64(f.n)
	switch {
	case f.n > 0 && iOfst >= f.off && iOfst+int64(iAmt) <= end: // over gathered bytes
		copy(f.buffer()[iOfst-f.off:], data)
		return lib.SQLITE_OK
	case f.n > 0 && iOfst == end: // right after them
	default:
		if rc := f.flush(tls); rc != lib.SQLITE_OK {
			return rc
		}
		f.off = iOfst
	}
	if f.mem == 0 {
		if f.mem = libc.Xmalloc(tls, walBufCap); f.mem == 0 {
			return lib.SQLITE_NOMEM
		}
	}
	if f.n == 0 {
		walPending.Add(1)
	}
	f.n += copy(f.buffer()[f.n:], data)
	if f.n >= walBufMax {
		return f.flush(tls)
	}
	return lib.SQLITE_OK
}

func walRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := walOf(pFile)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n > 0 && iOfst < f.off+int64(f.n) && iOfst+int64(iAmt) > f.off {
		if rc := f.flush(tls); rc != lib.SQLITE_OK {
			return rc
		}
	}
	return gofunc[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.methods.FxRead)(tls, f.inner, zBuf, iAmt, iOfst)
}

// settled calls the unix VFS on f's file once its gathered bytes are written.
func settled(tls *libc.TLS, pFile uintptr, call func(f *walFile) int32) int32 {
	f := walOf(pFile)
	f.mu.Lock()
	defer f.mu.Unlock()
	if rc := f.settle(tls); rc != lib.SQLITE_OK {
		return rc
	}
	return call(f)
}

// locked calls the unix VFS on f's file, which has nothing to do with the
// gathered bytes.
func locked(pFile uintptr, call func(f *walFile) int32) int32 {
	f := walOf(pFile)
	f.mu.Lock()
	defer f.mu.Unlock()
	return call(f)
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	return settled(tls, pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxSync)(tls, f.inner, flags)
	})
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	return settled(tls, pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr, int64) int32](f.methods.FxTruncate)(tls, f.inner, size)
	})
}

func walFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	return settled(tls, pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr, uintptr) int32](f.methods.FxFileSize)(tls, f.inner, pSize)
	})
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	return settled(tls, pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr, int32, uintptr) int32](f.methods.FxFileControl)(tls, f.inner, op, pArg)
	})
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	h := *(*uintptr)(cmem(pFile + 8))
	f := walOf(pFile)
	f.mu.Lock()
	defer f.mu.Unlock()
	rc := f.settle(tls)
	walFiles.Delete(h)
	if f.mem != 0 {
		libc.Xfree(tls, f.mem)
		f.mem = 0
	}
	if rc2 := gofunc[func(*libc.TLS, uintptr) int32](f.methods.FxClose)(tls, f.inner); rc == lib.SQLITE_OK {
		rc = rc2
	}
	return rc
}

func walLock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	return locked(pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxLock)(tls, f.inner, lock)
	})
}

func walUnlock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	return locked(pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr, int32) int32](f.methods.FxUnlock)(tls, f.inner, lock)
	})
}

func walCheckReservedLock(tls *libc.TLS, pFile, pResOut uintptr) int32 {
	return locked(pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr, uintptr) int32](f.methods.FxCheckReservedLock)(tls, f.inner, pResOut)
	})
}

func walSectorSize(tls *libc.TLS, pFile uintptr) int32 {
	return locked(pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr) int32](f.methods.FxSectorSize)(tls, f.inner)
	})
}

func walDeviceCharacteristics(tls *libc.TLS, pFile uintptr) int32 {
	return locked(pFile, func(f *walFile) int32 {
		return gofunc[func(*libc.TLS, uintptr) int32](f.methods.FxDeviceCharacteristics)(tls, f.inner)
	})
}
