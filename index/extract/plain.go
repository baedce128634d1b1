package extract

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// textInput wraps r for text formats: it caps the bytes read, fails once ctx
// is done and converts the content to UTF-8 (from UTF-16 when it starts with
// a byte order mark or the charset says so, from Windows-1252 when the
// charset says Latin-1), dropping a UTF-8 byte order mark.
func textInput(ctx context.Context, r io.Reader, size int64, charset string) (io.Reader, error) {
	budget := int64(maxTextInput)
	br := bufio.NewReaderSize(multiCap(&ctxReader{ctx: ctx, r: r}, &budget), bufFor(size, 32<<10))
	bom, err := br.Peek(3)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read: %w", err)
	}
	switch {
	case len(bom) >= 3 && bom[0] == 0xEF && bom[1] == 0xBB && bom[2] == 0xBF:
		br.Discard(3)
		return br, nil
	case len(bom) >= 2 && bom[0] == 0xFF && bom[1] == 0xFE:
		br.Discard(2)
		return &utf16Reader{r: br, little: true}, nil
	case len(bom) >= 2 && bom[0] == 0xFE && bom[1] == 0xFF:
		br.Discard(2)
		return &utf16Reader{r: br}, nil
	}
	switch charset {
	case "utf-16le":
		return &utf16Reader{r: br, little: true}, nil
	case "utf-16", "utf-16be":
		return &utf16Reader{r: br}, nil
	case "iso-8859-1", "iso8859-1", "latin1", "l1", "windows-1252", "cp1252", "us-ascii", "ascii":
		return &cp1252Reader{r: br}, nil
	}
	return br, nil
}

// extractPlain copies text content to w.
func extractPlain(ctx context.Context, r io.Reader, size int64, charset string, w *textWriter) error {
	in, err := textInput(ctx, r, size, charset)
	if err != nil {
		return err
	}
	buf := make([]byte, bufFor(size, 32<<10))
	carry := 0 // bytes of an incomplete rune kept at the start of buf
	for {
		n, err := in.Read(buf[carry:])
		n += carry
		carry = 0
		if n > 0 {
			chunk := buf[:n]
			if err == nil {
				carry = incompleteTail(chunk)
				chunk = chunk[:n-carry]
			}
			if _, werr := w.Write(chunk); werr != nil {
				return werr
			}
			copy(buf, buf[n-carry:n])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
	}
}

// incompleteTail returns how many bytes at the end of p are the start of a
// UTF-8 sequence that continues past p.
func incompleteTail(p []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(p); i++ {
		c := p[len(p)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(p[len(p)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// utf16Reader converts UTF-16 to UTF-8.
type utf16Reader struct {
	r      *bufio.Reader
	little bool
	out    []byte
	err    error
}

func (u *utf16Reader) unit() (uint16, error) {
	a, err := u.r.ReadByte()
	if err != nil {
		return 0, err
	}
	b, err := u.r.ReadByte()
	if err != nil {
		return 0, err
	}
	if u.little {
		return uint16(b)<<8 | uint16(a), nil
	}
	return uint16(a)<<8 | uint16(b), nil
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) < len(p) && len(u.out) < 4096 && u.err == nil {
		c, err := u.unit()
		if err != nil {
			u.err = err
			break
		}
		r := rune(c)
		if utf16.IsSurrogate(r) {
			c2, err := u.unit()
			if err != nil {
				u.err = err
				r = utf8.RuneError
			} else {
				r = utf16.DecodeRune(r, rune(c2))
			}
		}
		u.out = utf8.AppendRune(u.out, r)
	}
	if len(u.out) == 0 {
		return 0, u.err
	}
	n := copy(p, u.out)
	u.out = u.out[:copy(u.out, u.out[n:])]
	return n, nil
}

// cp1252High maps Windows-1252 bytes 0x80–0x9F; the rest of the code page
// equals Latin-1.
var cp1252High = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}

// cp1252Reader converts Windows-1252 (a superset of Latin-1 in practice) to
// UTF-8.
type cp1252Reader struct {
	r   io.Reader
	in  []byte
	out []byte
}

func (c *cp1252Reader) Read(p []byte) (int, error) {
	if len(c.out) == 0 {
		if c.in == nil {
			c.in = make([]byte, 4096)
		}
		n, err := c.r.Read(c.in)
		for _, b := range c.in[:n] {
			switch {
			case b < 0x80:
				c.out = append(c.out, b)
			case b < 0xA0:
				c.out = utf8.AppendRune(c.out, cp1252High[b-0x80])
			default:
				c.out = utf8.AppendRune(c.out, rune(b))
			}
		}
		if len(c.out) == 0 {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[:copy(c.out, c.out[n:])]
	return n, nil
}

// htmlSkip lists elements whose content is not text for a reader.
var htmlSkip = map[string]bool{
	"script": true, "style": true, "template": true, "noscript": true,
	"iframe": true, "noembed": true, "noframes": true, "object": true,
	"svg": true, "math": true,
}

// htmlBlock lists elements that break lines.
var htmlBlock = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true,
	"br": true, "caption": true, "dd": true, "div": true, "dl": true,
	"dt": true, "fieldset": true, "figcaption": true, "figure": true,
	"footer": true, "form": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "header": true, "hr": true,
	"li": true, "main": true, "nav": true, "ol": true, "option": true,
	"p": true, "pre": true, "section": true, "table": true, "title": true,
	"tr": true, "ul": true, "body": true, "html": true, "summary": true,
	"details": true, "textarea": true, "label": true, "button": true,
}

// htmlCell lists elements that separate words without breaking lines.
var htmlCell = map[string]bool{"td": true, "th": true, "img": true, "input": true, "select": true}

// maxHTMLToken caps the size of one HTML token (a long text run or an
// inline script); on reaching it extraction stops with what it has.
const maxHTMLToken = 8 << 20

// extractHTML copies the visible text of an HTML document to w, without
// tags, scripts or styles, with character references decoded.
func extractHTML(ctx context.Context, r io.Reader, size int64, charset string, w *textWriter) error {
	in, err := textInput(ctx, r, size, charset)
	if err != nil {
		return err
	}
	z := html.NewTokenizer(in)
	z.SetMaxBuf(maxHTMLToken)
	skip := 0 // depth inside skipped elements
	for i := 0; ; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			switch {
			case errors.Is(err, io.EOF):
				return nil
			case errors.Is(err, html.ErrBufferExceeded):
				return errCapped
			}
			return fmt.Errorf("parse html: %w", err)
		case html.TextToken:
			if skip == 0 {
				if _, err := w.Write(z.Text()); err != nil {
					return err
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if htmlSkip[tag] {
				switch {
				case tt == html.StartTagToken:
					skip++
				case tt == html.EndTagToken && skip > 0:
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch {
			case htmlBlock[tag]:
				w.newline()
			case htmlCell[tag]:
				w.space()
			}
		}
	}
}
