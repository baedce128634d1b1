package extract

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// The PDF library trusts numbers from the file: object numbers in the
// cross-reference sections size its tables (a 600-byte file can make it
// allocate terabytes, which kills the process), a /Prev loop or an /Extends
// loop keeps it reading forever, and its lexer spins forever on a hex string
// left open at the end of an object stream. checkPDFXref reads the same
// structures first, following the library's own parsing, and rejects files
// that would trigger any of that. Where the library would fail cleanly on
// its own, the check lets the file through for the library to reject.

// Limits of the cross-reference check.
const (
	// maxPDFObjects caps object numbers (for small files, size+64Ki).
	maxPDFObjects = 1 << 21
	// maxXrefSections caps the /Prev chain.
	maxXrefSections = 256
	// maxObjStms caps the object streams of a document.
	maxObjStms = 100_000
	// maxObjStmN caps the objects in one object stream.
	maxObjStmN = 100_000
	// maxObjStmBytes caps one decoded object stream, maxObjStmTotal all of
	// them.
	maxObjStmBytes = 32 << 20
	maxObjStmTotal = 256 << 20
	// maxPredictorColumns caps /Columns of a PNG predictor.
	maxPredictorColumns = 1 << 16
)

// errUnsafePDF marks files refused by the cross-reference check.
var errUnsafePDF = errors.New("malformed pdf")

func unsafePDF(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUnsafePDF, fmt.Sprintf(format, args...))
}

// pval is a parsed PDF object.
type pval struct {
	kind int // tokNum, tokName, tokString, tokOp, tokRef, tokArrOpen (array), tokDictOpen (dictionary) or tokEOF
	num  float64
	s    string
	arr  []pval
	dict map[string]pval
}

// int returns v as an integer, if it is one.
func (v pval) int() (int64, bool) {
	if v.kind != tokNum || v.num != math.Trunc(v.num) || math.Abs(v.num) > 1<<53 {
		return 0, false
	}
	return int64(v.num), true
}

// objParser parses PDF objects from the file.
type objParser struct {
	lx   *pdfLexer
	back []pdfTok
}

func newObjParser(ra io.ReaderAt, off, size int64) *objParser {
	sr := io.NewSectionReader(ra, off, size-off)
	return &objParser{lx: &pdfLexer{r: bufio.NewReaderSize(sr, 4096)}}
}

func (p *objParser) next() pdfTok {
	if n := len(p.back); n > 0 {
		t := p.back[n-1]
		p.back = p.back[:n-1]
		return t
	}
	return p.lx.next()
}

func (p *objParser) unread(t pdfTok) { p.back = append(p.back, t) }

// value parses one object.
func (p *objParser) value(depth int) (pval, error) {
	if depth > 64 {
		return pval{}, unsafePDF("objects nested too deeply")
	}
	t := p.next()
	switch t.kind {
	case tokNum:
		t2 := p.next()
		if t2.kind == tokNum {
			t3 := p.next()
			if t3.kind == tokOp && t3.s == "R" {
				return pval{kind: tokRef, num: t.num}, nil
			}
			p.unread(t3)
		}
		p.unread(t2)
	case tokDictOpen:
		d := map[string]pval{}
		for {
			k := p.next()
			if k.kind == tokDictClose || k.kind == tokEOF {
				return pval{kind: tokDictOpen, dict: d}, nil
			}
			if k.kind != tokName {
				continue
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return pval{}, err
			}
			if len(d) < 4096 {
				d[k.s] = v
			}
		}
	case tokArrOpen:
		var a []pval
		for {
			e := p.next()
			if e.kind == tokArrClose || e.kind == tokEOF {
				return pval{kind: tokArrOpen, arr: a}, nil
			}
			p.unread(e)
			v, err := p.value(depth + 1)
			if err != nil {
				return pval{}, err
			}
			if len(a) < 1<<16 {
				a = append(a, v)
			}
		}
	}
	return pval{kind: t.kind, num: t.num, s: t.s}, nil
}

// streamStart reads the "stream" keyword and its end of line after a
// stream dictionary and returns the offset of the data (relative to where
// p started), as the library does.
func (p *objParser) streamStart() (int64, bool) {
	if len(p.back) != 0 {
		return 0, false
	}
	if t := p.next(); t.kind != tokOp || t.s != "stream" || len(p.back) != 0 {
		return 0, false
	}
	c, ok := p.lx.readByte()
	switch {
	case ok && c == '\r':
		if n, ok := p.lx.peekByte(); ok && n == '\n' {
			p.lx.readByte()
		}
	case ok && c == '\n':
	default:
		return 0, false
	}
	return p.lx.pos, true
}

// findLastLine is the library's search for the last line holding s.
func findLastLine(buf []byte, s string) int {
	bs := []byte(s)
	max := len(buf)
	for {
		i := bytes.LastIndex(buf[:max], bs)
		if i <= 0 || i+len(bs) >= len(buf) {
			return -1
		}
		if (buf[i-1] == '\n' || buf[i-1] == '\r') && (buf[i+len(bs)] == '\n' || buf[i+len(bs)] == '\r') {
			return i
		}
		max = i
	}
}

// xrefCheck holds what checkPDFXref learnt of the cross-reference data.
type xrefCheck struct {
	ra        io.ReaderAt
	size      int64
	maxObj    int64
	kinds     []byte  // per object: 0 unknown, 'f' free, 'n' at an offset, 'c' in an object stream
	vals      []int64 // offset ('n') or object stream number ('c')
	encrypted bool
}

// checkPDFXref refuses PDFs whose cross-reference data or object streams
// would make the library allocate without bound or never finish.
func checkPDFXref(ra io.ReaderAt, size int64) error {
	const endChunk = 100 // as the library reads it
	if size < endChunk {
		return nil
	}
	buf := make([]byte, endChunk)
	if _, err := ra.ReadAt(buf, size-endChunk); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read pdf: %w", err)
	}
	buf = bytes.TrimRight(buf, "\r\n\t ")
	if !bytes.HasSuffix(buf, []byte("%%EOF")) {
		return nil
	}
	i := findLastLine(buf, "startxref")
	if i < 0 {
		return nil
	}
	p := newObjParser(ra, size-endChunk+int64(i), size)
	if t := p.next(); t.kind != tokOp || t.s != "startxref" {
		return nil
	}
	off, ok := p.value0().int()
	if !ok {
		return nil
	}
	x := &xrefCheck{ra: ra, size: size, maxObj: min(size+1<<16, maxPDFObjects)}
	return x.check(off)
}

// value0 reads one token as a value, without looking for references.
func (p *objParser) value0() pval {
	t := p.next()
	return pval{kind: t.kind, num: t.num, s: t.s}
}

// check follows the chain of cross-reference sections from off.
func (x *xrefCheck) check(off int64) error {
	seen := map[int64]bool{}
	streams := false
	for n := 0; ; n++ {
		if n == maxXrefSections {
			return unsafePDF("more than %d cross-reference sections", maxXrefSections)
		}
		if seen[off] {
			return unsafePDF("cross-reference sections loop")
		}
		seen[off] = true
		if off < 0 || off >= x.size {
			return nil
		}
		prev, isStream, ok, err := x.section(off, n == 0)
		if err != nil || !ok {
			return err
		}
		streams = streams || isStream
		if prev.kind == tokEOF {
			break
		}
		if off, ok = prev.int(); !ok {
			return nil
		}
	}
	if streams {
		return x.objectStreams()
	}
	return nil
}

// section checks one cross-reference section and returns its /Prev. ok is
// false when the library will reject the section by itself.
func (x *xrefCheck) section(off int64, newest bool) (prev pval, isStream, ok bool, err error) {
	p := newObjParser(x.ra, off, x.size)
	t := p.next()
	switch {
	case t.kind == tokOp && t.s == "xref":
		prev, ok, err = x.table(p, newest)
		return prev, false, ok, err
	case t.kind == tokNum:
		prev, ok, err = x.stream(p, off, newest)
		return prev, true, ok, err
	}
	return pval{}, false, false, nil
}

// table checks a cross-reference table and its trailer.
func (x *xrefCheck) table(p *objParser, newest bool) (prev pval, ok bool, err error) {
	for {
		t := p.next()
		if t.kind == tokOp && t.s == "trailer" {
			break
		}
		start, ok1 := pval{kind: t.kind, num: t.num}.int()
		n, ok2 := p.value0().int()
		if !ok1 || !ok2 {
			return pval{}, false, nil
		}
		if start < 0 || n < 0 || start+n > x.maxObj {
			return pval{}, false, unsafePDF("cross-reference subsection %d+%d out of range", start, n)
		}
		for i := int64(0); i < 3*n; i++ {
			if p.next().kind == tokEOF {
				return pval{}, false, nil
			}
		}
	}
	trailer, err := p.value(0)
	if err != nil || trailer.kind != tokDictOpen {
		return pval{}, false, err
	}
	if _, enc := trailer.dict["Encrypt"]; enc && newest {
		x.encrypted = true
	}
	return x.prev(trailer), true, nil
}

func (x *xrefCheck) prev(d pval) pval {
	if v, ok := d.dict["Prev"]; ok {
		return v
	}
	return pval{kind: tokEOF}
}

// stream checks a cross-reference stream and records its entries.
func (x *xrefCheck) stream(p *objParser, off int64, newest bool) (prev pval, ok bool, err error) {
	if p.next().kind != tokNum {
		return pval{}, false, nil
	}
	if t := p.next(); t.kind != tokOp || t.s != "obj" {
		return pval{}, false, nil
	}
	d, err := p.value(0)
	if err != nil || d.kind != tokDictOpen || d.dict["Type"].s != "XRef" {
		return pval{}, false, err
	}
	if _, enc := d.dict["Encrypt"]; enc && newest {
		x.encrypted = true
	}
	size, ok := d.dict["Size"].int()
	if !ok {
		return pval{}, false, nil
	}
	if size < 0 || size > x.maxObj {
		return pval{}, false, unsafePDF("cross-reference stream /Size %d out of range", size)
	}
	ww := d.dict["W"]
	if ww.kind != tokArrOpen || len(ww.arr) < 3 {
		return pval{}, false, nil
	}
	if len(ww.arr) > 32 {
		return pval{}, false, unsafePDF("cross-reference stream /W too long")
	}
	var w []int
	wtotal := 0
	for _, e := range ww.arr {
		n, ok := e.int()
		if !ok {
			return pval{}, false, nil
		}
		if n < 0 || n > 8 {
			return pval{}, false, unsafePDF("cross-reference stream /W entry %d out of range", n)
		}
		w = append(w, int(n))
		wtotal += int(n)
	}
	index := []int64{0, size}
	if ix, present := d.dict["Index"]; present && ix.kind == tokArrOpen {
		if len(ix.arr)%2 != 0 {
			return pval{}, false, nil
		}
		index = index[:0]
		for _, e := range ix.arr {
			n, ok := e.int()
			if !ok {
				return pval{}, false, nil
			}
			index = append(index, n)
		}
	}
	for i := 0; i < len(index); i += 2 {
		if start, n := index[i], index[i+1]; start < 0 || n < 0 || start+n > x.maxObj {
			return pval{}, false, unsafePDF("cross-reference stream subsection %d+%d out of range", start, n)
		}
	}
	dataOff, ok := p.streamStart()
	if !ok {
		return pval{}, false, nil
	}
	length, ok := d.dict["Length"].int()
	if !ok {
		// The library cannot resolve a reference before it has a table: it
		// reads the stream as empty.
		length = 0
	}
	rd, status, err := x.decoder(d, off+dataOff, length)
	if err != nil {
		return pval{}, false, err
	}
	if status != decodeOK {
		return pval{}, false, nil
	}
	buf := make([]byte, wtotal)
	field := func(b []byte) int64 {
		var v int64
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return v
	}
	for i := 0; i < len(index); i += 2 {
		for j := int64(0); j < index[i+1]; j++ {
			if _, err := io.ReadFull(rd, buf); err != nil {
				return pval{}, false, nil
			}
			typ := field(buf[:w[0]])
			if w[0] == 0 {
				typ = 1
			}
			x.record(index[i]+j, typ, field(buf[w[0]:w[0]+w[1]]))
		}
	}
	return x.prev(d), true, nil
}

// record notes the entry of object num unless a newer section gave one.
func (x *xrefCheck) record(num, typ, val int64) {
	if typ < 0 || typ > 2 {
		return
	}
	if num >= int64(len(x.kinds)) {
		n := int(num + 1)
		x.kinds = append(x.kinds, make([]byte, n-len(x.kinds))...)
		x.vals = append(x.vals, make([]int64, n-len(x.vals))...)
	}
	if x.kinds[num] != 0 {
		return
	}
	x.kinds[num] = "fnc"[typ]
	x.vals[num] = val
}

// Results of decoder.
const (
	decodeOK         = iota
	decodeLibFails   // the library fails on this stream by itself
	decodeUnverified // the library reads it but the check cannot
)

// decoder returns a reader of the decoded data of the stream with
// dictionary d, mirroring the library's filters: FlateDecode (with no
// predictor or PNG Up) and no filter.
func (x *xrefCheck) decoder(d pval, off, length int64) (io.Reader, int, error) {
	var filters, parms []pval
	switch f := d.dict["Filter"]; f.kind {
	case tokEOF: // absent
	case tokName:
		filters, parms = []pval{f}, []pval{d.dict["DecodeParms"]}
	case tokArrOpen:
		filters = f.arr
		parms = d.dict["DecodeParms"].arr
	default:
		return nil, decodeLibFails, nil
	}
	var rd io.Reader = io.NewSectionReader(x.ra, off, max(length, 0))
	if length == 0 {
		rd = bytes.NewReader(nil)
		filters = nil
	}
	for i, f := range filters {
		var parm pval
		if i < len(parms) {
			parm = parms[i]
		}
		switch f.s {
		case "FlateDecode":
			zr, err := zlib.NewReader(rd)
			if err != nil {
				return nil, decodeLibFails, nil
			}
			rd = zr
			pred, present := parm.dict["Predictor"]
			if !present {
				continue
			}
			if p, _ := pred.int(); p != 12 {
				return nil, decodeLibFails, nil
			}
			cols, _ := parm.dict["Columns"].int()
			if cols < 0 || cols > maxPredictorColumns {
				return nil, 0, unsafePDF("predictor /Columns %d out of range", cols)
			}
			rd = &pngUp{r: rd, hist: make([]byte, 1+cols), tmp: make([]byte, 1+cols)}
		case "ASCII85Decode":
			return nil, decodeUnverified, nil
		default:
			return nil, decodeLibFails, nil
		}
	}
	return rd, decodeOK, nil
}

// pngUp undoes the PNG Up predictor exactly as the library does.
type pngUp struct {
	r    io.Reader
	hist []byte
	tmp  []byte
	pend []byte
}

func (p *pngUp) Read(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		if len(p.pend) > 0 {
			m := copy(b, p.pend)
			n += m
			b = b[m:]
			p.pend = p.pend[m:]
			continue
		}
		if _, err := io.ReadFull(p.r, p.tmp); err != nil {
			return n, err
		}
		if p.tmp[0] != 2 {
			return n, errors.New("malformed PNG-Up encoding")
		}
		for i, c := range p.tmp {
			p.hist[i] += c
		}
		p.pend = p.hist[1:]
	}
	return n, nil
}

// objectStreams checks every object stream that the cross-reference
// streams point into, and those they extend.
func (x *xrefCheck) objectStreams() error {
	set := map[int64]bool{}
	for i, k := range x.kinds {
		if k == 'c' {
			set[x.vals[i]] = true
			if len(set) > maxObjStms {
				return unsafePDF("more than %d object streams", maxObjStms)
			}
		}
	}
	queue := make([]int64, 0, len(set))
	for id := range set {
		queue = append(queue, id)
	}
	sort.Slice(queue, func(i, j int) bool { return queue[i] > queue[j] })
	seen := map[int64]bool{}
	total := int64(maxObjStmTotal)
	for len(queue) > 0 {
		id := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		if len(seen) > maxObjStms {
			return unsafePDF("more than %d object streams", maxObjStms)
		}
		if id < 0 || id >= int64(len(x.kinds)) {
			continue // unknown: the library fails to resolve it
		}
		switch x.kinds[id] {
		case 'c':
			return unsafePDF("object stream %d stored in an object stream", id)
		case 'n':
			ext, err := x.objectStream(id, x.vals[id], &total)
			if err != nil {
				return err
			}
			if ext >= 0 {
				queue = append(queue, ext)
			}
		}
	}
	return nil
}

// objectStream checks the object stream numbered id at offset off and
// returns the number of the stream it extends, or -1.
func (x *xrefCheck) objectStream(id, off int64, total *int64) (ext int64, err error) {
	ext = -1
	if off < 0 || off >= x.size {
		return ext, nil
	}
	p := newObjParser(x.ra, off, x.size)
	if n, ok := p.value0().int(); !ok || n != id {
		return ext, nil // the library fails: "found ... instead"
	}
	if p.next().kind != tokNum {
		return ext, nil
	}
	if t := p.next(); t.kind != tokOp || t.s != "obj" {
		return ext, nil
	}
	d, err := p.value(0)
	if err != nil || d.kind != tokDictOpen {
		return ext, err
	}
	dataOff, ok := p.streamStart()
	if !ok {
		return ext, nil // not a stream: the library fails
	}
	if typ := d.dict["Type"]; typ.kind == tokName && typ.s != "ObjStm" {
		return ext, nil // the library fails: "not an object stream"
	}
	if e := d.dict["Extends"]; e.kind == tokRef {
		ext = int64(e.num)
	}
	n, ok := d.dict["N"].int()
	if !ok && d.dict["N"].kind != tokEOF {
		return ext, unsafePDF("object stream %d: unsupported /N", id)
	}
	if n < 0 || n > maxObjStmN {
		return ext, unsafePDF("object stream %d: /N %d out of range", id, n)
	}
	if x.encrypted {
		return ext, nil // the data is encrypted; nothing more to check
	}
	length, err := x.length(id, d.dict["Length"])
	if err != nil {
		return ext, err
	}
	rd, status, err := x.decoder(d, off+dataOff, length)
	switch {
	case err != nil:
		return ext, err
	case status == decodeLibFails:
		return ext, nil
	case status == decodeUnverified:
		return ext, unsafePDF("object stream %d: unsupported filter", id)
	}
	limit := min(int64(maxObjStmBytes), *total)
	buf := make([]byte, 32<<10)
	var pos int64
	lastLT, lastGT := int64(-1), int64(-1)
	for {
		m, err := rd.Read(buf)
		for i, c := range buf[:m] {
			switch c {
			case '<':
				lastLT = pos + int64(i)
			case '>':
				lastGT = pos + int64(i)
			}
		}
		pos += int64(m)
		if pos > limit {
			return ext, unsafePDF("object streams too large")
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ext, nil // the library fails on a read error
		}
	}
	*total -= pos
	if lastLT > lastGT {
		return ext, unsafePDF("object stream %d: unterminated hex string", id)
	}
	return ext, nil
}

// length returns the /Length of object stream id, resolving a reference to
// an object stored at an offset.
func (x *xrefCheck) length(id int64, v pval) (int64, error) {
	if n, ok := v.int(); ok {
		return n, nil
	}
	if v.kind != tokRef {
		return 0, nil // the library reads it as 0
	}
	num := int64(v.num)
	if num < 0 || num >= int64(len(x.kinds)) || x.kinds[num] != 'n' {
		return 0, unsafePDF("object stream %d: unsupported /Length", id)
	}
	off := x.vals[num]
	if off < 0 || off >= x.size {
		return 0, unsafePDF("object stream %d: unsupported /Length", id)
	}
	p := newObjParser(x.ra, off, x.size)
	p.next()
	p.next()
	if t := p.next(); t.kind != tokOp || t.s != "obj" {
		return 0, unsafePDF("object stream %d: unsupported /Length", id)
	}
	n, ok := p.value0().int()
	if !ok {
		return 0, unsafePDF("object stream %d: unsupported /Length", id)
	}
	return n, nil
}
