package extract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// PDF limits, besides maxPDFSize.
const (
	// maxPDFDecoded caps the decompressed content-stream bytes read from
	// one document, and maxPDFPageDecoded from one page.
	maxPDFDecoded     = 256 << 20
	maxPDFPageDecoded = 64 << 20
	// maxPDFNodes caps the page-tree nodes visited, maxPDFTreeDepth the
	// depth of the page tree.
	maxPDFNodes     = 100_000
	maxPDFTreeDepth = 64
	// maxPDFForms caps the form XObjects run per page and maxPDFFormDepth
	// their nesting.
	maxPDFForms     = 256
	maxPDFFormDepth = 8
	// maxCMapBytes caps a font's ToUnicode CMap; fonts with larger ones are
	// read without it.
	maxCMapBytes = 256 << 10
	// maxPDFString caps one string operand in a content stream.
	maxPDFString = 64 << 10
)

// pdfSlots bounds the PDF parses running at once. A parse holds its slot
// until its goroutine ends, even after Text has returned on cancellation,
// so a parser stuck in the library cannot pile up goroutines.
var pdfSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// extractPDF reads the text of a PDF document, page by page.
//
// Parsing runs in its own goroutine so that Text returns as soon as ctx is
// done even if the third-party parser is busy; the goroutine's reads fail
// from then on, which makes it stop soon after.
func extractPDF(ctx context.Context, r io.Reader, size int64, w *textWriter) error {
	src, tooBig, err := openSource(ctx, r, size, maxPDFSize)
	if err != nil {
		return err
	}
	if tooBig {
		return nil
	}
	defer src.close()
	if err := checkPDFXref(src.ra, src.size); err != nil {
		return err
	}
	select {
	case pdfSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-pdfSlots }()
		done <- readPDF(ctx, src, w)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readPDF opens the document and walks its page tree. It turns panics from
// the parser into errors.
func readPDF(ctx context.Context, src *source, w *textWriter) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("malformed pdf: %v", v)
		}
	}()
	rd, err := pdf.NewReader(&ctxReaderAt{ctx: ctx, ra: src.ra}, src.size)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("open pdf: %w", err)
	}
	x := &pdfExtractor{ctx: ctx, w: w, docBudget: maxPDFDecoded}
	return x.walk(rd.Trailer().Key("Root").Key("Pages"))
}

// pdfExtractor holds the state of one document's extraction.
type pdfExtractor struct {
	ctx        context.Context
	w          *textWriter
	docBudget  int64 // decompressed bytes left for the document
	pageBudget int64 // decompressed bytes left for the current page
	forms      int   // form XObjects run on the current page
}

// walk visits the page tree depth first, in page order, passing inherited
// resources down (rather than following Parent links, which may loop).
func (x *pdfExtractor) walk(root pdf.Value) error {
	if root.Kind() != pdf.Dict {
		return errors.New("malformed pdf: no page tree")
	}
	type node struct {
		v     pdf.Value
		res   pdf.Value
		depth int
	}
	stack := []node{{v: root}}
	var firstErr error
	for visits := 0; len(stack) > 0 && visits < maxPDFNodes; visits++ {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.v.Kind() != pdf.Dict {
			continue
		}
		res := n.v.Key("Resources")
		if res.Kind() != pdf.Dict {
			res = n.res
		}
		kids := n.v.Key("Kids")
		if typ := n.v.Key("Type").Name(); typ == "Pages" || typ != "Page" && kids.Kind() == pdf.Array {
			if n.depth >= maxPDFTreeDepth {
				continue
			}
			room := maxPDFNodes - visits - len(stack)
			for i := min(kids.Len(), room) - 1; i >= 0; i-- {
				stack = append(stack, node{v: kids.Index(i), res: res, depth: n.depth + 1})
			}
			continue
		}
		err := x.page(n.v, res)
		x.w.newline()
		switch {
		case errors.Is(err, errFull), errors.Is(err, errCapped), x.ctx.Err() != nil:
			return err
		case err != nil && firstErr == nil:
			firstErr = err
		}
	}
	if firstErr != nil && x.w.Len() == 0 {
		return firstErr
	}
	return nil
}

// page reads the text of one page.
func (x *pdfExtractor) page(page, res pdf.Value) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("malformed pdf page: %v", v)
		}
	}()
	x.pageBudget = maxPDFPageDecoded
	x.forms = 0
	return x.content(page.Key("Contents"), res, 0, latin1Encoding{})
}

// content runs a content stream (or array of streams) with the given
// resources and initial font decoder, writing the text it shows.
func (x *pdfExtractor) content(strm, res pdf.Value, depth int, enc pdf.TextEncoding) error {
	var readers []io.Reader
	switch strm.Kind() {
	case pdf.Stream:
		if !safeParams(strm) {
			return errors.New("malformed pdf: bad stream parameters")
		}
		readers = append(readers, strm.Reader())
	case pdf.Array:
		for i := 0; i < strm.Len() && i < 4096; i++ {
			if s := strm.Index(i); s.Kind() == pdf.Stream {
				if !safeParams(s) {
					return errors.New("malformed pdf: bad stream parameters")
				}
				readers = append(readers, s.Reader(), strings.NewReader("\n"))
			}
		}
	default:
		return nil
	}
	in := multiCap(io.MultiReader(readers...), &x.pageBudget, &x.docBudget)
	lx := &pdfLexer{r: bufio.NewReaderSize(in, 16<<10)}
	st := &pdfState{res: res, fonts: map[string]pdf.TextEncoding{}, enc: enc}
	err := x.run(lx, st, depth)
	if err == nil && lx.err != nil {
		err = lx.err
	}
	if errors.Is(err, errCapped) && x.docBudget > 0 {
		return nil // this page's budget is spent; go on with the next
	}
	return err
}

// pdfState is the interpreter state of one content stream.
type pdfState struct {
	res    pdf.Value
	fonts  map[string]pdf.TextEncoding
	enc    pdf.TextEncoding
	saved  []pdf.TextEncoding // fonts saved by q
	lastY  float64
	haveY  bool
	params []pdfOperand
}

// pdfOperand is an operand of a content-stream operator.
type pdfOperand struct {
	pdfTok
	arr []pdfTok // elements of an array operand
}

// run interprets the text operators of a content stream.
func (x *pdfExtractor) run(lx *pdfLexer, st *pdfState, depth int) error {
	var (
		arr     []pdfTok
		inArr   int // array nesting depth
		inDict  int // dictionary nesting depth
		maxArgs = 32
	)
	push := func(op pdfOperand) {
		if len(st.params) == maxArgs {
			st.params = append(st.params[:0], st.params[1:]...)
		}
		st.params = append(st.params, op)
	}
	for i := 0; ; i++ {
		if i%4096 == 0 {
			if err := x.ctx.Err(); err != nil {
				return err
			}
		}
		t := lx.next()
		switch t.kind {
		case tokEOF:
			return nil
		case tokDictOpen:
			inDict++
			continue
		case tokDictClose:
			if inDict > 0 {
				inDict--
				if inDict == 0 && inArr == 0 {
					push(pdfOperand{pdfTok: pdfTok{kind: tokDictOpen}})
				}
			}
			continue
		}
		if inDict > 0 {
			continue
		}
		switch t.kind {
		case tokArrOpen:
			if inArr == 0 {
				arr = arr[:0]
			}
			inArr++
			continue
		case tokArrClose:
			if inArr > 0 {
				inArr--
				if inArr == 0 {
					push(pdfOperand{pdfTok: pdfTok{kind: tokArrOpen}, arr: append([]pdfTok(nil), arr...)})
				}
			}
			continue
		}
		if inArr > 0 {
			if t.kind != tokOp && len(arr) < 8192 {
				arr = append(arr, t)
			}
			continue
		}
		if t.kind != tokOp {
			push(pdfOperand{pdfTok: t})
			continue
		}
		err := x.op(lx, st, t.s, depth)
		st.params = st.params[:0]
		if err != nil {
			return err
		}
	}
}

// op runs one operator with the operands in st.params.
func (x *pdfExtractor) op(lx *pdfLexer, st *pdfState, op string, depth int) error {
	args := st.params
	arg := func(i int) pdfOperand { // i-th operand from the end
		if i < len(args) {
			return args[len(args)-1-i]
		}
		return pdfOperand{}
	}
	w := x.w
	switch op {
	case "BT", "T*":
		w.newline()
	case "Tf":
		if f := arg(1); f.kind == tokName {
			st.enc = x.font(st, f.s)
		}
	case "Td", "TD":
		if arg(0).num != 0 {
			w.newline()
		} else {
			w.space()
		}
	case "Tm":
		y := arg(0).num
		if st.haveY && y != st.lastY {
			w.newline()
		} else {
			w.space()
		}
		st.lastY, st.haveY = y, true
	case "Tj":
		return x.show(st.enc, arg(0))
	case "'", "\"":
		w.newline()
		return x.show(st.enc, arg(0))
	case "TJ":
		a := arg(0)
		for _, e := range a.arr {
			switch {
			case e.kind == tokString:
				if err := x.show(st.enc, pdfOperand{pdfTok: e}); err != nil {
					return err
				}
			case e.kind == tokNum && e.num < -200:
				w.space()
			}
		}
	case "q":
		if len(st.saved) < 64 {
			st.saved = append(st.saved, st.enc)
		}
	case "Q":
		if n := len(st.saved); n > 0 {
			st.enc = st.saved[n-1]
			st.saved = st.saved[:n-1]
		}
	case "Do":
		if n := arg(0); n.kind == tokName && depth < maxPDFFormDepth && x.forms < maxPDFForms {
			xobj := st.res.Key("XObject").Key(n.s)
			if xobj.Kind() == pdf.Stream && xobj.Key("Subtype").Name() == "Form" {
				x.forms++
				res := xobj.Key("Resources")
				if res.Kind() != pdf.Dict {
					res = st.res
				}
				if err := x.content(xobj, res, depth+1, st.enc); err != nil {
					return err
				}
			}
		}
	case "BI":
		lx.skipInlineImage()
	}
	return nil
}

// show writes a string operand decoded with enc, in chunks so that a slow
// decoder still notices cancellation.
func (x *pdfExtractor) show(enc pdf.TextEncoding, s pdfOperand) error {
	if s.kind != tokString {
		return nil
	}
	raw := s.s
	for len(raw) > 0 {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		n := min(len(raw), 512)
		if err := x.w.WriteString(decode(enc, raw[:n])); err != nil {
			return err
		}
		raw = raw[n:]
	}
	return nil
}

// decode decodes raw with enc, or returns "" if enc panics.
func decode(enc pdf.TextEncoding, raw string) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return enc.Decode(raw)
}

// font returns the text decoder of the named font resource.
func (x *pdfExtractor) font(st *pdfState, name string) pdf.TextEncoding {
	if enc, ok := st.fonts[name]; ok {
		return enc
	}
	enc := x.encoder(st.res.Key("Font").Key(name))
	if len(st.fonts) < 1024 {
		st.fonts[name] = enc
	}
	return enc
}

// encoder builds the text decoder of a font dictionary. It only lets the
// library parse encodings it handles safely: a ToUnicode CMap that is too
// large or that would make the library's lexer loop, or an oversized
// Differences array, is not used.
func (x *pdfExtractor) encoder(font pdf.Value) (enc pdf.TextEncoding) {
	defer func() {
		if recover() != nil {
			enc = dropEncoding{}
		}
	}()
	if font.Kind() != pdf.Dict {
		return latin1Encoding{}
	}
	composite := font.Key("Subtype").Name() == "Type0"
	e := font.Key("Encoding")
	switch e.Kind() {
	case pdf.Dict:
		if e.Key("Differences").Len() > 1024 {
			return latin1Encoding{}
		}
	case pdf.Name:
		switch e.Name() {
		case "WinAnsiEncoding", "MacRomanEncoding", "UniGB-UCS2-H":
		case "Identity-H":
			if !x.cmapOK(font.Key("ToUnicode")) {
				return dropEncoding{}
			}
		default:
			if composite {
				return dropEncoding{}
			}
			return latin1Encoding{}
		}
	case pdf.Null:
		if tu := font.Key("ToUnicode"); tu.Kind() == pdf.Stream && !x.cmapOK(tu) {
			if composite {
				return dropEncoding{}
			}
			return latin1Encoding{}
		}
	default:
		return latin1Encoding{}
	}
	f := pdf.Font{V: font}
	return f.Encoder()
}

// cmapOK reports whether a ToUnicode CMap stream is small and safe for the
// library's CMap parser, whose lexer spins forever on a hex string left open
// at the end of the stream (so every '<' must be followed by a '>' later
// on), and which loops as many times as the counts in the CMap say (so no
// number may be large).
func (x *pdfExtractor) cmapOK(cmap pdf.Value) bool {
	if cmap.Kind() != pdf.Stream || !safeParams(cmap) {
		return false
	}
	budget := int64(maxCMapBytes)
	data, err := io.ReadAll(multiCap(cmap.Reader(), &budget, &x.docBudget))
	if err != nil || budget <= 0 {
		return false
	}
	if lt := bytes.LastIndexByte(data, '<'); lt >= 0 && lt > bytes.LastIndexByte(data, '>') {
		return false
	}
	lx := &pdfLexer{r: bufio.NewReader(bytes.NewReader(data))}
	for t := lx.next(); t.kind != tokEOF; t = lx.next() {
		if t.kind == tokNum && (t.num > 100_000 || t.num < -100_000) {
			return false
		}
	}
	return true
}

// safeParams reports whether the library can be trusted to open the
// stream: it allocates a PNG predictor row of /Columns bytes unchecked.
func safeParams(strm pdf.Value) bool {
	ok := func(parm pdf.Value) bool {
		c := parm.Key("Columns")
		return c.Kind() == pdf.Null || c.Int64() >= 0 && c.Int64() <= maxPredictorColumns
	}
	switch p := strm.Key("DecodeParms"); p.Kind() {
	case pdf.Dict:
		return ok(p)
	case pdf.Array:
		if p.Len() > 32 {
			return false
		}
		for i := 0; i < p.Len(); i++ {
			if !ok(p.Index(i)) {
				return false
			}
		}
	}
	return true
}

// latin1Encoding decodes single-byte text as Windows-1252.
type latin1Encoding struct{}

func (latin1Encoding) Decode(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(cp1252High[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// dropEncoding is used for fonts whose text cannot be decoded.
type dropEncoding struct{}

func (dropEncoding) Decode(string) string { return "" }

// Content-stream token kinds.
const (
	tokEOF = iota
	tokNum
	tokString
	tokName
	tokOp
	tokArrOpen
	tokArrClose
	tokDictOpen
	tokDictClose
	tokRef // an indirect reference "N G R", parsed by objParser only
)

// pdfTok is a content-stream token.
type pdfTok struct {
	kind int
	num  float64
	s    string
}

// pdfLexer splits a content stream into tokens. Unlike the library's lexer
// it is total: it never panics and always ends at the end of its input.
type pdfLexer struct {
	r   *bufio.Reader
	err error // first read error other than io.EOF
	pos int64 // bytes consumed
	buf []byte
}

func (l *pdfLexer) readByte() (byte, bool) {
	c, err := l.r.ReadByte()
	if err != nil {
		if !errors.Is(err, io.EOF) && l.err == nil {
			l.err = err
		}
		return 0, false
	}
	l.pos++
	return c, true
}

func (l *pdfLexer) peekByte() (byte, bool) {
	p, err := l.r.Peek(1)
	if err != nil {
		return 0, false
	}
	return p[0], true
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	return strings.IndexByte("()<>[]{}/%", c) >= 0
}

// next returns the next token, or a tokEOF token at the end of the input.
func (l *pdfLexer) next() pdfTok {
	for {
		c, ok := l.readByte()
		if !ok {
			return pdfTok{kind: tokEOF}
		}
		switch {
		case isPDFSpace(c), c == ')', c == '{', c == '}':
		case c == '%':
			for ok && c != '\n' && c != '\r' {
				c, ok = l.readByte()
			}
		case c == '(':
			return pdfTok{kind: tokString, s: l.literal()}
		case c == '<':
			if p, ok := l.peekByte(); ok && p == '<' {
				l.readByte()
				return pdfTok{kind: tokDictOpen}
			}
			return pdfTok{kind: tokString, s: l.hex()}
		case c == '>':
			if p, ok := l.peekByte(); ok && p == '>' {
				l.readByte()
				return pdfTok{kind: tokDictClose}
			}
		case c == '[':
			return pdfTok{kind: tokArrOpen}
		case c == ']':
			return pdfTok{kind: tokArrClose}
		case c == '/':
			return pdfTok{kind: tokName, s: l.name()}
		default:
			word := l.regular(c)
			if strings.IndexByte("+-.0123456789", word[0]) >= 0 {
				f, _ := strconv.ParseFloat(word, 64)
				return pdfTok{kind: tokNum, num: f}
			}
			return pdfTok{kind: tokOp, s: word}
		}
	}
}

// regular reads a run of regular characters starting with c.
func (l *pdfLexer) regular(c byte) string {
	l.buf = append(l.buf[:0], c)
	for len(l.buf) < 256 {
		p, ok := l.peekByte()
		if !ok || isPDFSpace(p) || isPDFDelim(p) {
			break
		}
		l.readByte()
		l.buf = append(l.buf, p)
	}
	return string(l.buf)
}

// name reads a name after its '/', decoding #xx escapes.
func (l *pdfLexer) name() string {
	l.buf = l.buf[:0]
	for len(l.buf) < 256 {
		p, ok := l.peekByte()
		if !ok || isPDFSpace(p) || isPDFDelim(p) {
			break
		}
		l.readByte()
		if p == '#' {
			if h, err := l.r.Peek(2); err == nil && unhex(h[0]) >= 0 && unhex(h[1]) >= 0 {
				p = byte(unhex(h[0])<<4 | unhex(h[1]))
				l.r.Discard(2)
				l.pos += 2
			}
		}
		l.buf = append(l.buf, p)
	}
	return string(l.buf)
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// literal reads a literal string after its '('.
func (l *pdfLexer) literal() string {
	l.buf = l.buf[:0]
	add := func(c byte) {
		if len(l.buf) < maxPDFString {
			l.buf = append(l.buf, c)
		}
	}
	for depth := 1; ; {
		c, ok := l.readByte()
		if !ok {
			break
		}
		switch c {
		case '(':
			depth++
			add(c)
			continue
		case ')':
			if depth--; depth == 0 {
				return string(l.buf)
			}
			add(c)
			continue
		case '\\':
		default:
			add(c)
			continue
		}
		c, ok = l.readByte()
		if !ok {
			break
		}
		switch c {
		case 'n':
			add('\n')
		case 'r':
			add('\r')
		case 't':
			add('\t')
		case 'b':
			add('\b')
		case 'f':
			add('\f')
		case '\r':
			if p, ok := l.peekByte(); ok && p == '\n' {
				l.readByte()
			}
		case '\n':
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for i := 0; i < 2; i++ {
				p, ok := l.peekByte()
				if !ok || p < '0' || p > '7' {
					break
				}
				l.readByte()
				v = v*8 + int(p-'0')
			}
			add(byte(v))
		default:
			add(c)
		}
	}
	return string(l.buf)
}

// hex reads a hex string after its '<'.
func (l *pdfLexer) hex() string {
	l.buf = l.buf[:0]
	half := -1
	for {
		c, ok := l.readByte()
		if !ok || c == '>' {
			break
		}
		d := unhex(c)
		if d < 0 {
			continue
		}
		if half < 0 {
			half = d
			continue
		}
		if len(l.buf) < maxPDFString {
			l.buf = append(l.buf, byte(half<<4|d))
		}
		half = -1
	}
	if half >= 0 && len(l.buf) < maxPDFString {
		l.buf = append(l.buf, byte(half<<4))
	}
	return string(l.buf)
}

// skipInlineImage skips an inline image after its BI operator: the
// dictionary up to ID, then the data up to an EI surrounded by white space.
func (l *pdfLexer) skipInlineImage() {
	for i := 0; ; i++ {
		t := l.next()
		if t.kind == tokEOF {
			return
		}
		if t.kind == tokOp && t.s == "ID" {
			break
		}
		if t.kind == tokOp && t.s == "EI" || i > 4096 {
			return
		}
	}
	l.readByte() // the single white-space byte after ID
	prev2, prev1 := byte(' '), byte(0)
	for {
		c, ok := l.readByte()
		if !ok {
			return
		}
		if isPDFSpace(prev2) && prev1 == 'E' && c == 'I' {
			if p, ok := l.peekByte(); !ok || isPDFSpace(p) || isPDFDelim(p) {
				return
			}
		}
		prev2, prev1 = prev1, c
	}
}
